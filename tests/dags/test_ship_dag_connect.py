"""hbrep_ship in connect mode: dag.test() against real ZooKeeper, a real Spark Connect server and two
embedded clusters; the server's URL comes from a ``spark_connect`` connection through SparkConnectHook."""

from __future__ import annotations

import json

import pytest
from conftest import TABLE, peer_rows, wait_for_queue

pytestmark = pytest.mark.slow


@pytest.fixture
def connect_mode(spark_connect, monkeypatch):
    monkeypatch.setenv("HBREP__hbrep__spark__mode", "connect")
    monkeypatch.setenv("HBREP__replication__source__sleepforretries", "200")
    monkeypatch.setenv(
        "AIRFLOW_CONN_HBREP_SPARK_CONNECT",
        json.dumps({"conn_type": "spark_connect", "host": "127.0.0.1", "port": spark_connect.port}),
    )


def _ship_dag():
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_ship.py"), safe_mode=False)
    assert bag.import_errors == {}
    dag = bag.dags["hbrep_ship"]
    dag.deadline = None  # see test_ship_dag.py: dag.test() cannot finish a run of a DAG with a deadline
    return dag


def _states(run) -> dict[tuple[str, int], str]:
    return {(ti.task_id, ti.map_index): str(ti.state) for ti in run.get_task_instances()}


def test_connect_mode_ships_through_the_connection(airflow_db, replication_pair, connect_mode, monkeypatch):
    pair = replication_pair
    wait_for_queue(pair)
    with pair.source.client() as client:
        for i in range(20):
            client.put(TABLE, b"row%03d" % i, b"f", b"q", b"v%d" % i)
        client.put(TABLE, b"local", b"g", b"q", b"not-replicated")
    dag = _ship_dag()
    assert {t.task_id for t in dag.tasks} == {"peers", "peer.ship", "peer.release", "lag_alert"}
    assert dag.max_active_runs == 2  # the next run's ship task waits for the lease while this window runs
    run = dag.test()
    states = _states(run)
    assert str(run.state) == "success", states
    assert states[("peer.ship", 0)] == "success" and states[("peer.release", 0)] == "success"
    assert peer_rows(pair) == {b"row%03d" % i: b"v%d" % i for i in range(20)}
    ship = next(ti for ti in run.get_task_instances() if ti.task_id == "peer.ship")
    summary = ship.xcom_pull(task_ids="peer.ship", map_indexes=0)
    assert summary["passes"] == 1 and summary["rows"] == 20 and summary["lag_ms_at_end"] == {"1": 0}

    # nothing new: the branch is skipped (no job ran)
    second = dag.test()
    assert _states(second)[("peer.ship", 0)] == "skipped"

    # a window of 10 s: several passes in one task, edits written before it shipped by its first pass
    monkeypatch.setenv("HBREP__hbrep__ship__window__ms", "10000")
    with pair.source.client() as client:
        for i in range(20, 30):
            client.put(TABLE, b"row%03d" % i, b"f", b"q", b"v%d" % i)
    third = dag.test()
    states = _states(third)
    assert str(third.state) == "success", states
    summary = next(ti for ti in third.get_task_instances() if ti.task_id == "peer.ship").xcom_pull(
        task_ids="peer.ship", map_indexes=0
    )
    assert summary["passes"] > 1 and summary["shipping_passes"] == 1 and summary["rows"] == 10
    assert summary["ended"] == "window over"
    assert peer_rows(pair) == {b"row%03d" % i: b"v%d" % i for i in range(30)}
