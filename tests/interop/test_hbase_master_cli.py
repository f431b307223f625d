"""hbrep's MasterService client on a running real HBase 2.6 (issues 43 and 49), judged by HBase's own Admin
(the AdminTool) and Thrift: table DDL takes effect at once; bad input (an unknown table or peer, a peer
that exists, a procedure the master refuses, the master down, peer modification switched off) is one
line, a non-zero exit and nothing changed; hbrep's and HBase's own peer commands interleave on the same
and on different peer ids with every command finishing within seconds, both listing the same peers
after each step and no peer procedure left running; and a cluster wedged by a peer znode written
behind the master's back is found and repaired by ``hbase_peer_doctor``.

Every test shares the session's one real HBase (tests/interop/conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from interop.helpers import HBREP, hbrep, hbrep_json

from replication.hbase.registry import MasterAddress, master_znode_bytes
from replication.net import free_port
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow

HBREP_COMMAND_S = 20  # an hbrep command on a real HBase: one RPC and a procedure of a second or two
ADMIN_TOOL_S = 90  # an AdminTool run: a JVM start (most of it) and one Admin call


def run(*args: str, cluster: str) -> subprocess.CompletedProcess:
    """``hbrep --cluster CLUSTER ARGS`` as it exits (no assertion)."""
    return subprocess.run([*HBREP, "--cluster", cluster, *args], capture_output=True, text=True, check=False)


def refused(*args: str, cluster: str, says: str) -> str:
    """Run an hbrep command that must fail: exit non-zero with one ``hbrep: error:`` line containing ``says``."""
    done = run(*args, cluster=cluster)
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0, f"hbrep {' '.join(args)} succeeded: {done.stdout}"
    assert len(lines) == 1 and lines[0].startswith("hbrep: error: "), done.stderr
    assert says in lines[0], lines[0]
    return lines[0]


def timed(action, limit_s: float, what: str):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    result = action()
    took = time.monotonic() - started
    assert took < limit_s, f"{what} took {took:.1f}s"
    return result


def admin_peers(real_hbase, *args: str) -> dict[str, dict]:
    """An AdminTool peer command (or ``peers``), timed; the peers HBase's Admin lists after it, by id."""
    listed = timed(lambda: real_hbase.admin(*(args or ("peers",))), ADMIN_TOOL_S, f"AdminTool {args}")
    return {p["id"]: p for p in listed}


def hbrep_step(cluster: str, *args: str) -> None:
    timed(lambda: hbrep(*args, cluster=cluster), HBREP_COMMAND_S, f"hbrep {' '.join(args)}")


def assert_same_peers(cluster: str, hbase: dict[str, dict]) -> None:
    """hbrep lists exactly HBase's peers, each row what the HBase shell's list_peers shows, and the master
    has no peer procedure left unfinished."""
    ours = {row["PEER_ID"]: row for row in hbrep_json("list_peers", cluster=cluster)}
    assert ours == {pid: p["shell_row"] for pid, p in hbase.items()}
    doctor = run("hbase_peer_doctor", "--json", cluster=cluster)
    assert doctor.returncode == 0 and json.loads(doctor.stdout)["healthy"], doctor.stdout + doctor.stderr


def test_table_ddl_takes_effect_on_hbase_at_once(real_hbase):
    cluster = real_hbase.layout().cluster_key
    table = f"ddl_{uuid.uuid4().hex[:6]}"
    hbrep("create_table", table, "a:1", "b", cluster=cluster)
    assert real_hbase.admin("table-exists", table)["exists"] is True
    assert hbrep("exists", table, cluster=cluster).strip() == "true"
    assert table in hbrep_json("list", cluster=cluster)
    hbrep("alter", table, "--family", "b", "--scope", "1", cluster=cluster)
    described = hbrep_json("describe", table, cluster=cluster)
    assert {f["name"]: f["scope"] for f in described["families"]} == {"a": 1, "b": 1}
    assert {(r["table"], r["family"]) for r in hbrep_json("list_replicated_tables", cluster=cluster)} >= {
        (table, "a"), (table, "b")
    }  # fmt: skip
    connection = real_hbase.happybase_connection()
    try:
        connection.table(table).put(b"r1", {b"a:q": b"v"})
        hbrep("truncate", table, cluster=cluster)
        assert list(connection.table(table).scan()) == []
        assert connection.is_table_enabled(table)
        hbrep("disable", table, cluster=cluster)
        assert not connection.is_table_enabled(table)
        assert hbrep("is_enabled", table, cluster=cluster).strip() == "false"
        hbrep("enable", table, cluster=cluster)
        assert connection.is_table_enabled(table)
    finally:
        connection.close()
    refused("drop", table, cluster=cluster, says="TableNotDisabledException")  # the master's procedure refuses
    assert real_hbase.admin("table-exists", table)["exists"] is True
    hbrep("disable", table, cluster=cluster)
    hbrep("drop", table, cluster=cluster)
    assert real_hbase.admin("table-exists", table)["exists"] is False
    assert hbrep("exists", table, cluster=cluster).strip() == "false"


def test_bad_input_is_one_line_and_changes_nothing(real_hbase, tmp_path):
    cluster = real_hbase.layout().cluster_key
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    peer_id, table = f"b{uuid.uuid4().hex[:6]}", f"bad_{uuid.uuid4().hex[:6]}"
    hbrep("add_peer", peer_id, elsewhere, "--state", "DISABLED", "--table-cfs", "t1", cluster=cluster)
    hbrep("create_table", table, "a", cluster=cluster)
    try:
        before = admin_peers(real_hbase)
        refused(
            "add_peer", peer_id, elsewhere + "2", cluster=cluster, says=f"Replication peer {peer_id} already exists"
        )
        for command in (("enable_peer",), ("disable_peer",), ("remove_peer",), ("get_peer_config",),
                        ("set_peer_bandwidth", "5")):  # fmt: skip
            refused(command[0], "nosuchpeer", *command[1:], cluster=cluster, says="peer nosuchpeer does not exist")
        refused("describe", "nosuchtable", cluster=cluster, says="TableNotFoundException")
        refused("disable", "nosuchtable", cluster=cluster, says="TableNotFoundException")
        refused("alter", table, "--family", "zz", "--scope", "1", cluster=cluster, says="no column family 'zz'")
        refused("create_table", table, "a", cluster=cluster, says="TableExistsException")
        # hbrep names its version as a 2.x client, so the master answers a peer procedure with its id and the
        # failure comes with the procedure's result (GetProcedureResult): the "failed:" line is the procedure's
        refused("enable_peer", "nosuchpeer", cluster=cluster, says="enable_peer nosuchpeer failed: peer nosuchpeer")
        refused("set_peer_exclude_namespaces", peer_id, "ns1", cluster=cluster, says="replicate_all flag is false")
        hbrep("peer_modification_switch", "off", cluster=cluster)
        try:
            assert hbrep("peer_modification_enabled", cluster=cluster).strip() == "false"
            refused("enable_peer", peer_id, cluster=cluster, says="Replication peer modification disabled")
        finally:
            hbrep("peer_modification_switch", "on", cluster=cluster)
        assert admin_peers(real_hbase) == before  # nothing changed
        assert real_hbase.admin("table-exists", table)["exists"] is True
    finally:
        hbrep("remove_peer", peer_id, cluster=cluster)
        hbrep("disable", table, cluster=cluster)
        hbrep("drop", table, cluster=cluster)


def test_a_real_hbase_whose_master_is_down_refuses_every_peer_command(real_hbase):
    """A parent HBase left (its ``running`` znode, a stale ``master`` znode naming a port nothing listens
    on): one line naming the cluster key, and no peer znode written."""
    zk_port = real_hbase.layout().zk_port
    key = ClusterKey.parse(f"127.0.0.1:{zk_port}:/hbase-down-{uuid.uuid4().hex[:6]}")
    with connected(key) as zk:
        zk.create(f"{key.znode_parent}/running", b"", makepath=True)
        try:
            for args in (("add_peer", "1", "127.0.0.1:1:/x"), ("remove_peer", "1"), ("enable_peer", "1"),
                         ("list_peers",), ("set_peer_bandwidth", "1", "5"), ("create_table", "t", "a")):  # fmt: skip
                refused(*args, cluster=str(key), says=f"no active HBase master at {key}")
            zk.create(f"{key.znode_parent}/master", master_znode_bytes(MasterAddress("127.0.0.1", free_port(), 1)))
            refused("add_peer", "1", "127.0.0.1:1:/x", cluster=str(key), says=f"no active HBase master at {key}")
            assert not zk.exists(ZNodePaths(parent=key.znode_parent).peers)
        finally:
            zk.delete(key.znode_parent, recursive=True)


def test_hbrep_and_hbases_own_peer_commands_interleave(real_hbase):
    """Issue 49: hbrep's and HBase's own peer commands in both orders on one id and on different ids."""
    cluster = real_hbase.layout().cluster_key
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    tag = uuid.uuid4().hex[:6]
    same, other = f"s{tag}", f"o{tag}"
    hbrep_step(cluster, "add_peer", same, elsewhere, "--state", "DISABLED", "--table-cfs", "t1:a")
    assert_same_peers(cluster, admin_peers(real_hbase))
    hbase = admin_peers(real_hbase, "enable-peer", same)
    assert hbase[same]["is_enabled"] is True
    assert_same_peers(cluster, hbase)
    hbrep_step(cluster, "disable_peer", same)
    hbase = admin_peers(real_hbase)
    assert hbase[same]["is_enabled"] is False
    assert_same_peers(cluster, hbase)
    hbase = admin_peers(real_hbase, "add-peer", json.dumps({"id": other, "cluster_key": elsewhere + "2",
                                                            "enabled": False}))  # fmt: skip
    assert_same_peers(cluster, hbase)
    hbrep_step(cluster, "set_peer_bandwidth", other, "4096")
    hbrep_step(cluster, "update_peer_config", other, "--config", "k=v")
    hbrep_step(cluster, "enable_peer", other)
    hbase = admin_peers(real_hbase)
    assert hbase[other]["config"]["bandwidth"] == 4096 and hbase[other]["config"]["configuration"] == {"k": "v"}
    assert hbase[other]["is_enabled"] is True
    assert_same_peers(cluster, hbase)
    hbase = admin_peers(real_hbase, "disable-peer", other)
    assert_same_peers(cluster, hbase)
    hbase = admin_peers(real_hbase, "remove-peer", same)  # hbrep added it, HBase removes it
    assert same not in hbase
    assert_same_peers(cluster, hbase)
    hbrep_step(cluster, "add_peer", same, elsewhere)  # the id again, after HBase removed it
    hbrep_step(cluster, "remove_peer", other)  # HBase added it, hbrep removes it
    hbase = admin_peers(real_hbase)
    assert same in hbase and other not in hbase and hbase[same]["is_enabled"] is True
    assert_same_peers(cluster, hbase)
    hbase = admin_peers(real_hbase, "remove-peer", same)
    assert not {same, other} & set(hbase)
    assert_same_peers(cluster, hbase)


def test_a_peer_znode_written_behind_the_masters_back_is_found_and_repaired(real_hbase, tmp_path):
    """Issue 49's wedge: a peer znode the master does not know (what older hbrep wrote) makes HBase's
    AddPeerProcedure for that id retry forever; hbase_peer_doctor names the znode and the procedure,
    ``--fix`` removes the znode, and the procedure then finishes: the master lists the peer."""
    cluster = real_hbase.layout().cluster_key
    key = ClusterKey.parse(cluster)
    peer_id = f"w{uuid.uuid4().hex[:6]}"
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    paths = ZNodePaths(parent=key.znode_parent)
    with connected(key) as zk:  # the znodes written directly, as hbrep did before issue 49
        ReplicationPeerStorage(zk, paths).add_peer(peer_id, ReplicationPeerConfig(elsewhere), enabled=False)
    doctor = run("hbase_peer_doctor", cluster=cluster)
    assert doctor.returncode == 3 and f"{paths.peer(peer_id)} exists but the master does not know" in doctor.stdout
    site = Path(tmp_path, "short-rpc.xml")
    site.write_text(
        "<configuration><property><name>hbase.rpc.timeout</name><value>5000</value></property></configuration>"
    )
    done = subprocess.run([*HBREP, "--cluster", cluster, "--conf", str(site), "add_peer", peer_id, elsewhere],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode != 0 and "hbase_peer_doctor" in done.stderr, done.stderr
    found = json.loads(run("hbase_peer_doctor", "--json", cluster=cluster).stdout)
    assert peer_id in found["orphan_znodes"]
    assert [p["class"] for p in found["unfinished_procedures"]] == ["AddPeerProcedure"]
    fixed = run("hbase_peer_doctor", "--fix", "--json", cluster=cluster)
    assert json.loads(fixed.stdout)["removed"] == [peer_id]
    deadline = time.monotonic() + 240
    while run("hbase_peer_doctor", cluster=cluster).returncode != 0:
        assert time.monotonic() < deadline, "the AddPeerProcedure did not finish after the znode was removed"
        time.sleep(5)
    try:
        hbase = admin_peers(real_hbase)
        assert peer_id in hbase
        assert_same_peers(cluster, hbase)
    finally:
        hbrep("remove_peer", peer_id, cluster=cluster)


def test_a_shadow_peer_is_added_and_removed_through_the_master(real_hbase):
    """add_peer --shadow / remove_peer with hbrep's own RPC client (no JDK): HBase's Admin sees the peer
    DISABLED and marked at once, enable_peer refuses it, remove_peer removes it."""
    cluster = real_hbase.layout().cluster_key
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    peer_id = f"sh{uuid.uuid4().hex[:6]}"
    hbrep("add_peer", peer_id, elsewhere, "--shadow", "--rootdir", real_hbase.rootdir_uri, cluster=cluster)
    try:
        hbase = admin_peers(real_hbase)
        assert hbase[peer_id]["is_enabled"] is False
        assert hbase[peer_id]["config"]["configuration"] == {"hbrep.peer.shadow": "true"}
        refused("enable_peer", peer_id, cluster=cluster, says="is a shadow peer")
    finally:
        hbrep("remove_peer", peer_id, cluster=cluster)
    assert peer_id not in admin_peers(real_hbase)


def test_hbase_masters_are_tried_in_order(real_hbase, tmp_path):
    """``hbase.masters`` (MasterRegistry's setting): a listed master that is down is skipped; the first that
    answers serves the command."""
    cluster = real_hbase.layout().cluster_key
    site = Path(tmp_path, "masters.xml")
    masters = f"127.0.0.1:{free_port()},127.0.0.1:{real_hbase.layout().master_port}"
    site.write_text(f"<configuration><property><name>hbase.masters</name><value>{masters}</value></property>"
                    "</configuration>")  # fmt: skip
    done = subprocess.run([*HBREP, "--cluster", cluster, "--conf", str(site), "list_peers", "--json"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {r["PEER_ID"] for r in json.loads(done.stdout)} == set(admin_peers(real_hbase))


def test_a_kerberos_client_at_a_simple_hbase_is_refused_unless_fallback_is_allowed(real_hbase, tmp_path, monkeypatch):
    """The reverse of tests/secure/test_hbase_rpc_kerberos.py: the session's HBase is SIMPLE, answers the KERBEROS
    preamble with SWITCH_TO_SIMPLE_AUTH, and hbrep refuses that in one line unless
    hbase.ipc.client.fallback-to-simple-auth-allowed (a KDC of the test's own issues the service ticket)."""
    from replication.cluster.hbase_rpc.rpc_kerberos import rpc_kerberos
    from replication.config import Config
    from replication.devstack.kdc import MitKdc
    from replication.hbase.master_admin import MasterAdmin
    from replication.kerberos import KerberosError

    kdc = MitKdc(tmp_path / "kdc")
    kdc.start()
    try:
        for name, value in {**kdc.env(), "KRB5CCNAME": "", "KRB5_CLIENT_KTNAME": ""}.items():
            monkeypatch.setenv(name, value)  # restored after the test (login() changes the last two)
        kdc.add_principal("hbase/127.0.0.1")
        client = kdc.add_principal("hbrep/127.0.0.1")
        keys = {
            "hbase.security.authentication": "kerberos",
            "hbase.client.kerberos.principal": client.principal,
            "hbase.client.keytab.file": str(client.path),
            "hbase.master.kerberos.principal": f"hbase/127.0.0.1@{kdc.realm}",
        }
        layout = real_hbase.layout()
        master, key = MasterAddress("127.0.0.1", layout.master_port), ClusterKey.parse(layout.cluster_key)
        strict = rpc_kerberos(Config.load(env={}, overrides=keys))
        admin = MasterAdmin(master, key, rpc_timeout_s=30, kerberos=strict)
        with pytest.raises(KerberosError) as refused:
            admin.is_master_running()
        admin.close()
        line = str(refused.value)
        assert line.startswith(f"127.0.0.1:{layout.master_port} does not use Kerberos"), line
        assert "hbase.ipc.client.fallback-to-simple-auth-allowed=true" in line and "\n" not in line, line
        lenient = rpc_kerberos(
            Config.load(env={}, overrides={**keys, "hbase.ipc.client.fallback-to-simple-auth-allowed": "true"})
        )
        admin = MasterAdmin(master, key, rpc_timeout_s=30, kerberos=lenient)
        try:
            assert admin.is_master_running()
            assert isinstance(admin.list_replication_peers(), list)
        finally:
            admin.close()
    finally:
        kdc.stop()
