"""Lag targets as typed models: ``LagTargets.to_json()`` is the znode's document and ``set_lag_target --json``
(``{"peer": ms or null, "tables": {table: ms}}``, as when the targets were a dict); a missed target is a
``MissedLagTarget`` whose ``to_json()`` is the old record."""

from __future__ import annotations

import json

from replication.monitoring.lag_targets import LagTargets, missed_targets
from replication.monitoring.replicated_through import ReplicatedThrough
from replication.monitoring.status_models import MissedLagTarget


def test_targets_round_trip_the_stored_document() -> None:
    assert json.dumps(LagTargets.from_json(None).to_json()) == json.dumps({"peer": None, "tables": {}})
    assert LagTargets.from_json({}) == LagTargets(None, {})
    stored = {"peer": 60000, "tables": {"ns:b": 1000, "ns:a": 500}}
    targets = LagTargets.from_json(stored)
    assert json.dumps(targets.to_json()) == json.dumps(stored)  # same keys, values and order
    assert (targets.for_table("ns:a"), targets.for_table("ns:other")) == (500, 60000)
    assert LagTargets(None, {"ns:a": 500}).for_table("ns:other") is None


def test_missed_targets_worst_first_with_the_old_records() -> None:
    now = 100_000
    value = ReplicatedThrough("1", 0, {"ns:a": now - 2_000, "ns:b": now - 9_000, "ns:c": now - 100})
    missed = missed_targets(value, LagTargets(5_000, {"ns:a": 1_000}), now)
    assert all(isinstance(m, MissedLagTarget) for m in missed)
    assert [m.to_json() for m in missed] == [
        {"peer_id": "1", "table": "ns:b", "lag_ms": 9_000, "target_ms": 5_000},
        {"peer_id": "1", "table": "ns:a", "lag_ms": 2_000, "target_ms": 1_000},
    ]
    # no table known: the peer's own target against the peer's replicated-through time
    bare = missed_targets(ReplicatedThrough("2", now - 7_000), LagTargets(5_000), now)
    assert [m.to_json() for m in bare] == [{"peer_id": "2", "table": None, "lag_ms": 7_000, "target_ms": 5_000}]
    assert missed_targets(ReplicatedThrough("2", now - 7_000), LagTargets(), now) == []
