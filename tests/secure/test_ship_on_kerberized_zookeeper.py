"""hbrep's own clusters on a ZooKeeper that demands Kerberos: region servers, the cluster client and a ship cycle
all authenticate as hbrep's principal (HBase's keys in their configuration), and every znode they create is
``sasl:hbrep``'s only."""

from __future__ import annotations

import uuid

import pytest
from kazoo.security import ACL, Id, Permissions
from support import create_table, table_state

from replication.cluster.embedded import start_cluster
from replication.jobs.launch import runner_for
from replication.source.cycle import run_cycle
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow


def test_a_ship_cycle_runs_with_kerberos_on_every_zookeeper_session(kerberized_zk, spark, tmp_path):
    conf = kerberized_zk.conf().with_overrides({"replication.source.sleepforretries": "50"})
    assert conf.get_str("hbase.security.authentication") == "kerberos"
    tag = uuid.uuid4().hex[:8]
    port = kerberized_zk.zookeeper.port
    keys = {name: f"127.0.0.1:{port}:/hbase-{name}-{tag}" for name in ("ka", "kb")}
    peer = start_cluster(keys["kb"], str(tmp_path / "kb"), 1, conf=conf, name="kb")
    try:
        source = start_cluster(keys["ka"], str(tmp_path / "ka"), 1, conf=conf, name="ka")
        try:
            for cluster in (source, peer):
                create_table(cluster, "t", ("f", 1))
            source_key = ClusterKey.parse(keys["ka"])
            paths = ZNodePaths(conf, parent=source_key.znode_parent)
            with connected(source_key, **zk_options(conf)) as zk:
                ReplicationPeerStorage(zk, paths).add_peer("1", ReplicationPeerConfig(cluster_key=keys["kb"]))
            with source.client() as client:
                for i in range(20):
                    client.put("t", f"row{i:02d}".encode(), b"f", b"q", f"v{i}".encode())
            with connected(source_key, **zk_options(conf)) as zk:
                report = run_cycle(zk, source_key, conf, runner=runner_for(conf, spark))
                assert report.queues and all(q.status == "ok" for q in report.queues), report.as_dict()
                # the queue the region server registered is hbrep's principal's only
                (server,) = source.servers
                (wal,) = zk.get_children(paths.queue(server, "1"))
                assert zk.get_acls(paths.wal(server, "1", wal))[0] == [ACL(Permissions.ALL, Id("sasl", "hbrep"))]
            rows = table_state(spark, peer, "t")
            assert rows == table_state(spark, source, "t")
            assert {r[0] for r in rows} == {f"row{i:02d}".encode() for i in range(20)}
        finally:
            source.stop()
    finally:
        peer.stop()


def test_without_hbases_server_keys_the_hbase_rpc_listener_stays_off_unless_asked_for(kerberized_zk, tmp_path):
    """hbrep's Kerberos identity alone (no ``hbase.regionserver.keytab.file``): under
    ``hbrep.regionserver.hbase.rpc.enabled=auto`` the region server starts without the listener and says why in its
    log; under ``true`` it does not start, with one line naming the key."""
    from replication.cluster.errors import ClusterError

    conf = kerberized_zk.conf(**{"hbase.regionserver.kerberos.principal": "hbase/_HOST@HBREP.TEST"})
    key = f"127.0.0.1:{kerberized_zk.zookeeper.port}:/no-listener-{uuid.uuid4().hex[:6]}"
    cluster = start_cluster(key, str(tmp_path / "auto"), 1, conf=conf, name="auto")
    try:
        with connected(ClusterKey.parse(key), **zk_options(conf)) as zk:
            paths = ZNodePaths(conf, parent=ClusterKey.parse(key).znode_parent)
            assert not zk.exists(paths.hbase_rpc_rs) or zk.get_children(paths.hbase_rpc_rs) == []
        logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "auto").rglob("regionserver-*.log"))
        assert "HBase RPC listener off (hbrep.regionserver.hbase.rpc.enabled=auto)" in logs
        assert "needs hbase.regionserver.keytab.file" in logs
    finally:
        cluster.stop()
    asked = conf.with_overrides({"hbrep.regionserver.hbase.rpc.enabled": "true"})
    with pytest.raises(ClusterError) as refused:
        start_cluster(key.replace("no-listener", "asked"), str(tmp_path / "true"), 1, conf=asked, name="true")
    assert "HBase RPC listener" in str(refused.value) and "hbase.regionserver.keytab.file" in str(refused.value)
