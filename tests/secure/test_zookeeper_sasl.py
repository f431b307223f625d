"""hbrep as a Kerberos (SASL GSSAPI) client of a ZooKeeper that demands SASL of every session.

The configuration is HBase's: ``hbase.security.authentication=kerberos``, ``hbase.client.kerberos.principal``,
``hbase.client.keytab.file``. Znodes hbrep creates are readable and writable by its Kerberos identity only
(``sasl:hbrep``); the refusals (no ticket, a wrong principal, a keytab that cannot be read) are one line and
leave ZooKeeper as it was.
"""

from __future__ import annotations

import json
import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, SessionClosedRequireSaslError
from kazoo.security import ACL, Id, Permissions

from replication.kerberos import KerberosError
from replication.zk.client import connected, zk_options
from replication.zk.layout import ZNodePaths
from tests.badinput.helpers import error_line, hbrep

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster_key(kerberized_zk) -> str:
    """A fresh cluster key on the Kerberized ZooKeeper with peer 1 added by ``hbrep add_peer`` as hbrep."""
    key = f"127.0.0.1:{kerberized_zk.zookeeper.port}:/hbase-{uuid.uuid4().hex[:8]}"
    added = hbrep("--cluster", key, "add_peer", "1", "zk9:2181:/hbase-b", "--state", "DISABLED",
                  env=kerberized_zk.cli_env())  # fmt: skip
    assert added.returncode == 0, added.stderr
    return key


def _peer_ids(kerberized_zk, key: str) -> list[str]:
    listed = hbrep("--cluster", key, "list_peers", "--json", env=kerberized_zk.cli_env())
    assert listed.returncode == 0, listed.stderr
    return sorted(str(peer["PEER_ID"]) for peer in json.loads(listed.stdout))


def test_hbrep_commands_authenticate_with_kerberos_and_their_znodes_belong_to_its_identity(kerberized_zk, cluster_key):
    assert _peer_ids(kerberized_zk, cluster_key) == ["1"]
    paths = ZNodePaths(parent=cluster_key.rsplit(":", 1)[1])
    owner_only = [ACL(Permissions.ALL, Id("sasl", "hbrep"))]
    conf = kerberized_zk.conf()
    with connected(cluster_key, **zk_options(conf)) as zk:
        assert zk.get_acls(paths.peer("1"))[0] == owner_only
        assert zk.get_acls(paths.peer_state("1"))[0] == owner_only

    # another principal of the realm authenticates, but the znodes are not its own
    with connected(cluster_key, **zk_options(kerberized_zk.conf(kerberized_zk.intruder))) as zk:
        with pytest.raises(NoAuthError):
            zk.get(paths.peer("1"))
        with pytest.raises(NoAuthError):
            zk.set(paths.peer_state("1"), b"PBUF\x08\x00")
    denied = hbrep("--cluster", cluster_key, "enable_peer", "1", env=kerberized_zk.cli_env(kerberized_zk.intruder))
    assert error_line(denied).startswith(f"hbrep: error: ZooKeeper denied access to {paths.peer('1')} (ACL)")
    assert _peer_ids(kerberized_zk, cluster_key) == ["1"]


def test_refusals_are_one_line_and_nothing_is_written(kerberized_zk, cluster_key, tmp_path):
    hbrep_keytab = str(kerberized_zk.hbrep.path)
    not_a_keytab = tmp_path / "notes.txt"
    not_a_keytab.write_text("not a keytab")
    cases = {
        "no ticket": (
            {"hbase_client_kerberos_principal": "", "hbase_client_keytab_file": ""},
            "hbrep: error: no Kerberos ticket (No Kerberos credentials available (default cache: FILE:"
            f"{kerberized_zk.kdc.state_dir / 'no-cache'})): run kinit, or set hbase.client.keytab.file and "
            "hbase.client.kerberos.principal",
        ),
        "wrong principal": (
            {"hbase_client_kerberos_principal": "hbase/127.0.0.1@HBREP.TEST"},
            f"hbrep: error: Kerberos login as hbase/127.0.0.1@HBREP.TEST from keytab {hbrep_keytab} "
            "(hbase.client.keytab.file) failed: no key or ticket for hbase/127.0.0.1@HBREP.TEST "
            "(hbase.client.kerberos.principal)",
        ),
        "keytab unreadable": (
            {"hbase_client_keytab_file": str(tmp_path / "missing.keytab")},
            f"hbrep: error: cannot read the keytab {tmp_path / 'missing.keytab'} (hbase.client.keytab.file): "
            "No such file or directory",
        ),
        "not a keytab": (
            {"hbase_client_keytab_file": str(not_a_keytab)},
            f"hbrep: error: {not_a_keytab} (hbase.client.keytab.file) is not a keytab file",
        ),
    }
    for case, (changes, expected) in cases.items():
        refused = hbrep("--cluster", cluster_key, "add_peer", "2", "zk9:2181:/hbase-c",
                        env=kerberized_zk.cli_env(**changes))  # fmt: skip
        assert error_line(refused) == expected, case
    assert _peer_ids(kerberized_zk, cluster_key) == ["1"]


def test_a_command_without_kerberos_is_told_that_zookeeper_demands_it(kerberized_zk, cluster_key):
    env = kerberized_zk.cli_env(hbase_security_authentication="simple")
    refused = hbrep("--cluster", cluster_key, "list_peers", env=env)
    assert error_line(refused) == (
        f"hbrep: error: ZooKeeper at 127.0.0.1:{kerberized_zk.zookeeper.port} demands Kerberos (SASL): set "
        "hbase.security.authentication=kerberos, hbase.client.kerberos.principal and hbase.client.keytab.file"
    )


def test_a_keytab_without_its_principal_is_a_configuration_error(kerberized_zk, cluster_key):
    refused = hbrep(
        "--cluster", cluster_key, "list_peers", env=kerberized_zk.cli_env(hbase_client_kerberos_principal="")
    )
    assert error_line(refused) == (
        "hbrep: error: hbase.client.keytab.file is set but hbase.client.kerberos.principal (whose keys it holds) is not"
    )


def test_the_library_refuses_before_connecting_and_a_client_without_kerberos_gets_no_session(
    kerberized_zk, cluster_key
):
    conf = kerberized_zk.conf(hbase_client_kerberos_principal="nobody@HBREP.TEST")
    with (
        pytest.raises(KerberosError, match=r"no key or ticket for nobody@HBREP\.TEST"),
        connected(cluster_key, **zk_options(conf)),
    ):
        pass  # pragma: no cover - the refusal comes first
    plain = KazooClient(hosts=kerberized_zk.zookeeper.hosts)
    plain.start(timeout=15)
    try:
        with pytest.raises(SessionClosedRequireSaslError):
            plain.get_children("/")
    finally:
        plain.stop()
        plain.close()
