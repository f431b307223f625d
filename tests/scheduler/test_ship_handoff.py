"""Ship windows under the scheduler (connect mode): the next scheduled run's ship task starts while a
window is still open, waits for the peer's lease, and the open window hands over after its current pass.

Under a steady load across three scheduled runs: the windows of the first runs end because the next run
waited ("successor waiting for the lease"), before their own end; the next ship task started while the
previous one still ran (two active runs); every row written reaches the peer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime

import pytest
from conftest import SchedulerStack, scheduler_stack, task_instance
from support import table_state

from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow

SHIP = "hbrep_ship"
WINDOW_MS = 90_000  # longer than the schedule's minute: a window ends early only when the next run waits


@pytest.fixture(scope="module")
def stack(tmp_path_factory, spark_connect) -> Iterator[SchedulerStack]:
    with scheduler_stack(
        tmp_path_factory.mktemp("handoff"),
        tables={"t": {"f": 1}},
        peers={"1": {}},
        env_extra={
            "HBREP_SHIP_ON_EDITS": "false",  # the hand-off between scheduled runs only
            "HBREP__hbrep__spark__mode": "connect",
            "HBREP__hbrep__ship__window__ms": str(WINDOW_MS),
            "HBREP__replication__source__sleepforretries": "200",
        },
        spark_connect_port=spark_connect.port,
    ) as stack:
        yield stack


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_the_next_run_takes_the_window_over_and_every_row_arrives(stack, spark):
    api = stack.api
    written: set[bytes] = set()
    stop = threading.Event()

    def load() -> None:
        i = 0
        with stack.source.client() as client:
            while not stop.is_set():
                keys = [b"r%06d" % n for n in range(i, i + 20)]
                client.batch("t", [Cell(k, b"f", b"q", 1000, CellType.PUT, b"v") for k in keys])
                written.update(keys)
                i += 20
                time.sleep(0.5)

    loader = threading.Thread(target=load)
    loader.start()
    try:
        api.set_paused(SHIP, False)
        deadline = time.monotonic() + 900
        while True:  # three scheduled runs that shipped, the first two finished
            runs = api.runs(SHIP, run_type="scheduled")
            done = [r for r in runs if r["state"] == "success"]
            if len(done) >= 2 and len(runs) >= 3:
                break
            assert time.monotonic() < deadline, f"no two finished scheduled ship runs: {runs}"
            time.sleep(2)
    finally:
        stop.set()
        loader.join(60)
    stack.wait_drained(timeout=300)
    stack.flush("t")
    assert {r[0] for r in table_state(spark, stack.peer, "t")} == written

    runs = api.runs(SHIP, run_type="scheduled")
    ships = {r["dag_run_id"]: task_instance(api, SHIP, r["dag_run_id"], "peer.ship", 0) for r in runs}
    handed_over = 0
    for older in runs:
        ship = ships[older["dag_run_id"]]
        if older["state"] != "success" or ship["state"] != "success":
            continue
        summary = api.xcom(SHIP, older["dag_run_id"], "peer.ship", map_index=0)
        if summary["ended"] != "successor waiting for the lease":
            continue
        # The successor is the run whose ship task started while this window was open and went on after it:
        # not always the next by run_after (the scheduler may start two intervals' runs at once, after
        # an unpause, and either one may take the lease first).
        end = _ts(ship["end_date"])
        successors = [
            run_id
            for run_id, other in ships.items()
            if run_id != older["dag_run_id"]
            and other["start_date"]
            and _ts(other["start_date"]) < end
            and (not other["end_date"] or _ts(other["end_date"]) > end)
        ]
        assert successors, (ship, ships)
        # this window ended before its own end
        assert end - _ts(ship["start_date"]) < WINDOW_MS / 1000, ship
        handed_over += 1
        # make up's executor (PreloadingLocalExecutor) imported the Connect client before forking the task
        log = api.task_log(SHIP, older["dag_run_id"], "peer.ship", ship["try_number"], map_index=0)
        assert "Spark Connect client: inherited from the executor's pre-import" in log, log[-2000:]
    assert handed_over >= 1, [(r["dag_run_id"], r["state"]) for r in runs]
