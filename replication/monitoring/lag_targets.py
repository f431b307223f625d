"""Lag targets per peer or per (peer, table), kept in hbrep's znodes, and which of them are missed.

``<hbrep root>/lag-targets/<peer>`` holds ``{"peer": ms or null, "tables": {table: ms}}``. A table's own
target wins over the peer's. The lag compared is now − the table's replicated-through time
(replicated_through.py), so a target is missed as soon as an edit older than it is still unshipped. The znode
is read and written by :class:`replication.zk.lag_target_storage.LagTargetStorage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient

from replication.errors import HbrepError
from replication.monitoring.replicated_through import ReplicatedThrough
from replication.monitoring.status_models import MissedLagTarget
from replication.zk.lag_target_storage import LagTargetStorage
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import normalize_table


class BadLagTarget(HbrepError):
    """A lag target that is not a positive number of milliseconds."""


@dataclass(frozen=True)
class LagTargets:
    """A peer's lag targets: its own (``peer``, None when unset) and its tables' (``tables``, table → ms).

    :meth:`to_json` is the znode's document and what ``hbrep set_lag_target --json`` prints:
    ``{"peer": ms or null, "tables": {table: ms}}``.
    """

    peer: int | None = None
    tables: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> LagTargets:
        """From the stored document (None, no znode: no targets)."""
        if raw is None:
            return cls()
        return cls(raw.get("peer"), dict(raw.get("tables") or {}))

    def for_table(self, table: str) -> int | None:
        """The target that applies to ``table``: its own, else the peer's, else None."""
        return self.tables.get(normalize_table(table)) or self.peer

    def to_json(self) -> dict[str, Any]:
        return {"peer": self.peer, "tables": dict(self.tables)}


def get_lag_targets(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> LagTargets:
    """The peer's lag targets (none set: ``LagTargets()``)."""
    return LagTargets.from_json(LagTargetStorage(zk, paths).read(peer_id))


def set_lag_target(
    zk: KazooClient, paths: ZNodePaths, peer_id: str, table: str | None, ms: int, margin_ms: int = 0
) -> LagTargets:
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
    current = get_lag_targets(zk, paths, peer_id)
    peer, tables = current.peer, dict(current.tables)
    if table is None:
        peer = ms or None
    elif ms:
        tables[normalize_table(table)] = ms
    else:
        tables.pop(normalize_table(table), None)
    targets = LagTargets(peer, tables)
    LagTargetStorage(zk, paths).write(peer_id, targets.to_json())
    return targets


def missed_targets(value: ReplicatedThrough, targets: LagTargets, now_ms: int) -> list[MissedLagTarget]:
    """The (peer, table) pairs whose lag is over their target, worst first."""
    missed = []
    for table, through in value.tables.items():
        target = targets.for_table(table)
        lag = max(0, now_ms - through)
        if target and lag > target:
            missed.append(MissedLagTarget(value.peer_id, table, lag, target))
    if not value.tables and targets.peer:
        lag = max(0, now_ms - value.through_ms)
        if lag > targets.peer:
            missed.append(MissedLagTarget(value.peer_id, None, lag, targets.peer))
    return worst_first(missed)


def worst_first(missed: list[MissedLagTarget]) -> list[MissedLagTarget]:
    """Missed targets, the one furthest over its target first."""
    return sorted(missed, key=lambda m: m.over_ms, reverse=True)
