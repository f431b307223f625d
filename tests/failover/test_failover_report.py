"""``FailoverReport.as_dict()`` (``hbrep failover --once --json``, the failover task's XCom): each server's
``recovery`` is now the RecoveryResult itself, and the dict is as when it was stored as ``asdict(result)``."""

from __future__ import annotations

import json
from dataclasses import asdict

from replication.cluster.recovery import RecoveryResult
from replication.failover import FailoverReport, ServerFailover


def test_as_dict_keeps_the_recovery_as_its_fields() -> None:
    recovery = RecoveryResult("rs1,1,1", wals=["w1"], archived=["w1"], entries_read=3, truncated_tails={"w1": 7})
    server = ServerFailover("rs1,1,1", 100, "claimed", "rs2,1,1", {"1": "1-rs1,1,1"}, [], 1, recovery)
    waiting = ServerFailover("rs3,1,1", 200, "waiting", wait_ms=5)
    out = FailoverReport(["rs2,1,1"], [server, waiting]).as_dict()
    old_server = {
        "server": "rs1,1,1", "first_seen_dead_ms": 100, "action": "claimed", "claimer": "rs2,1,1",
        "moved": {"1": "1-rs1,1,1"}, "dropped": [], "wals_moved": 1, "recovery": asdict(recovery), "wait_ms": 0,
        "error": None,
    }  # fmt: skip
    old_waiting = {
        "server": "rs3,1,1", "first_seen_dead_ms": 200, "action": "waiting", "claimer": None, "moved": {},
        "dropped": [], "wals_moved": 0, "recovery": None, "wait_ms": 5, "error": None,
    }  # fmt: skip
    expected = {"live_servers": ["rs2,1,1"], "servers": [old_server, old_waiting], "disabled": "", "mode": "hbrep"}
    assert json.dumps(out) == json.dumps(expected)
