"""hbrep_seed_peer: dag.test() seeds a new peer with a table that has history (real ZooKeeper, two embedded
clusters, a real Spark Connect server for the catch-up's ship cycles); the copy is one mapped task per chunk."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def test_the_seed_dag_copies_in_mapped_chunks_and_resumes_shipping(
    airflow_db, replication_pair, spark_connect, spark, monkeypatch
):
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.tables.spark_views import scan
    from replication.wal.model import Cell, CellType
    from replication.zk.layout import ZNodePaths
    from replication.zk.peer_storage import ReplicationPeerStorage
    from replication.zk.seed_marks import read_seed

    monkeypatch.setenv("HBREP__hbrep__spark__mode", "connect")
    monkeypatch.setenv(
        "AIRFLOW_CONN_HBREP_SPARK_CONNECT",
        json.dumps({"conn_type": "spark_connect", "host": "127.0.0.1", "port": spark_connect.port}),
    )
    pair = replication_pair
    TableRegistry(None, pair.source.root).create(TableDescriptor.of("hist", ColumnFamilyDescriptor("f", scope=1)))
    with pair.source.client() as client:
        client.batch("hist", [Cell(b"h%04d" % i, b"f", b"q", 1_000 + i, CellType.PUT, b"v") for i in range(600)])
        for server in pair.source.servers:
            client.roll_wal(server)
    dag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_seed_peer.py"), safe_mode=False).dags["hbrep_seed_peer"]
    run = dag.test(run_conf={"peer": "2", "tables": ["hist"], "cluster_key": pair.peer_key, "chunks": 3})
    states = {(ti.task_id, ti.map_index): str(ti.state) for ti in run.get_task_instances()}
    assert str(run.state) == "success", states
    assert sorted(k for k in states if k[0] == "copy") == [("copy", 0), ("copy", 1), ("copy", 2)]

    def cells(cluster) -> set[tuple]:
        with cluster.client() as client:
            client.flush("hist")
        return {tuple(r) for r in scan(spark, cluster.root, "hist").collect()}

    assert len(cells(pair.source)) == 600 and cells(pair.source) == cells(pair.peer)
    parent = pair.source_key.rsplit(":", 1)[1]
    paths = ZNodePaths(pair.source.conf, parent=parent)
    assert read_seed(pair.source.zk, paths, "2") is None
    assert sorted(ReplicationPeerStorage(pair.source.zk, paths).list_peer_ids()) == ["1", "2"]
