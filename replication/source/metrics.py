"""Per-queue source counters with HBase's metric names (spec §7, MetricsReplicationSourceSource)."""

from __future__ import annotations

import threading
from collections import Counter

from replication.monitoring.metrics import COUNTERS


class SourceMetrics:
    """Counters of one queue's ship task plus the write time of the last shipped entry; the reader
    thread and the shipper both count into it (see read_ahead.py), so increments take a lock."""

    def __init__(self) -> None:
        self.counters: Counter[str] = Counter({name: 0 for name in COUNTERS})
        self.last_shipped_write_time = 0
        self._lock = threading.Lock()

    def inc(self, name: str, amount: int = 1) -> None:
        """Add ``amount`` to counter ``name`` (safe from any thread)."""
        with self._lock:
            self.counters[name] += amount

    def as_dict(self) -> dict[str, float]:
        out: dict[str, float] = dict(self.counters)
        out["lastShippedWriteTime"] = self.last_shipped_write_time
        return out
