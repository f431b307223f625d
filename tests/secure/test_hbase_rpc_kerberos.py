"""Kerberos (SASL GSSAPI) on hbrep's HBase RPC client, against one real HBase 2.6 per module with
``hbase.security.authentication=kerberos`` (on the module's KDC and SASL-only ZooKeeper, tests/secure/conftest.py):
hbrep's master and table commands, as a user runs them, authenticate as hbrep's principal and HBase's own Java
client sees what they did; a ship cycle of an hbrep cluster sends ReplicateWALEntry into the Kerberized HBase;
each refusal is one line, and nothing is shipped or moved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import create_table, one_error_line

from replication.cluster.embedded import start_cluster
from replication.cluster.hbase_rpc.rpc_kerberos import rpc_kerberos
from replication.config import Config
from replication.devstack.hbase import HBaseKerberos, RealHBase
from replication.devstack.hbase_admin import hbase_admin
from replication.hbase.master_admin import MasterAdmin
from replication.hbase.registry import MasterAddress
from replication.hbase.table_client import HBaseTableClient
from replication.jobs.launch import runner_for
from replication.kerberos import KerberosError
from replication.source.cycle import run_cycle
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow

HBREP = [sys.executable, "-m", "replication.cli"]


@dataclass
class SecureHBase:
    """The Kerberized real HBase, its security settings and the module's Kerberos stack."""

    cluster: RealHBase
    kerberos: HBaseKerberos
    stack: object  # conftest.KerberizedZooKeeper
    table: str  # created with the cluster: family a (written by the tests) and f (shipped into)

    def settings(self, keytab=None, **changes: str) -> dict[str, str]:
        """hbrep's keys for this HBase: its identity (conftest) and the servers' principals."""
        return {**self.stack.settings(keytab), **self.kerberos.client_settings(), **changes}

    def hbrep(self, *args: str, keytab=None, env: dict[str, str] | None = None, **changes: str):
        """``hbrep --cluster <this HBase> ARGS`` as a user runs it (settings as HBREP__ variables)."""
        run_env = {k: v for k, v in os.environ.items() if not k.startswith(("HBREP__", "KRB5"))}
        run_env.update(self.stack.cli_env(keytab))
        for key, value in self.settings(keytab, **changes).items():
            run_env["HBREP__" + key.replace(".", "__")] = value
        run_env.update(env or {})
        command = [*HBREP, "--cluster", self.cluster.layout().cluster_key, *args]
        return subprocess.run(command, capture_output=True, text=True, check=False, env=run_env, timeout=120)


@pytest.fixture(scope="module")
def secure_hbase(kerberized_zk, tmp_path_factory) -> Iterator[SecureHBase]:
    """One real HBase (master, one region server; no Thrift) demanding Kerberos on every RPC."""
    server = kerberized_zk.kdc.add_principal("hbase/127.0.0.1")
    # the servers accept every protection; hbrep's settings ask for privacy (the strongest) unless a test says
    kerberos = HBaseKerberos(
        server.principal, str(server.path), str(kerberized_zk.kdc.krb5_conf), "privacy,integrity,authentication"
    )
    cluster = RealHBase(tmp_path_factory.mktemp("hbase-kerberos"))
    key = f"127.0.0.1:{kerberized_zk.zookeeper.port}:/hbase-krb-{uuid.uuid4().hex[:8]}"
    # AES on the RPC for clients that ask for it in their ConnectionHeader (under privacy); the others keep the
    # GSS wrap (ServerRpcConnection.setupCryptoCipher)
    cluster.start(key, kerberos=kerberos, extra_site={"hbase.rpc.crypto.encryption.aes.enabled": "true"})
    try:
        table = f"krb_{uuid.uuid4().hex[:6]}"
        cluster.admin("create-table", table, "1", "a:0", "f:0")
        yield SecureHBase(cluster, kerberos, kerberized_zk, table)
    finally:
        cluster.stop()


def test_master_and_table_commands_authenticate_with_kerberos(secure_hbase):
    """With hbase.rpc.protection=privacy: every packet after the SASL exchange is GSS-wrapped and encrypted."""
    hbase = secure_hbase.cluster
    peer, refused_peer = f"krb{uuid.uuid4().hex[:4]}", f"no{uuid.uuid4().hex[:4]}"
    elsewhere = f"127.0.0.1:{hbase.layout().zk_port}:/hbase-elsewhere"
    wrong_master = {"hbase.master.kerberos.principal": "hbase/nowhere.example@HBREP.TEST"}
    line = one_error_line(secure_hbase.hbrep("add_peer", refused_peer, elsewhere, **wrong_master))
    assert "the KDC does not know the service principal for hbase@nowhere.example" in line, line
    done = secure_hbase.hbrep("add_peer", peer, elsewhere, "--state", "DISABLED")
    assert done.returncode == 0, done.stderr
    peers = {p["id"] for p in hbase.admin("peers")}  # HBase's own (Kerberized) client sees it, and not the other
    assert peer in peers and refused_peer not in peers
    conf = Config.load(env={}, overrides=secure_hbase.settings())
    master, key = master_of(secure_hbase)
    admin = MasterAdmin(master, key, rpc_timeout_s=30, kerberos=rpc_kerberos(conf))
    try:  # the peer list through hbrep's client (in this process: one CLI start less)
        assert peer in {p.peer_id for p in admin.list_replication_peers()}
    finally:
        admin.close()

    put = secure_hbase.hbrep("put", secure_hbase.table, "r2", "a:q", "v-r2", "--ts", "7")
    assert put.returncode == 0, put.stderr
    with HBaseTableClient(key, conf) as client:
        cells = client.get(secure_hbase.table, b"r2")
    assert {(c.family, c.qualifier, c.timestamp, c.value) for c in cells} == {(b"a", b"q", 7, b"v-r2")}
    # HBase's own Java client, logged in as hbase, reads what hbrep wrote
    assert hbase.admin("rows", secure_hbase.table)["r2"] == {"a:q": "v-r2"}


def master_of(secure: SecureHBase) -> tuple[MasterAddress, ClusterKey]:
    layout = secure.cluster.layout()
    return MasterAddress("127.0.0.1", layout.master_port), ClusterKey.parse(layout.cluster_key)


def refused(secure: SecureHBase, conf_changes: dict[str, str], keytab=None, *, simple: bool = False) -> str:
    """The one line a MasterAdmin call (in this process) with these settings is refused with."""
    master, key = master_of(secure)
    settings = secure.settings(keytab, **conf_changes)
    kerberos = None if simple else rpc_kerberos(Config.load(env={}, overrides=settings))
    admin = MasterAdmin(master, key, rpc_timeout_s=30, kerberos=kerberos)
    try:
        with pytest.raises(KerberosError) as caught:
            admin.is_master_running()
    finally:
        admin.close()
    line = str(caught.value)
    assert "\n" not in line
    return line


def test_refusals_are_one_line_naming_what_is_wrong(secure_hbase, tmp_path, monkeypatch):
    stack = secure_hbase.stack
    # no ticket: neither a keytab login nor a ticket cache
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-cache'}")
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", str(tmp_path / "no-keytab"))
    line = refused(secure_hbase, {"hbase.client.kerberos.principal": "", "hbase.client.keytab.file": ""})
    assert line.startswith("no Kerberos ticket") and "hbase.client.keytab.file" in line, line
    # a principal the keytab holds no key for
    wrong = stack.intruder.__class__(stack.hbrep.principal, stack.intruder.path)
    line = refused(secure_hbase, {}, keytab=wrong)
    assert f"no key or ticket for {stack.hbrep.principal}" in line, line
    # a keytab that cannot be read
    missing = stack.intruder.__class__(stack.hbrep.principal, tmp_path / "gone.keytab")
    line = refused(secure_hbase, {}, keytab=missing)
    assert line.startswith(f"cannot read the keytab {tmp_path / 'gone.keytab'}"), line
    # a server principal the realm does not have
    line = refused(secure_hbase, {"hbase.master.kerberos.principal": "hbase/nowhere.example@HBREP.TEST"})
    assert "hbase@nowhere.example" in line, line
    # a SIMPLE client at a server that demands Kerberos
    master, _ = master_of(secure_hbase)
    line = refused(secure_hbase, {}, simple=True)
    assert line.startswith(f"127.0.0.1:{master.port} demands Kerberos") and "hbase.security.authentication" in line


@pytest.mark.parametrize("protection", ["authentication", "integrity"])
def test_each_protection_the_server_allows_is_negotiated(secure_hbase, protection):
    master, key = master_of(secure_hbase)
    conf = Config.load(env={}, overrides=secure_hbase.settings(**{"hbase.rpc.protection": protection}))
    admin = MasterAdmin(master, key, rpc_timeout_s=30, kerberos=rpc_kerberos(conf))
    try:
        assert admin.is_master_running()
        assert isinstance(admin.list_replication_peers(), list)  # a second call, same connection
    finally:
        admin.close()


def test_privacy_with_aes_wraps_the_calls_with_hbases_crypto_aes(secure_hbase):
    """hbase.rpc.crypto.encryption.aes.enabled with privacy: the server sends its AES keys in a ConnectionHeaderResponse
    and both sides wrap with CryptoAES from then on. A call the server could not unwrap would never be answered;
    several calls, a put with a cell block and a get of it, go through on one connection."""
    from replication.cluster.hbase_rpc.crypto_aes import CryptoAes

    master, key = master_of(secure_hbase)
    aes = {"hbase.rpc.protection": "privacy", "hbase.rpc.crypto.encryption.aes.enabled": "true"}
    settings = secure_hbase.settings(**aes)
    conf = Config.load(env={}, overrides=settings)
    admin = MasterAdmin(master, key, rpc_timeout_s=30, kerberos=rpc_kerberos(conf))
    try:
        assert admin.is_master_running()
        assert isinstance(admin.list_replication_peers(), list)
        wrapper = admin._connection._sasl  # what wraps this connection's packets now
        assert isinstance(wrapper, CryptoAes), wrapper
    finally:
        admin.close()
    with HBaseTableClient(key, conf) as client:
        client.put(secure_hbase.table, b"aes-row", b"a", b"q", b"over-aes")
        cells = client.get(secure_hbase.table, b"aes-row")
    assert [(c.family, c.qualifier, c.value) for c in cells] == [(b"a", b"q", b"over-aes")]
    # HBase's own Java client reads what hbrep wrote over AES
    assert secure_hbase.cluster.admin("rows", secure_hbase.table)["aes-row"] == {"a:q": "over-aes"}


def test_a_ship_cycle_replicates_into_the_kerberized_hbase(secure_hbase, spark, tmp_path):
    hbase, stack = secure_hbase.cluster, secure_hbase.stack
    table = secure_hbase.table
    conf = Config.load(env={}, overrides=secure_hbase.settings(**{"hbase.rpc.protection": "authentication"}))
    conf = conf.with_overrides(
        {"replication.source.sleepforretries": "50", "replication.source.maxretriesmultiplier": "1"}
    )
    source_key = ClusterKey.parse(f"127.0.0.1:{stack.zookeeper.port}:/hbase-src-{uuid.uuid4().hex[:8]}")
    source = start_cluster(str(source_key), str(tmp_path / "src"), 1, conf=conf, name="src")
    try:
        create_table(source, table, ("f", 1))
        paths = ZNodePaths(conf, parent=source_key.znode_parent)
        with connected(source_key, **zk_options(conf)) as zk:
            storage = ReplicationPeerStorage(zk, paths)
            storage.add_peer("1", ReplicationPeerConfig(cluster_key=hbase.layout().cluster_key))
        with source.client() as client:
            for i in range(10):
                client.put(table, f"row{i:02d}".encode(), b"f", b"q", f"v{i}".encode())
        (server,) = source.servers
        with connected(source_key, **zk_options(conf)) as zk:
            queues = ReplicationQueueStorage(zk, paths)
            (wal,) = queues.get_wals_in_queue(server, "1")
            before = queues.get_wal_position(server, "1", wal)
            # the region servers' principal wrong: refused, nothing shipped, the position stays
            wrong = conf.with_overrides({"hbase.regionserver.kerberos.principal": "hbase/nowhere.example@HBREP.TEST"})
            report = run_cycle(zk, source_key, wrong, runner=runner_for(wrong, spark))
            assert report.queues and all(q.status != "ok" for q in report.queues), report.as_dict()
            assert "hbase@nowhere.example" in json.dumps(report.as_dict()), report.as_dict()
            assert queues.get_wal_position(server, "1", wal) == before
            report = run_cycle(zk, source_key, conf, runner=runner_for(conf, spark))
            assert report.queues and all(q.status == "ok" for q in report.queues), report.as_dict()
            assert queues.get_wal_position(server, "1", wal) > before
        # HBase's own client reads what ReplicateWALEntry wrote
        shipped = {row: cells for row, cells in hbase.admin("rows", table).items() if row.startswith("row")}
        assert shipped == {f"row{i:02d}": {"f:q": f"v{i}"} for i in range(10)}
    finally:
        source.stop()


def test_a_kerberized_hbase_replicates_into_a_kerberized_hbrep_cluster_across_a_sink_kill(secure_hbase, tmp_path):
    """HBase's own replication source, a Kerberos client asking for privacy and AES (the cluster's
    ``hbase.rpc.crypto.encryption.aes.enabled``), ships into the HBase RPC listeners of an hbrep cluster whose region
    servers accept as ``hbase.regionserver.kerberos.principal`` from ``hbase.regionserver.keytab.file`` (HBase's
    server keys) and reach ZooKeeper with SASL. One of the two listeners is SIGKILLed between two loads: HBase
    moves on to the other, and the row keys and cells on both sides are the same sets."""
    from interop.helpers import hbase_peer_into_hbrep, wait_for_hbrep_cells

    from replication.fs import LocalFileSystem
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    hbase, stack = secure_hbase.cluster, secure_hbase.stack
    listener = {
        "hbase.regionserver.keytab.file": secure_hbase.kerberos.keytab,  # the servers' principal, hbase/127.0.0.1
        "hbase.rpc.crypto.encryption.aes.enabled": "true",
    }
    conf = Config.load(env={}, overrides=secure_hbase.settings(**listener))
    key = f"127.0.0.1:{stack.zookeeper.port}:/hbrep-krb-sink-{uuid.uuid4().hex[:8]}"
    sink = start_cluster(key, str(tmp_path / "sink"), 2, conf=conf, name="krb-sink")
    table = f"krb_in_{uuid.uuid4().hex[:6]}"
    try:
        sink.key = ClusterKey.parse(key)
        family = ColumnFamilyDescriptor("r", scope=1, max_versions=1)
        TableRegistry(LocalFileSystem(), sink.root).create(TableDescriptor.of(table, family))
        hbase.admin("create-table", table, "1", "r:1")

        def load(first: int, count: int) -> set[tuple]:
            lines = [
                {"op": "put", "row": f"row{i:04d}", "family": "r", "qualifier": "q", "ts": 1000 + i, "value": f"v{i}"}
                for i in range(first, first + count)
            ]
            assert hbase.admin("mutate", table, stdin="\n".join(json.dumps(line) for line in lines)) == {
                "applied": count
            }
            rows = range(first, first + count)
            return {(f"row{i:04d}".encode(), b"r", b"q", 1000 + i, f"v{i}".encode()) for i in rows}

        with hbase_peer_into_hbrep(hbase, sink.key, sink.paths, table):
            expected = load(0, 150)
            assert wait_for_hbrep_cells(sink, table, expected) == expected
            victim = sink.servers[0]
            sink.kill(victim)  # SIGKILL: HBase's connection to its listener breaks, its znode lasts until expiry
            expected |= load(150, 150)
            arrived = wait_for_hbrep_cells(sink, table, expected)
            assert arrived == expected, (sorted(expected - arrived)[:5], sorted(arrived - expected)[:5])
        on_hbase = {row.encode(): cells["r:q"].encode() for row, cells in hbase.admin("rows", table).items()}
        assert on_hbase == {row: value for row, _f, _q, _ts, value in arrived}
        logs = "".join(Path(p).read_text(errors="replace") for p in Path(sink.root).rglob("regionserver-*.log"))
        assert f"authenticated as {secure_hbase.kerberos.principal} (auth-conf)" in logs
        assert "HBase's CryptoAES (AES/CTR/NoPadding) wraps the calls from here on" in logs
    finally:
        sink.stop()


def test_hbases_snapshot_tools_run_as_hbreps_principal(secure_hbase):
    """The seed's copy between real HBase clusters runs hbrep's AdminTool as hbrep (devstack/hbase_admin.py,
    ``kerberos_login``): a ticket from hbrep's keytab, HBase's client keys, ZooKeeper's SASL. A snapshot taken
    that way, cloned into a new table, holds the table's cells. (ExportSnapshot between two clusters, with the
    same login, runs in tests/devstack/test_demo_hbase_secure.py.)"""
    hbase, table = secure_hbase.cluster, secure_hbase.table
    conf = Config.load(env={}, overrides=secure_hbase.settings())
    key = ClusterKey.parse(hbase.layout().cluster_key)
    lines = [{"op": "put", "row": f"s{i}", "family": "a", "qualifier": "q", "value": f"v{i}"} for i in range(3)]
    hbase.admin("mutate", table, stdin="\n".join(map(json.dumps, lines)))
    name, clone = f"hbrep-krb-{uuid.uuid4().hex[:6]}", f"krbclone_{uuid.uuid4().hex[:6]}"
    hbase_admin(key, "snapshot", table, name, conf=conf)
    assert hbase_admin(key, "restore-snapshot", name, clone, conf=conf)["action"] == "cloned"
    assert hbase_admin(key, "delete-snapshot", name, conf=conf) == {"deleted": True}
    cloned = hbase.admin("rows", clone)  # HBase's own (Kerberized) client reads the clone
    assert {row: cells.get("a:q") for row, cells in cloned.items() if row.startswith("s")} == {
        f"s{i}": f"v{i}" for i in range(3)
    }
