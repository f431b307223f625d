"""The ship DAG's deadline alert under the scheduler: a run still going ``hbrep.lag.alert.ms`` after it was
queued (its peer made slow on purpose) fires the callback in the triggerer, which records the alert where
``hbrep status replication`` and the Replication view show it; a run within the threshold fires nothing.

``dag.test()`` cannot run deadlines (tests/dags strip them); this is where the deadline is tested.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from cdp import chromium_binary, load_page
from conftest import SchedulerStack, scheduler_stack

pytestmark = pytest.mark.slow

SHIP = "hbrep_ship"
THRESHOLD_MS = 40_000
ROWS = 600  # one WAL entry each; one entry per batch and at most 10 batches/s to the slow peer: >= 60 s


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[SchedulerStack]:
    """Peer 1 limited to 1 byte/s (the throttler then lets one batch through per 100 ms cycle), batches of
    one entry, and a lag alert threshold of 40 s."""
    with scheduler_stack(
        tmp_path_factory.mktemp("deadline"),
        tables={"t": {"f": 1}},
        peers={"1": {"bandwidth": 1}},
        env_extra={
            "HBREP__hbrep__lag__alert__ms": str(THRESHOLD_MS),
            "HBREP__replication__source__nb__capacity": "1",
        },
    ) as stack:
        yield stack


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def test_a_ship_run_past_the_lag_threshold_records_an_alert_shown_by_status_and_the_view(stack):
    api = stack.api
    api.set_paused(SHIP, False)
    (quick,) = api.wait_for_runs(SHIP, 1, run_type="scheduled", timeout=900)
    assert quick["state"] == "success", quick
    assert _seconds(quick["queued_at"], quick["end_date"]) < THRESHOLD_MS / 1000
    assert stack.status()["recent_alerts"] == []  # within the threshold: no alert

    with stack.source.client() as client:
        for i in range(ROWS):
            client.put("t", b"r%04d" % i, b"f", b"q", b"v%d" % i)
    deadline = time.monotonic() + 480
    while not (alerts := stack.status()["recent_alerts"]):
        assert time.monotonic() < deadline, "no lag alert recorded in 480 s"
        time.sleep(5)
    (alert,) = alerts
    assert alert["kind"] == "lag" and alert["dag_id"] == SHIP and alert["threshold_ms"] == THRESHOLD_MS
    slow = api.wait_for_run(SHIP, alert["run_id"], timeout=600)
    assert slow["state"] == "success", slow
    assert _seconds(slow["queued_at"], slow["end_date"]) > THRESHOLD_MS / 1000
    committed = api.xcom(SHIP, slow["dag_run_id"], "peer.commit", map_index=0)
    assert committed["peers"]["1"]["entries_shipped"] == ROWS  # this run shipped the slow load
    assert alert["at_ms"] >= int(datetime.fromisoformat(slow["queued_at"]).timestamp() * 1000) + THRESHOLD_MS

    # hbrep status replication (the command line, as an operator runs it)
    out = subprocess.run(
        [str(Path(sys.executable).parent / "hbrep"), "--cluster", stack.source_key, "status", "replication"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert f"{SHIP} run {slow['dag_run_id']} missed its deadline" in out

    # the Replication view, served by the API server: its data, then the page in the browser
    status = stack.api.http.get(f"{stack.airflow.url}/hbrep/api/status").json()
    assert [a["run_id"] for a in status["recent_alerts"]] == [slow["dag_run_id"]]
    assert chromium_binary(), "chromium is not installed (make chromium)"
    page = load_page(f"{stack.airflow.url}/hbrep/", "document.body.dataset.loaded === '1'")
    assert f"{SHIP} run {slow['dag_run_id']} missed its deadline" in page.text
    assert page.errors == []
