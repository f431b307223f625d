"""hbrep_verify: which (peer, table) pairs a run verifies, and a manual run that verifies only those."""

from __future__ import annotations

import pytest
from conftest import wait_for_queue

pytestmark = pytest.mark.slow


def test_params_name_exactly_what_is_verified(airflow_db, replication_pair):
    from hbrep_airflow.hooks.replication import ReplicationHook

    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    TableRegistry(None, replication_pair.source.root).create(
        TableDescriptor.of("u", ColumnFamilyDescriptor("a", scope=1), ColumnFamilyDescriptor("b", scope=1))
    )
    TableRegistry(None, replication_pair.source.root).create(TableDescriptor.of("local_only", "x"))
    hook = ReplicationHook("hbrep_source")
    everything = hook.verify_targets(peer=None, table=None, families=None, start_ms=10, end_ms=20)
    assert [(t["peer_id"], t["table"], t["families"]) for t in everything] == [
        ("1", "t", ["f"]),
        ("1", "u", ["a", "b"]),
    ]
    named = hook.verify_targets(peer="1", table="u", families=["b"], start_ms=5, end_ms=6)
    assert named == [{"peer_id": "1", "table": "u", "families": ["b"], "start_ms": 5, "end_ms": 6}]
    from replication.errors import HbrepError

    with pytest.raises(HbrepError, match="peer 9 does not exist"):
        hook.verify_targets(peer="9", table=None, families=None, start_ms=0, end_ms=1)


def test_verify_dag_run_with_params(airflow_db, replication_pair, spark):
    """Edits shipped, then a manual run naming peer 1 / table t verifies exactly that, with GOODROWS = rows."""
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    from replication.config import Config
    from replication.fs import get_filesystem
    from replication.jobs.launch import runner_for
    from replication.monitoring.metrics import MetricsStore
    from replication.source.cycle import run_cycle
    from replication.wal.model import Cell, CellType
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey

    wait_for_queue(replication_pair)
    with replication_pair.source.client() as client:
        client.batch("t", [Cell(f"r{i}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v") for i in range(30)])
    key = ClusterKey.parse(replication_pair.source_key)
    with connected(key) as zk:
        conf = Config.load(env={})
        run_cycle(zk, key, conf, runner=runner_for(conf, spark))
    for cluster in (replication_pair.source, replication_pair.peer):
        with cluster.client() as client:
            client.flush("t")
    dag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_verify.py"), safe_mode=False).dags["hbrep_verify"]
    run = dag.test(run_conf={"peer": "1", "table": "t", "start": 0, "end": 4_000_000_000_000})
    assert str(run.state) == "success"
    verify = [ti for ti in run.get_task_instances() if ti.task_id == "verify"]
    assert len(verify) == 1
    fs, root = get_filesystem(replication_pair.source.root)
    checks = MetricsStore(fs, root).load().checks
    assert checks["verify/1/t"]["counters"]["GOODROWS"] == 30
    assert checks["verify/1/t"]["counters"]["BADROWS"] == 0
    assert checks["quality/1/t"]["success"] is True


def test_a_failed_verify_offers_the_repair_and_the_repair_dag_fixes_the_peer(airflow_db, replication_pair, spark):
    """A drifted peer: hbrep_verify fails and names the repair conf (XCom ``repair_conf``); hbrep_repair run
    with that conf makes the peer's copy the source's; hbrep_verify then passes."""
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    from replication.config import Config
    from replication.jobs.launch import runner_for
    from replication.source.cycle import run_cycle
    from replication.wal.model import Cell, CellType
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey

    wait_for_queue(replication_pair)
    with replication_pair.source.client() as client:
        client.batch("t", [Cell(f"r{i}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v") for i in range(30)])
    key = ClusterKey.parse(replication_pair.source_key)
    with connected(key) as zk:
        conf = Config.load(env={})
        run_cycle(zk, key, conf, runner=runner_for(conf, spark))
    with replication_pair.peer.client() as client:  # the peer drifts: one value changed, two rows of its own
        client.batch("t", [Cell(b"r3", b"f", b"q", 1003, CellType.PUT, b"changed")])
        client.batch("t", [Cell(f"x{i}".encode(), b"f", b"q", 1000, CellType.PUT, b"x") for i in range(2)])
    for cluster in (replication_pair.source, replication_pair.peer):
        with cluster.client() as client:
            client.flush("t")
    dags = DagBag(dag_folder=str(airflow_env.DAGS), safe_mode=False).dags
    window = {"peer": "1", "table": "t", "start": 0, "end": 4_000_000_000_000}
    failed = dags["hbrep_verify"].test(run_conf=window)
    assert str(failed.state) == "failed"
    with create_session() as session:
        stored = session.scalars(
            XComModel.get_many(run_id=failed.run_id, key="repair_conf", dag_ids="hbrep_verify", task_ids="verify")
        ).all()
    assert len(stored) == 1
    offer = XComModel.deserialize_value(stored[0])
    assert offer == {"peer": "1", "table": "t", "families": ["f"], "start": 0, "end": 4_000_000_000_000,
                     "dry_run": False}  # fmt: skip

    planned = dags["hbrep_repair"].test(run_conf={**offer, "dry_run": True})
    assert str(planned.state) == "success"
    repaired = dags["hbrep_repair"].test(run_conf=offer)
    assert str(repaired.state) == "success"
    assert str(dags["hbrep_verify"].test(run_conf=window).state) == "success"
