"""Lag targets per peer or per (peer, table), kept in hbrep's znodes, and which of them are missed.

``<hbrep root>/lag-targets/<peer>`` holds ``{"peer": ms or null, "tables": {table: ms}}``. A table's own
target wins over the peer's. The lag compared is now − the table's replicated-through time
(replicated_through.py), so a target is missed as soon as an edit older than it is still unshipped. The znode
is read and written by :class:`replication.zk.lag_target_storage.LagTargetStorage`.
"""

from __future__ import annotations

from typing import Any

from kazoo.client import KazooClient

from replication.errors import HbrepError
from replication.monitoring.replicated_through import ReplicatedThrough
from replication.zk.lag_target_storage import LagTargetStorage
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import normalize_table


class BadLagTarget(HbrepError):
    """A lag target that is not a positive number of milliseconds."""


def get_lag_targets(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> dict[str, Any]:
    """``{"peer": ms or None, "tables": {table: ms}}`` (empty when none was set)."""
    raw = LagTargetStorage(zk, paths).read(peer_id)
    if raw is None:
        return {"peer": None, "tables": {}}
    return {"peer": raw.get("peer"), "tables": dict(raw.get("tables") or {})}


def set_lag_target(
    zk: KazooClient, paths: ZNodePaths, peer_id: str, table: str | None, ms: int, margin_ms: int = 0
) -> dict[str, Any]:
    """Set (``ms`` > 0) or clear (``ms`` == 0) the target of the peer or of one of its tables; the new targets.

    A target not above ``margin_ms`` (``hbrep.replicated.through.margin.ms``) is refused: a caught-up peer
    reports that much lag, so it could never be met."""
    if ms < 0:
        raise BadLagTarget(f"lag target {ms} ms: give a positive number of milliseconds (0 clears it)")
    if 0 < ms <= margin_ms:
        raise BadLagTarget(
            f"lag target {ms} ms is not above hbrep.replicated.through.margin.ms ({margin_ms} ms), the lag a "
            "caught-up peer reports: it could never be met"
        )
    targets = get_lag_targets(zk, paths, peer_id)
    if table is None:
        targets["peer"] = ms or None
    elif ms:
        targets["tables"][normalize_table(table)] = ms
    else:
        targets["tables"].pop(normalize_table(table), None)
    LagTargetStorage(zk, paths).write(peer_id, targets)
    return targets


def target_for(targets: dict[str, Any], table: str) -> int | None:
    """The target that applies to ``table``: its own, else the peer's, else None."""
    return targets["tables"].get(normalize_table(table)) or targets.get("peer")


def missed_targets(value: ReplicatedThrough, targets: dict[str, Any], now_ms: int) -> list[dict[str, Any]]:
    """The (peer, table) pairs whose lag is over their target, worst first."""
    missed = []
    for table, through in value.tables.items():
        target = target_for(targets, table)
        lag = max(0, now_ms - through)
        if target and lag > target:
            missed.append({"peer_id": value.peer_id, "table": table, "lag_ms": lag, "target_ms": target})
    if not value.tables and targets.get("peer"):
        lag = max(0, now_ms - value.through_ms)
        if lag > targets["peer"]:
            missed.append({"peer_id": value.peer_id, "table": None, "lag_ms": lag, "target_ms": targets["peer"]})
    return worst_first(missed)


def worst_first(missed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Missed targets, the one furthest over its target first."""
    return sorted(missed, key=lambda m: m["lag_ms"] - m["target_ms"], reverse=True)
