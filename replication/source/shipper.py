"""ReplicationSourceShipper: throttle each batch, ship it through the endpoint, count what shipped (spec §4.5)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from replication.source.endpoint import ReplicationEndpoint
from replication.source.filters import ShipEntry
from replication.source.metrics import SourceMetrics
from replication.source.throttler import ReplicationThrottler


class ReplicationSourceShipper:
    """Throttles, ships each batch through the endpoint, and records what shipped in the metrics."""

    def __init__(
        self,
        endpoint: ReplicationEndpoint,
        throttler: ReplicationThrottler,
        metrics: SourceMetrics,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.endpoint = endpoint
        self.throttler = throttler
        self.metrics = metrics
        self._sleep = sleep

    def ship(self, batch) -> None:
        """Ship a non-empty batch (raises ShipFailed); empty batches only move the position.

        ``ageOfLastShippedOp`` as HBase's shipper sets it (see ``SourceMetrics``): after a shipped batch,
        now − the write time of its last entry; for an empty batch that moved the position, 0.
        """
        if batch.is_empty:
            if batch.last_position != batch.start_position:
                self.metrics.set_age_of_last_shipped_op(self.metrics.now_ms())
            return
        self.throttler.throttle(batch.heap_size, self._sleep)
        before = self.endpoint.failed_batches
        try:
            self.endpoint.replicate(batch.entries)
        finally:
            self.metrics.inc("failedBatches", self.endpoint.failed_batches - before)
        self.metrics.inc("shippedBatches")
        hfiles = sum(len(e.hfiles) for e in batch.entries)
        self.metrics.inc("shippedOps", _distinct_rows(batch.entries) + hfiles)  # nbRowKeys + nbHFiles
        if hfiles:
            self.metrics.inc("shippedHFiles", hfiles)
        self.metrics.inc("shippedBytes", sum(len(e.cell_bytes) for e in batch.entries))
        last_entry_time = batch.last_entry_write_time
        self.metrics.last_shipped_write_time = last_entry_time
        self.metrics.set_age_of_last_shipped_op(last_entry_time)


def _distinct_rows(entries: Sequence[ShipEntry]) -> int:
    """HBase's shippedOps: distinct consecutive row keys per entry, summed (``nbRowKeys``)."""
    return sum(e.rows for e in entries)
