"""CellColumns: a batch of cells held as one Arrow table, one column per KeyValue field, not as Cell objects.

The peer's apply path (sink → region server → WAL append of the shipped bytes → memstore → flush to an
Arrow table) needs the fields of every cell only as columns: the family set for the schema check, the rows
for routing, the types and timestamps for the write checks, and all of them for the flush. The sink
decodes a cell block straight into these columns (``cell_codec.decode_cell_columns``: a run of cells of
one layout is cut out of the block by a strided copy, with no Python object per cell), the memstore keeps
them as they are, and a flush is a concatenation and a sort. Under py-spy (1 KB-row backlog, engine only,
ff247cc) the per-cell Python objects of the list-based columns this replaces, and joining them back into
Arrow buffers at the flush, were 45% and 27% of the peer region server's GIL time. ``Cell`` objects are
made only where a path needs them (``cells()``): a request that must be encoded again, or a client that
sends cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from replication.arrow_buffers import MAX_BINARY_BYTES, binary_column, fixed_width_array
from replication.wal.cell_codec import CellLayout, decode_each, uniform_layout
from replication.wal.model import Cell

CELL_COLUMNS_SCHEMA = pa.schema(
    [
        pa.field("row", pa.binary(), nullable=False),
        pa.field("family", pa.binary(), nullable=False),
        pa.field("qualifier", pa.binary(), nullable=False),
        pa.field("timestamp", pa.int64(), nullable=False),
        pa.field("type", pa.int32(), nullable=False),
        pa.field("value", pa.binary(), nullable=False),
        pa.field("tags", pa.binary(), nullable=False),
    ]
)
_BINARY_FIELDS = ("row", "family", "qualifier", "value", "tags")


class CellColumns:
    """Cells as the rows of one Arrow table with CELL_COLUMNS_SCHEMA, in the order they came."""

    __slots__ = ("table",)

    def __init__(self, table: pa.Table | None = None):
        self.table: pa.Table = CELL_COLUMNS_SCHEMA.empty_table() if table is None else table

    def __len__(self) -> int:
        return self.table.num_rows

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CellColumns) and self.table.equals(other.table)

    def __repr__(self) -> str:
        return f"CellColumns({len(self)} cells)"

    @classmethod
    def from_cells(cls, cells: Sequence[Cell]) -> CellColumns:
        """The columns of ``cells``, in order."""
        arrays = [
            binary_column([c.row for c in cells]),
            binary_column([c.family for c in cells]),
            binary_column([c.qualifier for c in cells]),
            fixed_width_array(pa.int64(), "q", [c.timestamp for c in cells]),
            fixed_width_array(pa.int32(), "i", [c.type for c in cells]),
            binary_column([c.value for c in cells]),
            binary_column([c.tags for c in cells]),
        ]
        return cls(pa.Table.from_arrays(arrays, schema=CELL_COLUMNS_SCHEMA))

    @classmethod
    def concat(cls, parts: Iterable[CellColumns]) -> CellColumns:
        """One batch of every part's cells, in order (a single part comes back as it is; none: an empty batch)."""
        parts = list(parts)
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls()
        return cls(pa.concat_tables([part.table for part in parts]))

    def cells(self) -> list[Cell]:
        """One Cell per row of the columns, in order."""
        columns = self.table.to_pydict()
        return list(map(Cell, columns["row"], columns["family"], columns["qualifier"], columns["timestamp"],
                        columns["type"], columns["value"], columns["tags"]))  # fmt: skip

    def runs(self, runs: Sequence[tuple[int, int]]) -> CellColumns:
        """The cells of the index ranges ``runs`` ([start, stop) each), in that order."""
        if len(runs) == 1 and runs[0] == (0, len(self)):
            return self
        return CellColumns(pa.concat_tables([self.table.slice(a, b - a) for a, b in runs]))

    def take(self, indices: Sequence[int]) -> CellColumns:
        """The cells at ``indices``, in that order."""
        return CellColumns(self.table.take(fixed_width_array(pa.int64(), "q", list(indices))))

    def rows(self) -> list[bytes]:
        """Every cell's row, in order."""
        return self.table.column("row").to_pylist()

    def families(self) -> set[bytes]:
        """The distinct families of the cells."""
        return set(pc.unique(self.table.column("family")).to_pylist())

    def types(self) -> set[int]:
        """The distinct cell types of the cells."""
        return set(pc.unique(self.table.column("type")).to_pylist())

    def has_timestamp(self, timestamp: int) -> bool:
        """True when some cell has ``timestamp``."""
        return bool(pc.any(pc.equal(self.table.column("timestamp"), timestamp)).as_py())

    def first_index_of_type(self, types: Iterable[int]) -> int | None:
        """The index of the first cell whose type is in ``types`` (None when there is none)."""
        value_set = fixed_width_array(pa.int32(), "i", list(types))
        index = pc.index(pc.is_in(self.table.column("type"), value_set=value_set), True).as_py()
        return None if index < 0 else index

    def encoded_size(self) -> int:
        """The sum of the cells' row, family, qualifier, value and tags lengths."""
        return sum(pc.sum(pc.binary_length(self.table.column(name))).as_py() or 0 for name in _BINARY_FIELDS)


@dataclass(frozen=True, slots=True)
class DecodedCells:
    """Cells read from a block as columns, with where each one's bytes are in the block."""

    columns: CellColumns
    bounds: np.ndarray  # int64, one more than the cells: cell i is buf[bounds[i]:bounds[i + 1]]
    canonical: bool  # every cell's bytes are what encode_cell gives for it (none has an empty tags block)

    @property
    def end(self) -> int:
        """The offset just after the last cell."""
        return int(self.bounds[-1])


def decode_cell_columns(buf: bytes | memoryview, count: int, offset: int = 0) -> DecodedCells:
    """``cell_codec.decode_cells`` of the same bytes (same checks, same errors) as columns, with the cells'
    bounds in ``buf`` and whether their bytes can be forwarded as they are.

    A run of at least MIN_COLUMN_RUN cells of one layout (row, family, qualifier and value lengths, no
    tags: a table's fixed-width rows) is cut out of the block field by field by strided copies, with no
    Python object per cell; other cells are read one by one.
    """
    block = np.frombuffer(buf, np.uint8)
    n = len(block)
    pos, left = offset, count
    parts: list[CellColumns] = []
    starts: list[np.ndarray] = []
    pending: list[Cell] = []  # cells read one by one since the last run
    pending_starts: list[int] = []
    spans: list[tuple[int, int] | None] = []  # of the cells read one by one: None for a non-canonical one
    window = MAX_COLUMN_RUN

    def take_pending() -> None:
        if pending:
            parts.append(CellColumns.from_cells(pending))
            starts.append(np.array(pending_starts, np.int64))
            pending.clear()
            pending_starts.clear()

    while left:
        layout = uniform_layout(buf, n, pos)
        run = 0
        if layout is not None:
            checked = min(left, (n - pos) // layout[0], window, MAX_BINARY_BYTES // layout[0])
            if checked >= MIN_COLUMN_RUN:
                run = _uniform_prefix(block, pos, checked, layout)
        if layout is not None and run >= MIN_COLUMN_RUN:
            take_pending()
            step = layout[0]
            parts.append(_run_columns(block, pos, run, layout))
            starts.append(np.arange(pos, pos + run * step, step, dtype=np.int64))
            pos += run * step
            left -= run
            window = min(2 * window, MAX_COLUMN_RUN)
        else:
            k = min(MIN_COLUMN_RUN, left)
            pos = decode_each(buf, n, k, pos, pending, spans, pending_starts)
            left -= k
            window = 2 * MIN_COLUMN_RUN  # mixed layouts: look a little way ahead only, until runs come back
    take_pending()
    starts.append(np.array([pos], np.int64))
    return DecodedCells(CellColumns.concat(parts), np.concatenate(starts), None not in spans)


# A run this long of one layout is read by strided copies (tens of µs a run, against about 1 µs a cell one by
# one), checking up to MAX_COLUMN_RUN cells' layouts at a time.
MIN_COLUMN_RUN = 32
MAX_COLUMN_RUN = 8192


def _uniform_prefix(block: np.ndarray, pos: int, count: int, layout: CellLayout) -> int:
    """How many of the ``count`` cells at ``pos`` (all within the block) have the first one's layout.

    Why equal fields suffice: a cell whose size, key, value, row and family lengths are the first one's
    is laid out as the first one, so the next cell starts where the view cuts it, and so on.
    """
    step, rlen = layout[0], layout[1]
    cells = block[pos : pos + count * step].reshape(count, step)
    same = (cells[:, :14] == cells[0, :14]).all(axis=1) & (cells[:, 14 + rlen] == cells[0, 14 + rlen])
    return count if same.all() else int(same.argmin())


def _run_columns(block: np.ndarray, pos: int, count: int, layout: CellLayout) -> CellColumns:
    """The ``count`` cells of one layout at ``pos`` as columns: each field cut out by one strided copy."""
    step, rlen, flen, qlen, vlen = layout
    cells = block[pos : pos + count * step].reshape(count, step)
    family_at = 15 + rlen
    qualifier_at = family_at + flen
    timestamp_at = qualifier_at + qlen
    value_at = timestamp_at + 9
    timestamps = np.ascontiguousarray(cells[:, timestamp_at : timestamp_at + 8]).view(">i8").astype(np.int64)
    types = cells[:, timestamp_at + 8].astype(np.int32)
    arrays = [
        _binary_of_slices(cells, 14, rlen),
        _binary_of_slices(cells, family_at, flen),
        _binary_of_slices(cells, qualifier_at, qlen),
        pa.Array.from_buffers(pa.int64(), count, [None, pa.py_buffer(timestamps)]),
        pa.Array.from_buffers(pa.int32(), count, [None, pa.py_buffer(types)]),
        _binary_of_slices(cells, value_at, vlen),
        _binary_of_slices(cells, value_at, 0),  # no tags
    ]
    return CellColumns(pa.Table.from_arrays(arrays, schema=CELL_COLUMNS_SCHEMA))


def _binary_of_slices(cells: np.ndarray, at: int, width: int) -> pa.Array:
    """Bytes ``at`` to ``at + width`` of every row of ``cells`` as a binary array (one copy of them)."""
    count = len(cells)
    data = _copy_to_arrow(cells[:, at : at + width])
    offsets = np.arange(0, (count + 1) * width, width, dtype=np.int32) if width else np.zeros(count + 1, np.int32)
    return pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets), data])


def _copy_to_arrow(view: np.ndarray) -> pa.Buffer:
    """A copy of ``view``'s bytes, in row order, in a buffer of Arrow's memory pool.

    Not numpy's own allocation: a memstore's worth of fresh multi-MB numpy arrays came from new pages of
    the kernel each time (mmap), and their page faults made the copy cost as much as the struct unpack it
    replaced (py-spy, 1 KB-row backlog); Arrow's pool keeps and reuses its memory (micro-benchmark: 0.27
    CPU-s and 94k page faults against 0.04 CPU-s and none, for 512 MB).
    """
    buffer = pa.allocate_buffer(view.size)
    np.copyto(np.frombuffer(buffer, np.uint8).reshape(view.shape), view)
    return buffer
