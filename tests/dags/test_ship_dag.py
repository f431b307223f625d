"""hbrep_ship end to end: dag.test() against real ZooKeeper, spark-submit and two embedded clusters."""

from __future__ import annotations

import pytest
from conftest import TABLE, peer_rows, wait_for_queue

pytestmark = pytest.mark.slow


def _ship_dag():
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_ship.py"), safe_mode=False)
    assert bag.import_errors == {}
    dag = bag.dags["hbrep_ship"]
    # Airflow 3.3.2's dag.test() cannot finish a run of a DAG with a deadline: DagRun.update_state looks
    # the alerts up by id but gets the serialized alert dicts (StatementError "'dict' object has no
    # attribute 'hex'"). The deadline's wiring is checked in test_dag_import.py and the alert firing under
    # the real scheduler in tests/scheduler/test_ship_deadline.py; here the run is tested without it.
    dag.deadline = None
    return dag


def _states(run) -> dict[tuple[str, int], str]:
    return {(ti.task_id, ti.map_index): str(ti.state) for ti in run.get_task_instances()}


def _queue_state(pair):
    from replication.zk.layout import ZNodePaths
    from replication.zk.queue_storage import ReplicationQueueStorage

    paths = ZNodePaths(pair.source.conf, parent=pair.source_key.rsplit(":", 1)[1])
    snap = ReplicationQueueStorage(pair.source.zk, paths).snapshot()
    return {(q.server, q.queue_id): {w: (s.position, s.version) for w, s in q.wals.items()} for q in snap.queues()}


def test_ship_dag_replicates_edits_and_a_retried_commit_is_a_no_op(airflow_db, replication_pair):
    pair = replication_pair
    wait_for_queue(pair)
    with pair.source.client() as client:
        for i in range(20):
            client.put(TABLE, b"row%03d" % i, b"f", b"q", b"v%d" % i)
        client.put(TABLE, b"local", b"g", b"q", b"not-replicated")  # scope 0: stays on the source
    dag = _ship_dag()
    run = dag.test()
    states = _states(run)
    assert str(run.state) == "success", states
    assert states[("peer.snapshot", 0)] == "success"
    assert states[("peer.ship", 0)] == "success"
    assert states[("peer.commit", 0)] == "success"
    rows = peer_rows(pair)
    assert rows == {b"row%03d" % i: b"v%d" % i for i in range(20)}

    # A retry of commit (same manifest, same owner) changes nothing: no znode is written again.
    from hbrep_airflow.hooks.replication import ReplicationHook

    before = _queue_state(pair)
    snap = next(ti for ti in run.get_task_instances() if ti.task_id == "peer.snapshot").xcom_pull(
        task_ids="peer.snapshot", map_indexes=0
    )
    report = ReplicationHook("hbrep_source").commit(snap["manifest"], owner=snap["owner"])
    assert _queue_state(pair) == before
    assert report["cycle_id"] == snap["cycle_id"]

    # Nothing new written: the next run skips the branch before any Spark job.
    second = dag.test()
    states = _states(second)
    assert str(second.state) == "success", states
    assert states[("peer.snapshot", 0)] == "skipped"
    assert states[("peer.ship", 0)] == "skipped"
    assert states[("lag_alert", -1)] == "success"
