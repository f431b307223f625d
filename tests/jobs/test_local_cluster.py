"""The ship job under ``local-cluster[2,1,1024]``: a Spark master, two workers and two executor JVMs,
each with its own Python workers, started by ``spark-submit`` from ``hbrep.spark.master``.

Executors share neither memory nor the driver's Python objects with the test; they get the manifest
by broadcast and read the WALs from the cluster root, so a correct peer table proves the job needs
nothing from the driver's memory or files beyond what it ships. The verify job then runs the same way
and must find exactly the one row planted in the peer only.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pyspark
import pytest

from replication.config import Config
from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import commit_step, ship_step, snapshot_step
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.spark_views import scan
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

MASTER = "local-cluster[2,1,1024]"
# LocalSparkCluster starts its workers with no work dir, so they use $SPARK_HOME/work (pyspark's folder).
WORKER_DIR = Path(pyspark.__file__).parent / "work"


@pytest.fixture
def clusters(zk_server, tmp_path):
    from replication.cluster.embedded import start_cluster

    conf = Config.load(env={}, overrides={"hbrep.spark.master": MASTER, "hbrep.work.dir": str(tmp_path / "cycles")})
    keys = [f"127.0.0.1:{zk_server.port}:/hbase-{n}-{uuid.uuid4().hex[:8]}" for n in ("a", "b")]
    source = start_cluster(keys[0], str(tmp_path / "a"), 2, conf=conf, name="a")
    try:
        peer = start_cluster(keys[1], str(tmp_path / "b"), 1, conf=conf, name="b")
    except BaseException:
        source.stop()
        raise
    try:
        yield source, peer, ClusterKey.parse(keys[0]), ClusterKey.parse(keys[1]), conf
    finally:
        peer.stop()
        source.stop()


def _state(spark, cluster, table: str) -> list[tuple]:
    with cluster.client() as client:
        client.flush(table)
    return sorted(
        (bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, r.type, bytes(r.value))
        for r in scan(spark, cluster.root, table).collect()
    )


def test_ship_and_verify_jobs_under_local_cluster(clusters, spark, tmp_path):
    from replication.checks.verify import VerifyOptions
    from replication.jobs.verify import submit_verify

    source, peer, source_key, peer_key, conf = clusters
    apps_before = _worker_apps()
    table = "lc_t"
    for cluster in (source, peer):
        fs, root = get_filesystem(cluster.root)
        TableRegistry(fs, root).create(TableDescriptor.of(table, ColumnFamilyDescriptor("f", scope=1)))
    with connected(source_key) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(conf, parent=source_key.znode_parent)).add_peer(
            "1", ReplicationPeerConfig(cluster_key=str(peer_key))
        )
    with source.client() as client:
        client.batch(
            table, [Cell(f"r{i:03d}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v%d" % i) for i in range(300)]
        )
        client.delete(table, b"r007")

    try:
        with connected(source_key) as zk:
            outcome = snapshot_step(zk, source_key, conf, owner="local-cluster-test")
        assert outcome.queues >= 2  # one queue per source region server: two tasks for two executors
        # spark-submit --master local-cluster[2,1,1024]
        result = ship_step(outcome.manifest_path, conf, runner=runner_for(conf))
        assert [q.status for q in result.queues] == ["ok"] * outcome.queues
        with connected(source_key) as zk:
            report = commit_step(zk, source_key, conf, outcome.manifest_path, owner="local-cluster-test")
        assert report.peers["1"].rows_shipped >= 300

        expected = _state(spark, source, table)
        assert len(expected) == 299
        assert _state(spark, peer, table) == expected

        with peer.client() as client:  # one row only the peer has: verify must find exactly it
            client.put(table, b"zz-peer-only", b"f", b"q", b"x")
            client.flush(table)
        verdict = submit_verify(
            source.root,
            peer.root,
            table,
            json.dumps(VerifyOptions(verbose=True).as_dict()),
            master=conf.get_str("hbrep.spark.master"),
            work_dir=str(tmp_path),
        )
        assert verdict.counters["GOODROWS"] == 299
        assert verdict.counters["BADROWS"] == 1 and verdict.counters["ONLY_IN_PEER_TABLE_ROWS"] == 1
        new_apps = _worker_apps() - apps_before
        assert len(new_apps) == 2, "expected one application each for the ship and verify jobs"
        executors = {p.parent.name for app in new_apps for p in (WORKER_DIR / app).glob("*/stderr")}
        assert len(executors) >= 2, "the jobs did not run in separate executor processes"
    finally:
        for app in _worker_apps() - apps_before:  # local-cluster workers write to $SPARK_HOME/work
            shutil.rmtree(WORKER_DIR / app, ignore_errors=True)


def _worker_apps() -> set[str]:
    return {p.name for p in WORKER_DIR.glob("app-*")}
