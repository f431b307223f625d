"""HRegion: one table's region on one region server — sequence ids and the memstore.

Sequence ids: a region's first id is ``start_code_ms * 1000``. HBase continues a region's sequence
ids from the highest one in its store files when it reopens; our regions are new per server start,
so starting from the server's start time keeps later servers' ids above earlier ones', which is what
the "timestamp then sequence" version order across regions needs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from replication.cluster.region_routing import encoded_region_name, region_name
from replication.wal.cell_columns import CellColumns
from replication.wal.model import Cell


def cell_heap_size(cell: Cell) -> int:
    """Approximate memstore bytes of a cell (KeyValue length + a fixed overhead, as HBase's heapSize)."""
    return len(cell.row) + len(cell.family) + len(cell.qualifier) + len(cell.value) + len(cell.tags) + 64


@dataclass
class MemStoreSnapshot:
    """The cells taken out of a memstore for one flush, as the chunks they were added in (each WAL
    entry's cells with its sequence id), with the highest sequence id among them."""

    chunks: list[tuple[list[Cell] | CellColumns, int]]
    max_sequence: int
    size: int

    @property
    def cell_count(self) -> int:
        """How many cells the snapshot holds."""
        return sum(len(cells) for cells, _ in self.chunks)


@dataclass
class HRegion:
    """A (table, server) region: hands out sequence ids and holds unflushed cells."""

    table: str
    server_name: str
    first_sequence: int
    # one (cells, sequence) chunk per WAL entry: a flush builds its columns from them (the per-cell
    # (cell, sequence) tuples this held were a profiled cost of the sink's apply); the sink's chunks are
    # CellColumns, as it decoded them (cell_columns.py)
    memstore: list[tuple[list[Cell] | CellColumns, int]] = field(default_factory=list)
    memstore_size: int = 0
    flushed_sequence: int = 0
    last_flush_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    def __post_init__(self) -> None:
        self.name = region_name(self.table, self.server_name)
        self.encoded_name = encoded_region_name(self.table, self.server_name)
        self._next = self.first_sequence
        self._lock = threading.Lock()
        # flushes of one region run one at a time, in sequence order
        self.flush_lock = threading.Lock()

    def next_sequence(self) -> int:
        """A new, strictly increasing sequence id for one WAL entry of this region."""
        with self._lock:
            self._next += 1
            return self._next

    def current_sequence(self) -> int:
        """The last sequence id handed out (the first one minus one before any)."""
        with self._lock:
            return self._next

    def add(self, cells: list[Cell] | CellColumns, sequence: int, encoded_size: int | None = None) -> None:
        """Put ``cells`` (all written in the WAL entry with ``sequence``) into the memstore.

        ``encoded_size``, the length of the cells' KeyValue encodings when the caller has it, stands in
        for the sum of their parts (it is that sum plus the fixed key fields), so no cell is walked here.
        """
        if encoded_size is None and isinstance(cells, CellColumns):
            encoded_size = cells.encoded_size()
        elif encoded_size is None:
            # cell_heap_size inlined (profiled hot path of the sink apply)
            encoded_size = sum(
                len(c.row) + len(c.family) + len(c.qualifier) + len(c.value) + len(c.tags) for c in cells
            )
        with self._lock:
            self.memstore.append((cells, sequence))
            self.memstore_size += encoded_size + 64 * len(cells)

    def snapshot(self) -> MemStoreSnapshot | None:
        """Take every memstore cell out for a flush (None when empty)."""
        with self._lock:
            if not self.memstore:
                return None
            chunks, size = self.memstore, self.memstore_size
            self.memstore, self.memstore_size = [], 0
        return MemStoreSnapshot(chunks, max(seq for _, seq in chunks), size)

    def restore(self, snap: MemStoreSnapshot) -> None:
        """Put a snapshot back after a failed flush (nothing is lost)."""
        with self._lock:
            self.memstore = snap.chunks + self.memstore
            self.memstore_size += snap.size

    def lowest_unflushed_sequence(self) -> int | None:
        """The smallest sequence id still only in the memstore (None when empty)."""
        with self._lock:
            return min((seq for _, seq in self.memstore), default=None)
