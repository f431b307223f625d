"""A write load for the embedded cluster (``hbrep load`` and the ingest benchmark)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from replication.wal.model import Cell, CellType


@dataclass
class LoadStats:
    """Rows and bytes written, and how long it took."""

    rows: int
    bytes: int
    seconds: float

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"rows": self.rows, "bytes": self.bytes, "seconds": self.seconds,
                "rows_per_s": self.rows_per_s, "mb_per_s": self.mb_per_s}  # fmt: skip


def run_load(
    client,  # ClusterClient
    table: str,
    rows: int,
    *,
    family: bytes = b"f",
    rate: float | None = None,
    batch_size: int = 100,
    value_size: int = 100,
    row_prefix: bytes = b"load-",
    progress: Callable[[int], object] | None = None,
) -> LoadStats:
    """Write ``rows`` Put cells (row ``<prefix><i:010d>``, qualifier ``q``, random value) in batches.

    Every batch is acknowledged (durable) before the next one; ``rate`` caps rows per second.
    Bytes counted = row + family + qualifier + value of each cell (the user payload).
    """
    start = time.monotonic()
    written = 0
    nbytes = 0
    value = os.urandom(value_size)
    while written < rows:
        n = min(batch_size, rows - written)
        cells = [
            Cell(row_prefix + b"%010d" % (written + k), family, b"q", 2**63 - 1, int(CellType.PUT), value)
            for k in range(n)
        ]
        client.batch(table, cells)
        written += n
        nbytes += sum(len(c.row) + len(c.family) + len(c.qualifier) + len(c.value) for c in cells)
        if progress is not None:
            progress(n)
        if rate:
            ahead = written / rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
    return LoadStats(written, nbytes, time.monotonic() - start)
