"""HBase's RPC TLS (``hbase.client.netty.tls.*`` / ``hbase.rpc.tls.*``) on hbrep's HBase RPC client, against one
real HBase 2.6 per module serving TLS only (``hbase.server.netty.tls.enabled``, no plain text, client
certificates demanded as HBase does by default): hbrep's master and table commands work over TLS and agree with
HBase's own Java client (AdminTool, Thrift); a client trusting another CA, a client whose host name is not in
the server's certificate, and a plain-text client are each refused with one line naming the server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from support import one_error_line

from replication.cluster.hbase_rpc.tls import client_context
from replication.config import Config
from replication.devstack.hbase import HBaseTls, RealHBase, make_tls
from replication.devstack.tls_ca import ThrowAwayCA
from replication.hbase.master_admin import MasterAdmin
from replication.hbase.registry import MasterAddress, NoActiveMaster
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey

pytestmark = pytest.mark.slow

HBREP = [sys.executable, "-m", "replication.cli"]


@pytest.fixture(scope="module")
def tls_hbase(zk_server, tmp_path_factory) -> Iterator[tuple[RealHBase, HBaseTls]]:
    """One real HBase (master, one region server, Thrift) serving RPC over TLS only."""
    tls = make_tls(tmp_path_factory.mktemp("hbase-tls-ca"))
    cluster = RealHBase(tmp_path_factory.mktemp("hbase-tls"))
    cluster.start(f"127.0.0.1:{zk_server.port}:/hbase-tls-{uuid.uuid4().hex[:8]}", extra_site=tls.site())
    try:
        yield cluster, tls
    finally:
        cluster.stop()


def client_keys(tls: HBaseTls, changes: dict[str, str] | None = None) -> dict[str, str]:
    """hbrep's client keys (HBase's names) for the TLS HBase, with ``changes``."""
    keys = {
        "hbase.client.netty.tls.enabled": "true",
        "hbase.rpc.tls.truststore.location": str(tls.ca),
        "hbase.rpc.tls.keystore.location": str(tls.client),
    }
    keys.update(changes or {})
    return keys


def hbrep(cluster: RealHBase, settings: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``hbrep --cluster <the TLS HBase> ARGS`` as a user runs it, ``settings`` as HBREP__ variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBREP__")}
    env.update({"HBREP__" + key.replace(".", "__"): value for key, value in settings.items()})
    command = [*HBREP, "--cluster", cluster.layout().cluster_key, *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=120)


def test_master_and_table_commands_work_over_tls(tls_hbase):
    cluster, tls = tls_hbase
    settings = client_keys(tls)
    peer = f"tls{uuid.uuid4().hex[:4]}"
    elsewhere = f"127.0.0.1:{cluster.layout().zk_port}:/hbase-elsewhere"
    done = hbrep(cluster, settings, "add_peer", peer, elsewhere, "--state", "DISABLED")
    assert done.returncode == 0, done.stderr
    assert peer in {p["id"] for p in cluster.admin("peers")}  # HBase's own client sees what hbrep added
    listed = hbrep(cluster, settings, "list_peers", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {row["PEER_ID"] for row in json.loads(listed.stdout)} == {peer}

    table = f"tls_{uuid.uuid4().hex[:6]}"
    cluster.admin("create-table", table, "1", "a:0")
    for row in ("r1", "r2", "r3"):
        put = hbrep(cluster, settings, "put", table, row, "a:q", f"v-{row}", "--ts", "7")
        assert put.returncode == 0, put.stderr
    got = hbrep(cluster, settings, "get", table, "r2", "--json")
    assert got.returncode == 0, got.stderr
    row = json.loads(got.stdout)
    cells = {(c["family"], c["qualifier"], c["timestamp"], c["value"]) for c in row["cells"]}
    assert cells == {("a", "q", 7, "v-r2")}
    connection = cluster.happybase_connection()  # Thrift: HBase's Java client, over TLS, reads what hbrep wrote
    try:
        seen = {(row.decode(), cols[b"a:q"].decode()) for row, cols in connection.table(table).scan()}
    finally:
        connection.close()
    assert seen == {("r1", "v-r1"), ("r2", "v-r2"), ("r3", "v-r3")}


def test_a_client_trusting_another_ca_is_refused_naming_the_server(tls_hbase, tmp_path):
    cluster, tls = tls_hbase
    other = ThrowAwayCA.create(tmp_path, name="another CA")
    settings = client_keys(tls, {"hbase.rpc.tls.truststore.location": str(other.cert_path)})
    line = one_error_line(hbrep(cluster, settings, "list_peers"))
    master = cluster.layout().master_port
    assert f":{master}" in line and "TLS handshake failed" in line and "not trusted" in line, line
    assert "hbase.rpc.tls.truststore.location" in line, line


def loopback_alias_not_in_certificate() -> str | None:
    """A name of this machine's hosts file that resolves to 127.0.0.1 but that the dev certificates do not carry."""
    carried = {"localhost", socket.gethostname()}
    with open("/etc/hosts") as hosts:
        for line in hosts:
            fields = line.split("#", 1)[0].split()
            if fields and fields[0] == "127.0.0.1":
                for name in fields[1:]:
                    if name not in carried and socket.gethostbyname(name) == "127.0.0.1":
                        return name
    return None


def test_a_server_certificate_not_naming_the_host_is_refused_unless_verification_is_off(tls_hbase):
    cluster, tls = tls_hbase
    alias = loopback_alias_not_in_certificate()
    if alias is None:
        pytest.skip("no name in /etc/hosts resolves to 127.0.0.1 outside the certificate's names")
    layout = cluster.layout()
    master = MasterAddress(alias, layout.master_port)
    key = ClusterKey.parse(layout.cluster_key)
    checked = Config.load(env={}, overrides=client_keys(tls))
    admin = MasterAdmin(master, key, rpc_timeout_s=30, tls=client_context(checked))
    with pytest.raises(NoActiveMaster) as refused:
        admin.is_master_running()
    admin.close()
    line = str(refused.value)
    assert f"{alias}:{layout.master_port}" in line and "TLS handshake failed" in line, line
    assert "hbase.client.netty.tls.verify.server.hostname" in line and "\n" not in line, line
    unchecked = Config.load(
        env={}, overrides=client_keys(tls, {"hbase.client.netty.tls.verify.server.hostname": "false"})
    )
    admin = MasterAdmin(master, key, rpc_timeout_s=30, tls=client_context(unchecked))
    try:
        assert admin.is_master_running()
    finally:
        admin.close()


def test_a_plain_text_client_is_refused_with_one_line(tls_hbase):
    cluster, _tls = tls_hbase
    line = one_error_line(hbrep(cluster, {}, "list_peers"))
    assert f":{cluster.layout().master_port}" in line, line
    assert "hbase.client.netty.tls.enabled=true" in line, line


def test_pkcs12_key_and_trust_stores_open_with_their_passwords(tls_hbase, tmp_path):
    cluster, tls = tls_hbase
    ca = x509.load_pem_x509_certificate(tls.ca.read_bytes())
    truststore = tmp_path / "trust.store"  # no telling extension: the type keys say what the files are
    truststore.write_bytes(
        pkcs12.serialize_key_and_certificates(
            None, None, None, [ca], serialization.BestAvailableEncryption(b"trust-pass")
        )
    )
    keystore = tmp_path / "client.store"
    keystore.write_bytes(tls.keystore.read_bytes())  # the servers' store: its certificate is for clients too
    settings = client_keys(
        tls,
        {
            "hbase.rpc.tls.truststore.location": str(truststore),
            "hbase.rpc.tls.truststore.type": "PKCS12",
            "hbase.rpc.tls.truststore.password": "trust-pass",
            "hbase.rpc.tls.keystore.location": str(keystore),
            "hbase.rpc.tls.keystore.type": "pkcs12",
            "hbase.rpc.tls.keystore.password": tls.password,
        },
    )
    listed = hbrep(cluster, settings, "list_peers", "--json")
    assert listed.returncode == 0, listed.stderr

    wrong = {**settings, "hbase.rpc.tls.keystore.password": "not-it"}
    line = one_error_line(hbrep(cluster, wrong, "list_peers"))
    assert "hbase.rpc.tls.keystore.password" in line and str(keystore) in line and "not-it" not in line, line
    as_pem = {**settings, "hbase.rpc.tls.truststore.type": "PEM"}  # the PKCS12 store read as PEM holds nothing
    line = one_error_line(hbrep(cluster, as_pem, "list_peers"))
    assert "hbase.rpc.tls.truststore.location" in line and "no certificate" in line, line


def test_a_client_without_a_certificate_is_refused_naming_the_key_store(tls_hbase):
    cluster, tls = tls_hbase  # HBase servers demand a client certificate by default (client.auth.mode NEED)
    settings = {key: value for key, value in client_keys(tls).items() if key != "hbase.rpc.tls.keystore.location"}
    line = one_error_line(hbrep(cluster, settings, "list_peers"))
    assert f":{cluster.layout().master_port}: TLS handshake failed" in line, line
    assert "hbase.rpc.tls.keystore.location" in line, line


def test_a_real_hbase_replicates_into_hbreps_listener_over_tls_only(tls_hbase, zk_server, tmp_path):
    """HBase's server keys on hbrep's region servers (hbase.server.netty.tls.enabled, no plain text, client
    certificates demanded): the real HBase's own replication source, a TLS client presenting its certificate,
    ships into hbrep's HBase RPC listener, and every cell arrives."""
    from interop.helpers import (
        assert_every_cell_arrives,
        create_on_both,
        hbase_peer_into_hbrep,
        hbase_table_cells,
        write_through_thrift,
    )

    from replication.cluster.embedded import start_cluster

    cluster, tls = tls_hbase
    key = f"127.0.0.1:{zk_server.port}:/hbrep-tls-sink-{uuid.uuid4().hex[:8]}"
    conf = Config.load(env={}, overrides=tls.site())  # the cluster's CA and key store, HBase's server defaults
    assert conf.get_str("hbase.server.netty.tls.client.auth.mode") == "NEED"
    sink = start_cluster(key, str(tmp_path / "sink"), 1, conf=conf, name="tls-sink")
    try:
        sink.key = ClusterKey.parse(key)
        table = f"tls_in_{uuid.uuid4().hex[:6]}"
        create_on_both(sink, cluster, table)
        with hbase_peer_into_hbrep(cluster, sink.key, sink.paths, table):
            expected = write_through_thrift(cluster, table, 200)
            assert hbase_table_cells(cluster, table) == expected
            assert_every_cell_arrives(sink, table, expected)
        # the listener HBase used serves TLS only: a plain-text preamble gets the connection closed, no answer
        with connected(sink.key) as zk:
            (listener,) = zk.get_children(f"{sink.paths.hbase_rpc}/rs")
        port = int(listener.split(",")[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as plain:
            plain.sendall(b"HBas\x00\x50")
            assert plain.recv(1024) == b""
    finally:
        sink.stop()
