"""The cycle report's shape at its edges: ``CycleReport.as_dict()`` is what ``hbrep ship --once --json``
prints, the commit task's XCom carries and the metrics store's cycle records hold. Its keys, values and
key order are the ones the report had when its peers and queues were dicts; this test pins them."""

from __future__ import annotations

import json

import pytest

from replication.source import cycle
from replication.source.commit import QueueCommit
from replication.source.cycle import CycleReport, PeerCycle, QueueCycle, summarize
from replication.source.manifest import Manifest, PeerTask, QueueResult, ShipResult, WalProgress

NOW_MS = 1_000_000


def peer(peer_id: str, enabled: bool, config: dict | None = None) -> PeerTask:
    return PeerTask(peer_id, f"zk:2181:/{peer_id}", enabled, config or {}, None, None, [])


def manifest() -> Manifest:
    peers = {
        "1": peer("1", True),
        "2": peer("2", False),
        "3": peer("3", True, {"configuration": {"hbrep.peer.shadow": "true"}}),
    }
    return Manifest("c-1", 1, "zk:2181:/src", "/root", "cid", {}, peers, [])


def results() -> ShipResult:
    ok = QueueResult(
        "rs1,1,1", "1", "1", "ok",
        [WalProgress("w1", 0, 100, True, 3), WalProgress("w2", 0, 40, False, 1), WalProgress("w3", 5, 5, False, 0)],
        metrics={"logEditsRead": 10, "logEditsFiltered": 2, "shippedOps": 7, "shippedBytes": 900,
                 "lastShippedWriteTime": NOW_MS - 250},
    )  # fmt: skip
    failed = QueueResult("rs2,1,1", "1", "1", "failed", [], error="peer 1 is down", metrics={"logEditsRead": 1})
    waiting = QueueResult("rs1,1,1", "9", "9", "waiting", [WalProgress("w9", 0, 0, False, 0)], error="serial order")
    return ShipResult("c-1", [ok, failed, waiting])


def commits() -> dict[str, QueueCommit]:
    return {
        "rs1,1,1/1": QueueCommit("rs1,1,1/1", "1", True, {"w2": 40}, ["w1"]),
        "rs1,1,1/9": QueueCommit("rs1,1,1/9", "9", False, note="queue changed since the snapshot"),
    }


def totals(**counts: int) -> dict:
    names = ("queues", "wals_read", "entries_read", "entries_shipped", "rows_shipped", "bytes_shipped", "filtered",
             "positions_advanced", "wals_finished", "failed_queues", "waiting_queues")  # fmt: skip
    return {name: counts.get(name, 0) for name in names}


EXPECTED = {
    "cycle_id": "c-1",
    "spark_job": False,
    "peers": {
        "1": {"state": "ENABLED", "lag_ms": 250, **totals(queues=2, wals_read=2, entries_read=11, entries_shipped=9,
              rows_shipped=7, bytes_shipped=900, filtered=2, positions_advanced=2, wals_finished=1, failed_queues=1)},
        "2": {"state": "DISABLED", "lag_ms": None, **totals()},
        "3": {"state": "SHADOW", "lag_ms": None, **totals()},
        "9": {"state": "?", "lag_ms": None, **totals(queues=1, waiting_queues=1)},
    },
    "queues": [
        {"queue": "rs1,1,1/1", "peer_id": "1", "status": "ok", "error": None, "drained": False, "committed": True,
         "commit_note": "", "metrics": {"logEditsRead": 10, "logEditsFiltered": 2, "shippedOps": 7,
                                        "shippedBytes": 900, "lastShippedWriteTime": NOW_MS - 250}},
        {"queue": "rs2,1,1/1", "peer_id": "1", "status": "failed", "error": "peer 1 is down", "drained": False,
         "committed": False, "commit_note": "", "metrics": {"logEditsRead": 1}},
        {"queue": "rs1,1,1/9", "peer_id": "9", "status": "waiting", "error": "serial order", "drained": False,
         "committed": False, "commit_note": "queue changed since the snapshot", "metrics": {}},
    ],
    "busy_peers": {},
    "disabled": "",
}  # fmt: skip


@pytest.fixture
def report(monkeypatch: pytest.MonkeyPatch) -> CycleReport:
    monkeypatch.setattr(cycle.time, "time", lambda: NOW_MS / 1000)
    return summarize(manifest(), results(), commits())


def test_as_dict_is_the_old_dict_with_its_key_order(report: CycleReport) -> None:
    # json.dumps keeps the key order: equal strings mean equal keys, values and order at every level
    assert json.dumps(report.as_dict()) == json.dumps(EXPECTED)


def test_the_report_reads_as_attributes(report: CycleReport) -> None:
    assert all(isinstance(p, PeerCycle) for p in report.peers.values())
    assert all(isinstance(q, QueueCycle) for q in report.queues)
    assert (report.peers["1"].rows_shipped, report.peers["1"].lag_ms, report.peers["9"].state) == (7, 250, "?")
    assert [q.queue for q in report.failed_queues()] == ["rs2,1,1/1"]
    assert [q.failed for q in report.queues] == [False, True, False]


def test_busy_peers_and_disabled_reach_the_dict(report: CycleReport) -> None:
    report.busy_peers = {"4": "another cycle (x) is shipping peer 4"}
    report.disabled = "replication is disabled"
    out = report.as_dict()
    assert list(out) == ["cycle_id", "spark_job", "peers", "queues", "busy_peers", "disabled"]
    assert (out["busy_peers"], out["disabled"]) == ({"4": "another cycle (x) is shipping peer 4"}, report.disabled)
