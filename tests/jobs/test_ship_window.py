"""Ship windows on the real Spark Connect server: passes under one lease, edits written meanwhile shipped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from support import add_peer, create_table, table_state

from replication.cluster.source_cluster import open_source
from replication.jobs.connect import ConnectShipRunner
from replication.jobs.ship_window import run_window
from replication.monitoring.metrics import MetricsStore
from replication.source.cycle import snapshot_step
from replication.wal.model import Cell, CellType
from replication.zk import lease
from replication.zk.client import connected

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def peer_1(pair):
    add_peer(pair, "1")
    return "1"


@pytest.fixture
def conf(pair, spark_connect):
    return pair.conf.with_overrides(
        {"hbrep.spark.connect.url": spark_connect.url, "replication.source.sleepforretries": "200"}
    )


def _burst(pair, table: str, start: int, count: int) -> set[bytes]:
    keys = {f"row{i:05d}".encode() for i in range(start, start + count)}
    with pair.source.client() as client:
        client.batch(table, [Cell(k, b"f", b"q", 1000, CellType.PUT, b"v" * 50) for k in sorted(keys)])
    return keys


def test_a_window_ships_edits_written_while_it_runs_under_one_lease(pair, peer_1, spark, conf, tmp_path):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    written = _burst(pair, table, 0, 100)
    # a window of 0 is one pass (this one also starts the shared session's Python workers)
    with connected(pair.source_key) as zk, ConnectShipRunner(conf, tmp_path) as runner:
        first = run_window(zk, pair.source_key, conf, runner, owner="zero", work_dir=tmp_path, window_ms=0)
    assert len(first.passes) == 1 and first.rows == 100 and first.ended == "one pass (window 0)"

    owner = f"window-{uuid.uuid4().hex[:6]}"
    outcome: dict = {}
    shipped = [threading.Event() for _ in range(8)]

    def window() -> None:
        with connected(pair.source_key) as zk, ConnectShipRunner(conf, tmp_path) as runner:

            class Signalling:
                """The runner, telling the test each time a pass has shipped."""

                def run_ship(self, manifest_path: str, result_path: str, conf) -> object:
                    result = runner.run_ship(manifest_path, result_path, conf)
                    next(e for e in shipped if not e.is_set()).set()
                    return result

            outcome["report"] = run_window(
                zk, pair.source_key, conf, Signalling(), owner=owner, work_dir=tmp_path / "cycles", window_ms=30000
            )

    thread = threading.Thread(target=window)
    thread.start()
    try:
        written |= _burst(pair, table, 100, 100)  # written while the run is going on
        assert shipped[0].wait(60), "the run shipped nothing"
        with connected(pair.source_key) as zk:
            # the lease is held between passes: another run finds the peer busy
            other = snapshot_step(zk, pair.source_key, conf, owner="intruder", work_dir=tmp_path / "other")
            assert other.peers == [] and "1" in other.busy_peers
        written |= _burst(pair, table, 200, 100)
        assert shipped[1].wait(60), "the third burst was not shipped by a later pass of the same run"
    finally:
        thread.join(timeout=120)
    report = outcome["report"]
    assert report.ended == "window over"
    assert report.shipping_passes >= 2 and len(report.passes) > report.shipping_passes, report.passes
    assert report.rows == 200 and report.failures == []
    assert report.lag_ms_at_end == {"1": 0}
    summary = report.summary()
    assert summary["passes"] == len(report.passes) and summary["rows"] == 200 and summary["bytes"] > 0
    assert {r[0] for r in table_state(spark, pair.peer, table)} == written
    with connected(pair.source_key) as zk:
        source = open_source(zk, pair.source_key, conf)
        assert lease.holder(zk, source.paths, "1") is None  # released once, at the end
        recorded = MetricsStore(source.fs, source.root).load()
    recorded_ids = {c["cycle_id"] for c in recorded.cycles}
    assert {p.cycle_id for p in report.passes if p.queues} <= recorded_ids  # every shipping pass recorded
    assert not list((tmp_path / "cycles").glob("*/manifest.json"))  # committed passes leave no manifest


WINDOW_CHILD = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
from replication.config import Config
from replication.jobs.connect import ConnectShipRunner
from replication.jobs.ship_window import run_window
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey

key, conf_json, owner, window_ms, work, out = sys.argv[1:]
conf = Config.load(env={}, overrides=json.loads(conf_json))
with connected(ClusterKey.parse(key)) as zk, ConnectShipRunner(conf, work) as runner:
    report = run_window(zk, ClusterKey.parse(key), conf, runner, owner=owner, peer_ids=["1"], work_dir=work,
                        window_ms=int(window_ms))
open(out, "w").write(json.dumps(report.as_dict()))
"""


def _window_process(pair, conf, owner: str, window_ms: int, tmp_path) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / f"{owner}.json"
    args = [str(pair.source_key), json.dumps(conf.as_dict()), owner, str(window_ms), str(tmp_path / owner), str(out)]
    log = open(tmp_path / f"{owner}.log", "w")  # noqa: SIM115 (the child's, closed with the test's tmp_path)
    return subprocess.Popen([sys.executable, "-c", WINDOW_CHILD, *args], stdout=log, stderr=subprocess.STDOUT), out


SHIPPING_PASS = re.compile(r"Pass \d+ \([^)]*\): [1-9]\d* queue")


def _wait_for_shipping_passes(proc: subprocess.Popen, log: Path, count: int, seconds: float) -> None:
    """Wait until the window process's log shows ``count`` passes that shipped a queue (its LOG.info lines)."""
    deadline = time.monotonic() + seconds
    while len(SHIPPING_PASS.findall(log.read_text(errors="replace"))) < count:
        assert proc.poll() is None, f"the window process ended early: {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"fewer than {count} shipping passes in {seconds} s"
        time.sleep(0.1)


def test_a_waiting_run_takes_over_the_window_after_one_pass(pair, peer_1, spark, conf, tmp_path):
    """Two ship processes: the second waits for the lease, the first ends its window after its current pass
    (it saw the waiter), the second takes over; no pass overlaps and every row is shipped exactly once."""
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    written = _burst(pair, table, 0, 100)
    stop, lock = threading.Event(), threading.Lock()

    def load() -> None:
        start = 100
        while not stop.is_set():
            keys = _burst(pair, table, start, 20)
            with lock:
                written.update(keys)
            start += 20
            time.sleep(0.1)

    first, first_out = _window_process(pair, conf, "run-a", 90000, tmp_path)
    loader = threading.Thread(target=load)
    second = None
    try:
        with connected(pair.source_key) as zk:
            paths = open_source(zk, pair.source_key, conf).paths
            deadline = time.monotonic() + 120
            while (lease.holder(zk, paths, "1") or {}).get("owner") != "run-a":
                assert time.monotonic() < deadline and first.poll() is None, "the first window never took the lease"
                time.sleep(0.1)
            loader.start()
            # a window of 0 never waits: one pass that finds the peer busy
            with ConnectShipRunner(conf, tmp_path / "zero") as runner:
                zero = run_window(zk, pair.source_key, conf, runner, owner="zero", peer_ids=["1"],
                                  work_dir=tmp_path / "zero", window_ms=0)  # fmt: skip
            assert zero.ended == "every peer is leased by another run" and zero.rows == 0
            _wait_for_shipping_passes(first, tmp_path / "run-a.log", 2, 120)  # it ships the load, pass by pass
            second, second_out = _window_process(pair, conf, "run-b", 15000, tmp_path)
            assert first.wait(60) == 0, "the first window did not end after the second one started waiting"
            deadline = time.monotonic() + 60
            while (lease.holder(zk, paths, "1") or {}).get("owner") != "run-b":
                assert time.monotonic() < deadline, "the second window never took the lease"
                time.sleep(0.1)
            time.sleep(2)  # the second window ships the load too
            stop.set()
            loader.join(30)
            assert second.wait(60) == 0
            assert lease.holder(zk, paths, "1") is None
            assert zk.get_children(paths.lease_waiters_of("1")) == []  # no waiter left behind
    finally:
        stop.set()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    a, b = json.loads(first_out.read_text()), json.loads(second_out.read_text())
    assert a["ended"] == "successor waiting for the lease", a["ended"]
    assert b["ended"] == "window over" and a["failures"] == [] and b["failures"] == []
    a_end = max(p["started_ms"] + p["seconds"] * 1000 for p in a["pass_records"])
    b_start = min(p["started_ms"] for p in b["pass_records"])
    assert b_start >= a_end, "a pass of the second window started before the first window's last pass ended"
    assert b["shipping_passes"] >= 1 and a["shipping_passes"] >= 2
    # positions continuous: each row shipped once in all (no re-ship, nothing skipped), all on the peer
    assert a["rows"] + b["rows"] == len(written)
    assert {r[0] for r in table_state(spark, pair.peer, table)} == written


def test_a_stop_request_ends_the_window_after_the_pass_in_flight_and_commits_it(pair, peer_1, spark, conf, tmp_path):
    """The Airflow task's on_kill sets the request: the window of 90 s ends after the pass it is in, that
    pass committed and the lease released, and the next run goes on from there (no row shipped twice)."""
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    written = _burst(pair, table, 0, 100)
    requested = threading.Event()

    with connected(pair.source_key) as zk, ConnectShipRunner(conf, tmp_path) as runner:

        class StopAfterShipping:
            """The runner; a stop is requested while the first shipping pass is in flight."""

            def run_ship(self, manifest_path: str, result_path: str, conf) -> object:
                requested.set()  # as on_kill would, from the task's signal handler
                return runner.run_ship(manifest_path, result_path, conf)

        began = time.monotonic()
        # the window's length from hbrep.ship.window.ms (as the ship task reads it): 90 s, not one pass
        windowed = conf.with_overrides({"hbrep.ship.window.ms": "90000"})
        report = run_window(zk, pair.source_key, windowed, StopAfterShipping(), owner="killed", peer_ids=["1"],
                            work_dir=tmp_path / "killed", stop_requested=requested.is_set)  # fmt: skip
        took = time.monotonic() - began
        assert report.ended == "stop requested" and len(report.passes) == 1 and report.rows == 100, report.passes
        assert took < 60, f"the window ran {took:.0f}s after the stop"  # well short of its 90 s
        assert lease.holder(zk, open_source(zk, pair.source_key, conf).paths, "1") is None
        written |= _burst(pair, table, 100, 50)
        after = run_window(zk, pair.source_key, conf, runner, owner="next", peer_ids=["1"],
                           work_dir=tmp_path / "next")  # fmt: skip
    assert after.rows == 50  # positions went on from the stopped window's commit
    assert after.ended == "one pass (window 0)"  # hbrep.ship.window.ms at its default
    assert {r[0] for r in table_state(spark, pair.peer, table)} == written
