"""Per-queue source counters with HBase's metric names (spec §7, MetricsReplicationSourceSource)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

from replication.monitoring.metrics import COUNTERS


class SourceMetrics:
    """Counters of one queue's ship task, the write time of the last shipped entry and the
    ``ageOfLastShippedOp`` gauge; the reader thread and the shipper both count into it (see read_ahead.py),
    so increments take a lock.

    ``ageOfLastShippedOp`` follows HBase's ``MetricsSource`` (2.x ``ReplicationSourceShipper.shipEdits``):
    it is set when a batch ships, to the ship time less the write time of the batch's *last* entry
    (``setAgeOfLastShippedOp(entries.get(size - 1).getKey().getWriteTime())``); an empty batch that moved
    the position (the queue is caught up: only filtered edits, or a finished WAL's end) sets it with
    the current time, so to 0 (``setAgeOfLastShippedOp(EnvironmentEdgeManager.currentTime())``); a pass
    that reads nothing leaves it as it was. It is never recomputed when read, so a caught-up idle queue
    keeps the age of its last ship and does not grow. ``None`` = not set in this task.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.counters: Counter[str] = Counter({name: 0 for name in COUNTERS})
        self.last_shipped_write_time = 0
        self.age_of_last_shipped_op: int | None = None
        self._clock = clock
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def set_age_of_last_shipped_op(self, write_time: int) -> None:
        """``MetricsSource.setAgeOfLastShippedOp(timestamp)``: age = now − ``write_time`` (the shipper keeps
        the last shipped entry's write time itself, for ``refreshAgeOfLastShippedOp`` on a failed pass)."""
        now = self.now_ms()
        self.age_of_last_shipped_op = max(0, now - write_time)

    def inc(self, name: str, amount: int = 1) -> None:
        """Add ``amount`` to counter ``name`` (safe from any thread)."""
        with self._lock:
            self.counters[name] += amount

    def as_dict(self) -> dict[str, float]:
        out: dict[str, float] = dict(self.counters)
        out["lastShippedWriteTime"] = self.last_shipped_write_time
        if self.age_of_last_shipped_op is not None:
            out["ageOfLastShippedOp"] = self.age_of_last_shipped_op
        return out
