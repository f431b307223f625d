"""hbrep_failover, hbrep_log_cleaner and the lag alert of hbrep_ship, run with dag.test() on embedded clusters."""

from __future__ import annotations

import time

import pytest
from conftest import TABLE, wait_for_queue

pytestmark = pytest.mark.slow


def _dag(dag_id: str):
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(airflow_env.DAGS / f"{dag_id}.py"), safe_mode=False)
    assert bag.import_errors == {}
    dag = bag.dags[dag_id]
    if dag.deadline:
        # Only hbrep_ship has one. Airflow 3.3.2's dag.test() cannot finish a run of a DAG with a deadline
        # (DagRun.update_state: "'dict' object has no attribute 'hex'"); the scheduler runs it, and
        # tests/scheduler/test_ship_deadline.py tests it there.
        dag.deadline = None
    return dag


def _ti(run, task_id: str):
    return next(ti for ti in run.get_task_instances() if ti.task_id == task_id)


def test_failover_dag_claims_a_dead_servers_queue(airflow_db, replication_pair2, monkeypatch):
    from replication.zk.queue_storage import ReplicationQueueStorage

    pair = replication_pair2
    wait_for_queue(pair)
    extra = pair.source.servers[-1]
    storage = ReplicationQueueStorage(pair.source.zk, pair.source.paths)
    wals = storage.get_wals_in_queue(extra, "1")
    assert wals
    pair.source.kill(extra)
    pair.source.wait_until_dead(extra)
    monkeypatch.setenv("HBREP__replication__sleep__before__failover", "0")
    run = _dag("hbrep_failover").test()
    assert str(run.state) == "success"
    report = _ti(run, "claim").xcom_pull(task_ids="claim")
    (dead,) = [s for s in report["servers"] if s["server"] == extra]
    assert dead["action"] == "claimed"
    (survivor,) = pair.source.servers
    assert dead["claimer"] == survivor
    assert storage.get_wals_in_queue(survivor, f"1-{extra}") == wals
    assert storage.get_all_queues(extra) == []


def test_log_cleaner_dag_keeps_queued_wals(airflow_db, replication_pair):
    from replication.zk.queue_storage import ReplicationQueueStorage

    pair = replication_pair
    wait_for_queue(pair)
    run = _dag("hbrep_log_cleaner").test()
    assert str(run.state) == "success"
    report = _ti(run, "clean").xcom_pull(task_ids="clean")
    assert report["error"] is None
    queued = ReplicationQueueStorage(pair.source.zk, pair.source.paths).get_all_wals()
    assert queued and not any(path.rsplit("/", 1)[-1] in queued for path in report["deleted"])


# The ship's retries to a down peer sleep sleepforretries x 1..9 between its 10 attempts (HBase's backoff):
# 45 s at HBase's 1 s, 4.5 s at 100 ms. These tests are about what the DAG does once the queue fails.
FAST_RETRIES = ("HBREP__replication__source__sleepforretries", "100")


def test_ship_run_fails_loudly_when_lag_passes_the_alert_threshold(airflow_db, replication_pair, monkeypatch):
    pair = replication_pair
    wait_for_queue(pair)
    with pair.source.client() as client:
        client.put(TABLE, b"late", b"f", b"q", b"v")
    pair.peer.stop()  # the peer is down: nothing can be shipped, lag grows
    time.sleep(0.05)
    monkeypatch.setenv("HBREP__hbrep__lag__alert__ms", "1")
    monkeypatch.setenv(*FAST_RETRIES)
    run = _dag("hbrep_ship").test()
    states = {(ti.task_id, ti.map_index): str(ti.state) for ti in run.get_task_instances()}
    assert str(run.state) == "failed", states
    assert states[("lag_alert", -1)] == "failed"
    assert states[("peer.commit", 0)] == "failed"  # the failed queue is named there
    assert states[("peer.release", 0)] == "success"  # lease not left behind


def test_a_table_over_its_lag_target_fails_the_lag_check_and_records_an_alert(
    airflow_db, replication_pair, monkeypatch
):
    from replication.monitoring.lag_targets import set_lag_target
    from replication.monitoring.status import replication_status

    pair = replication_pair
    monkeypatch.setenv(*FAST_RETRIES)
    wait_for_queue(pair)
    set_lag_target(pair.source.zk, pair.source.paths, "1", TABLE, 300)
    with pair.source.client() as client:
        client.put(TABLE, b"late", b"f", b"q", b"v")
    pair.peer.stop()  # nothing ships: the edit grows older than the table's 300 ms target
    time.sleep(0.5)
    run = _dag("hbrep_ship").test()
    states = {(ti.task_id, ti.map_index): str(ti.state) for ti in run.get_task_instances()}
    assert states[("lag_alert", -1)] == "failed", states
    from replication.zk.cluster_key import ClusterKey

    status = replication_status(pair.source.zk, ClusterKey.parse(pair.source_key), pair.source.conf)
    (alert,) = [a for a in status.recent_alerts if a.get("kind") == "lag_target"]
    assert f"table {TABLE}" in alert["message"] and "target 300 ms" in alert["message"]
    assert alert["missed"][0]["table"] == TABLE and alert["missed"][0]["lag_ms"] > 300
