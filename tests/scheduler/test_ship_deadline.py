"""The ship DAG's deadline alert under the scheduler: a run still going ``hbrep.lag.alert.ms`` after it was
queued (its peer made slow on purpose) fires the callback in the triggerer, which records the alert where
``hbrep status replication`` and the Replication view show it; runs within the threshold record nothing.

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
from conftest import SchedulerStack, scheduler_stack, task_instance

pytestmark = pytest.mark.slow

SHIP = "hbrep_ship"
THRESHOLD_MS = 25_000
ROWS = 350  # one WAL entry each; one entry per batch and at most 10 batches/s to the slow peer: >= 35 s


@pytest.fixture(scope="module")
def stack(tmp_path_factory, spark_connect) -> Iterator[SchedulerStack]:
    """Peer 1 limited to 1 byte/s (the throttler then lets one batch through per 100 ms cycle), batches of
    one entry, and a lag alert threshold of 25 s. The ship DAG on the session's Spark Connect server: the
    deadline is what is tested, and a spark-submit JVM per scheduled run cost this module a minute or more
    (spark-submit under the scheduler: tests/reliability/test_chaos.py)."""
    with scheduler_stack(
        tmp_path_factory.mktemp("deadline"),
        tables={"t": {"f": 1}},
        peers={"1": {"bandwidth": 1}},
        env_extra={
            "HBREP_SHIP_ON_EDITS": "false",  # scheduled runs only (tests/scheduler/test_failover_events.py)
            "HBREP__hbrep__lag__alert__ms": str(THRESHOLD_MS),
            "HBREP__replication__source__nb__capacity": "1",
        },
        spark_connect_port=spark_connect.port,
    ) as stack:
        yield stack


def _queued_ms(run: dict) -> int:
    return int(datetime.fromisoformat(run["queued_at"]).timestamp() * 1000)


def test_a_ship_run_past_the_lag_threshold_records_an_alert_shown_by_status_and_the_view(stack):
    api = stack.api
    api.set_paused(SHIP, False)
    before = api.wait_for_runs(SHIP, 1, run_type="scheduled", timeout=900)
    assert all(run["state"] == "success" for run in before), before
    first = max(before, key=_queued_ms)  # the last run before the load (a slow start may see two)

    with stack.source.client() as client:  # the load the slow peer takes >= 35 s to receive
        for i in range(ROWS):
            client.put("t", b"r%04d" % i, b"f", b"q", b"v%d" % i)
    deadline = time.monotonic() + 900
    slow = None
    looked_at: dict[str, int] = {}  # alerted run -> the rows (one entry each) its ship window shipped
    while slow is None:
        assert time.monotonic() < deadline, f"no lag alert for the run that shipped the load in 900 s: {looked_at}"
        for alert in stack.status().recent_alerts:
            if alert["run_id"] in looked_at or _queued_ms(api.run(SHIP, alert["run_id"])) <= _queued_ms(first):
                continue
            # an overloaded machine may also overrun the threshold with a run that shipped nothing: the alerted
            # run looked for is the one that shipped the load
            run = api.wait_for_run(SHIP, alert["run_id"], timeout=900)
            assert run["state"] == "success", run
            shipped = 0  # connect mode: the ship task's window committed its passes; its summary sums their rows
            if task_instance(api, SHIP, run["dag_run_id"], "peer.ship", 0)["state"] == "success":
                shipped = api.xcom(SHIP, run["dag_run_id"], "peer.ship", map_index=0)["rows"]
            looked_at[run["dag_run_id"]] = shipped
            if looked_at[run["dag_run_id"]] == ROWS:
                slow = run
        time.sleep(2)

    # Every alert names a run that overran the threshold (a run within it, like the first one when the
    # machine is not overloaded, never has one), and was recorded no earlier than queued + threshold.
    alerts = stack.status().recent_alerts
    for alert in alerts:
        assert alert["kind"] == "lag" and alert["dag_id"] == SHIP and alert["threshold_ms"] == THRESHOLD_MS
        run = api.run(SHIP, alert["run_id"])
        assert alert["at_ms"] >= _queued_ms(run) + THRESHOLD_MS, (alert, run)
        ended = datetime.fromisoformat(run["end_date"]).timestamp() * 1000 if run["end_date"] else time.time() * 1000
        assert ended - _queued_ms(run) > THRESHOLD_MS, (alert, run)
    message = f"{SHIP} run {slow['dag_run_id']} missed its deadline"

    # hbrep status replication (the command line, as an operator runs it)
    out = subprocess.run(
        [str(Path(sys.executable).parent / "hbrep"), "--cluster", stack.source_key, "status", "replication"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert message in out

    # the Replication view, served by the API server: its data, then the page in the browser
    status = stack.api.http.get(f"{stack.airflow.url}/hbrep/api/status").json()
    assert slow["dag_run_id"] in [a["run_id"] for a in status["recent_alerts"]]
    assert chromium_binary(), "chromium is not installed (make chromium)"
    page = load_page(  # the view answers a logged-in user only (issue 26): through Airflow's login page
        f"{stack.airflow.url}/hbrep/",
        "document.body.dataset.loaded === '1'",
        login=("admin", stack.airflow.admin_password()),
    )
    assert message in page.text
    assert page.errors == []
