"""Ship windows on the real Spark Connect server: passes under one lease, edits written meanwhile shipped."""

from __future__ import annotations

import threading
import uuid

import pytest
from support import add_peer, create_table, table_state

from replication.cluster.source_cluster import open_source
from replication.jobs.connect import ConnectShipRunner
from replication.metrics import MetricsStore
from replication.ship_window import run_window
from replication.source import lease
from replication.source.cycle import snapshot_step
from replication.wal.model import Cell, CellType
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
    recorded_ids = {c["cycle_id"] for c in recorded["cycles"]}
    assert {p.cycle_id for p in report.passes if p.queues} <= recorded_ids  # every shipping pass recorded
    assert not list((tmp_path / "cycles").glob("*/manifest.json"))  # committed passes leave no manifest
