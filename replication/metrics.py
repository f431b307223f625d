"""Replication metrics with HBase's names (spec §7), kept where ``hbrep status`` and Prometheus read them.

The commit step folds each cycle's per-queue counters into ``<root>/.hbrep/metrics/replication.json``
(written atomically, once per cycle id, so a retried commit does not count twice). Gauges that must not
freeze when shipping stops (``sizeOfLogQueue``, ``ageOfLastShippedOp``, replication lag) are computed at
read time from ZooKeeper and the WALs by ``replication.status``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from replication.fs import FileSystem
from replication.source.metrics import COUNTERS

METRICS_FILE = ".hbrep/metrics/replication.json"


class MetricsStore:
    """Cumulative per-queue source counters of one cluster, stored in its root."""

    def __init__(self, fs: FileSystem, root: str):
        self.fs = fs
        self.path = fs.join(root, METRICS_FILE)

    def load(self) -> dict[str, Any]:
        """``{"queues": {key: {...}}, "cycles": [...], "failovers": [...], "checks": {...}}`` (empty parts when new)."""
        try:
            data = json.loads(self.fs.read_range(self.path, 0).decode("utf-8"))
        except Exception:
            data = {}
        data.setdefault("queues", {})
        data.setdefault("cycles", [])
        data.setdefault("failovers", [])
        data.setdefault("checks", {})
        return data

    def _save(self, data: dict[str, Any]) -> None:
        self.fs.write_atomic(self.path, json.dumps(data, sort_keys=True, indent=1).encode("utf-8"))

    def record_cycle(self, cycle_id: str, results: Iterable[Any], summary: dict[str, Any]) -> bool:
        """Add a cycle's queue results (once per cycle id); False when it was recorded before."""
        data = self.load()
        if any(c.get("cycle_id") == cycle_id for c in data["cycles"]):
            return False
        now = int(time.time() * 1000)
        for result in results:
            entry = data["queues"].setdefault(result.key, {name: 0 for name in COUNTERS})
            for name in COUNTERS:
                entry[name] = entry.get(name, 0) + int(result.metrics.get(name, 0))
            shipped_at = int(result.metrics.get("lastShippedWriteTime", 0))
            if shipped_at:
                entry["lastShippedWriteTime"] = max(entry.get("lastShippedWriteTime", 0), shipped_at)
                entry["lastShippedAt"] = now
            entry.update(
                peer_id=result.peer_id, status=result.status, error=result.error, cycle_id=cycle_id, updated_ms=now
            )
        data["cycles"] = [*data["cycles"], {"cycle_id": cycle_id, "finished_ms": now, **summary}][-200:]
        self._save(data)
        return True

    def record_failover(self, event: dict[str, Any]) -> None:
        """Append a failover event (dead server, claimer, queues moved) to the recent list."""
        data = self.load()
        data["failovers"] = [*data["failovers"], {"at_ms": int(time.time() * 1000), **event}][-100:]
        self._save(data)

    def record_check(self, kind: str, peer_id: str, table: str, outcome: dict[str, Any]) -> None:
        """Keep the latest ``verify`` / ``quality`` outcome of (peer, table)."""
        data = self.load()
        data["checks"][f"{kind}/{peer_id}/{table}"] = {
            "kind": kind, "peer_id": peer_id, "table": table, "at_ms": int(time.time() * 1000), **outcome,
        }  # fmt: skip
        self._save(data)

    def forget_queue(self, key: str, carry_to: str | None = None) -> None:
        """Drop a queue's entry (deleted queue), or move its counters to ``carry_to`` (claimed queue)."""
        data = self.load()
        entry = data["queues"].pop(key, None)
        if entry is not None and carry_to:
            data["queues"].setdefault(carry_to, entry)
        self._save(data)
