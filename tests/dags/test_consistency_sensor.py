"""hbrep_wait_for_peer (ConsistencyTokenOperator + WaitForConsistency) in dag.test() runs on embedded clusters.

dag.test() runs a deferred task's trigger in line (as the triggerer would), so the trigger's checks are
the real ones against ZooKeeper and the WALs; the ship cycle runs beside it, on the session's Spark.
"""

from __future__ import annotations

import threading
import time

import pytest
from conftest import TABLE, peer_rows, wait_for_queue

pytestmark = pytest.mark.slow

DAG_ID = "hbrep_wait_for_peer"


def _dag(monkeypatch):
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    monkeypatch.setenv("HBREP_CONSISTENCY_POLL_S", "1")  # read when the DAG file is parsed
    bag = DagBag(dag_folder=str(airflow_env.DAGS / f"{DAG_ID}.py"), safe_mode=False)
    assert bag.import_errors == {}
    return bag.dags[DAG_ID]


def _ti(run, task_id: str):
    return next(ti for ti in run.get_task_instances() if ti.task_id == task_id)


def _deferred(run_after: float) -> bool:
    """True once a ``wait`` task of a run started after ``run_after`` has deferred to its trigger."""
    from datetime import UTC, datetime

    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    since = datetime.fromtimestamp(run_after, UTC)
    with create_session() as session:
        tis = session.query(TaskInstance).filter_by(dag_id=DAG_ID, task_id="wait").all()
        return any(ti.next_method == "execute_complete" and ti.start_date and ti.start_date >= since for ti in tis)


def test_wait_defers_until_a_ship_cycle_puts_the_edits_on_the_peer(airflow_db, replication_pair, spark, monkeypatch):
    from replication.config import Config
    from replication.jobs.launch import runner_for
    from replication.source.cycle import run_cycle
    from replication.wal.model import Cell, CellType
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey

    pair = replication_pair
    wait_for_queue(pair)
    rows = {f"c{i:03d}".encode() for i in range(40)}
    with pair.source.client() as client:
        client.batch(TABLE, [Cell(r, b"f", b"q", 1000, CellType.PUT, r) for r in sorted(rows)])
    dag = _dag(monkeypatch)
    started, errors = time.time() - 1, []

    def ship_once_deferred() -> None:
        try:
            deadline = time.monotonic() + 150
            while not _deferred(started):
                if time.monotonic() > deadline:
                    raise AssertionError("the sensor never deferred")
                time.sleep(0.2)
            key = ClusterKey.parse(pair.source_key)
            conf = Config.load(env={})
            with connected(key) as zk:
                run_cycle(zk, key, conf, runner=runner_for(conf, spark))
        except BaseException as exc:
            errors.append(exc)

    shipper = threading.Thread(target=ship_once_deferred)
    shipper.start()
    try:
        run = dag.test(run_conf={"peer": "1"})
    finally:
        shipper.join(timeout=200)
    assert not errors, errors
    assert str(run.state) == "success"
    taken = _ti(run, "take").xcom_pull(task_ids="take")
    assert taken["peer_id"] == "1" and taken["pending_bytes"] > 0  # not on the peer when the token was taken
    result = _ti(run, "wait").xcom_pull(task_ids="wait")
    assert result["consistent"] is True and result["pending"] == [] and result["token"] == taken["token"]
    assert result["checks"] >= 2  # the sensor's own check, then the trigger's until the cycle shipped
    assert set(peer_rows(pair)) == rows


def test_a_token_that_expires_while_waiting_fails_the_run(airflow_db, replication_pair, monkeypatch, capfd):
    from airflow.utils.state import TaskInstanceState

    pair = replication_pair
    wait_for_queue(pair)
    with pair.source.client() as client:
        client.put(TABLE, b"x", b"f", b"q", b"v")  # never shipped: nobody runs a cycle
    monkeypatch.setenv("HBREP__hbrep__consistency__token__ttl__ms", "8000")
    run = _dag(monkeypatch).test(run_conf={"peer": "1"})
    assert str(run.state) == "failed"
    assert _ti(run, "take").state == TaskInstanceState.SUCCESS
    assert _ti(run, "wait").state == TaskInstanceState.FAILED
    token = _ti(run, "take").xcom_pull(task_ids="take")["token"]
    out = capfd.readouterr().out  # dag.test() logs the tasks to stdout
    assert f"token {token}: 1 WAL(s)" in out  # the trigger saw it pending first ...
    assert f"consistency token {token} expired at" in out  # ... then expired, which failed the task
    assert peer_rows(pair) == {}


def test_an_unknown_peer_fails_the_run_at_take(airflow_db, replication_pair, monkeypatch, capfd):
    from airflow.utils.state import TaskInstanceState

    wait_for_queue(replication_pair)
    run = _dag(monkeypatch).test(run_conf={"peer": "9"})
    assert str(run.state) == "failed"
    assert _ti(run, "take").state == TaskInstanceState.FAILED
    assert "peer '9' does not exist" in capfd.readouterr().out
