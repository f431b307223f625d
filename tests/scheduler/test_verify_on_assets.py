"""Under the real scheduler and triggerer: each ship run's commit emits the peer's asset event with what
became replicated ("replicated through", per table, and the value before), and
``hbrep_verify_replicated``, scheduled on those assets and no clock, verifies exactly that interval; the
WaitForConsistency sensor of ``hbrep_wait_for_peer`` waits in the triggerer."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from conftest import SchedulerStack, scheduler_stack, task_instance

from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow

SHIP, VERIFY = "hbrep_ship", "hbrep_verify_replicated"


@pytest.fixture(scope="module")
def stack(tmp_path_factory, spark_connect) -> Iterator[SchedulerStack]:
    """Ship and the checks on the session's Spark Connect server, as ``make up`` runs them."""
    with scheduler_stack(tmp_path_factory.mktemp("assets"), tables={"t": {"f": 1}}, peers={"1": {}},
                         spark_connect_port=spark_connect.port) as stack:  # fmt: skip
        stack.api.wait_for_dag(VERIFY, timeout=180)
        stack.api.wait_for_dag("hbrep_wait_for_peer", timeout=180)
        yield stack


def _write(stack: SchedulerStack, start: int, count: int) -> tuple[int, int]:
    """``count`` rows with server timestamps; (ms before the first, ms after the last)."""
    before = int(time.time() * 1000)
    with stack.source.client() as client:
        for i in range(start, start + count):
            client.batch("t", [Cell(b"r%05d" % i, b"f", b"q", 2**63 - 1, CellType.PUT, b"v")])
    return before, int(time.time() * 1000)


def _asset_events(stack: SchedulerStack) -> list[dict]:
    """Peer 1's asset events. Airflow answers 500 while an event's triggered run is queued but not started
    (its response model requires the run's start_date), so a failed read is tried again."""
    from replication.devstack.airflow_api import AirflowApiError

    for attempt in range(30):
        try:
            events = stack.api.call("GET", "/assets/events", params={"limit": 100, "order_by": "timestamp"})
            return [e for e in events["asset_events"] if e["uri"].endswith("/peer/1")]
        except AirflowApiError:
            if attempt == 29:
                raise
            time.sleep(2)
    raise AssertionError("unreachable")


def test_a_verify_run_triggered_by_a_commit_checks_the_interval_it_made_replicated(stack):
    api = stack.api
    api.set_paused(VERIFY, False)
    api.set_paused(SHIP, False)
    _write(stack, 0, 40)
    deadline = time.monotonic() + 600
    while not [e for e in _asset_events(stack) if e["extra"].get("replicated_through_ms")]:
        assert time.monotonic() < deadline, "no ship run committed peer 1 with its replicated-through time"
        time.sleep(2)
    _first_at, last_at = _write(stack, 40, 40)  # replicated by a later commit: the interval to verify

    deadline = time.monotonic() + 900
    while True:
        checked = []
        for run in api.runs(VERIFY):
            if run["state"] == "success" and run["run_type"] == "asset_triggered":
                ti = task_instance(api, VERIFY, run["dag_run_id"], "targets")
                if ti["state"] == "success":
                    checked.append((run, api.xcom(VERIFY, run["dag_run_id"], "targets")))
        covering = [(r, t) for r, t in checked if any(x["start_ms"] <= last_at < x["end_ms"] for x in t)]
        if covering:
            break
        assert time.monotonic() < deadline, f"no asset-triggered verify run covered the second write: {checked}"
        time.sleep(2)
    run, targets = covering[0]
    (target,) = targets
    assert (target["peer_id"], target["table"]) == ("1", "t")
    counters = api.xcom(VERIFY, run["dag_run_id"], "verify", map_index=0)
    assert counters["BADROWS"] == 0 and counters["GOODROWS"] >= 1, counters
    # the interval is the one an asset event announced: from the table's previous time to its new one
    announced = [
        (e["extra"]["tables_before"].get("t"), e["extra"]["tables"]["t"])
        for e in _asset_events(stack)
        if e["extra"].get("tables_before")
    ]
    assert any(start <= target["start_ms"] and target["end_ms"] <= end for start, end in announced), announced
    assert target["end_ms"] - target["start_ms"] < 15 * 60 * 1000, "the run checks an interval, not the day"
    api.set_paused(SHIP, True)


def test_the_consistency_sensor_defers_to_the_real_triggerer_until_the_peer_has_every_row(stack):
    """hbrep_wait_for_peer triggered through the REST API: its WaitForConsistency sensor is deferred
    (the triggerer, not a worker, waits) while nothing ships, and succeeds once the ship DAG has shipped
    every row written before the token."""
    from replication.cluster.table_reader import ScanSpec, scan_rows

    api = stack.api
    api.set_paused(SHIP, True)
    api.set_paused("hbrep_wait_for_peer", False)
    _write(stack, 1000, 30)
    written = {b"r%05d" % i for i in range(1000, 1030)}
    run_id = api.trigger("hbrep_wait_for_peer", {"peer": "1"})
    deadline = time.monotonic() + 300
    while task_instance(api, "hbrep_wait_for_peer", run_id, "wait")["state"] != "deferred":
        assert time.monotonic() < deadline, task_instance(api, "hbrep_wait_for_peer", run_id, "wait")
        time.sleep(2)
    time.sleep(10)  # nothing ships: the trigger keeps waiting
    assert task_instance(api, "hbrep_wait_for_peer", run_id, "wait")["state"] == "deferred"
    api.set_paused(SHIP, False)
    run = api.wait_for_run("hbrep_wait_for_peer", run_id, timeout=600)
    api.set_paused(SHIP, True)
    assert run["state"] == "success", run
    result = api.xcom("hbrep_wait_for_peer", run_id, "wait")
    assert result["consistent"] is True, result
    with stack.peer.client() as client:
        on_peer = {row for row, _ in scan_rows(client, "t", ScanSpec())}
    assert written <= on_peer, sorted(written - on_peer)[:5]
