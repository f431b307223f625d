"""Table files: each memstore flush of one region becomes one Parquet file of cells.

Layout: ``<root>/data/<ns>/<table>/<encoded_region>/<max_sequence as 19 digits>.parquet``, columns
``row, family, qualifier: binary; timestamp: int64; type: int32; value: binary; sequence: int64;
tags: binary`` (the cell's raw tags block, empty when it has none), rows in HBase cell order. The file
is built in memory and written with ``FileSystem.write_atomic`` (a temp name starting with "." in the
same directory, fsync, rename), so readers (Spark skips names starting with "." or "_") see a whole
file or none. Files written before tags were kept (no ``tags`` column) are read as cells without tags.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from replication.fs import FileStatus, FileSystem
from replication.tables.descriptors import TABLEDESC_DIR, table_dir
from replication.tables.errors import CorruptTableFile, TableError
from replication.tables.semantics import STORED_TYPES, SequencedCell, sort_key
from replication.wal.cell_columns import CELL_COLUMNS_SCHEMA, CellColumns
from replication.wal.model import Cell

SUFFIX = ".parquet"
SEQUENCE_DIGITS = 19  # Long.MAX_VALUE has 19 digits, so names sort like sequence numbers

# the memstore's cell columns with each cell's sequence id before its tags
SEQUENCE_AT = CELL_COLUMNS_SCHEMA.get_field_index("tags")
CELL_SCHEMA = CELL_COLUMNS_SCHEMA.insert(SEQUENCE_AT, pa.field("sequence", pa.int64(), nullable=False))
# table files written before tags were kept: the same columns without ``tags``
LEGACY_CELL_SCHEMA = pa.schema([field for field in CELL_SCHEMA if field.name != "tags"])


class TableFileExists(TableError):
    """A flush file with the same region and max sequence is already there (never overwritten)."""


@dataclass(frozen=True)
class TableFile:
    """One table file: its path, region and the highest sequence id it holds."""

    path: str
    encoded_region: str
    max_sequence: int
    length: int


def table_file_name(max_sequence: int) -> str:
    """``<max_sequence zero-padded to 19 digits>.parquet``."""
    return f"{max_sequence:0{SEQUENCE_DIGITS}d}{SUFFIX}"


# HBase's cell order (CellComparator; semantics.sort_key) as Arrow sort keys: binary columns compare
# bytewise unsigned like Python's bytes, and Arrow's sort is stable like sorted().
CELL_ORDER = [
    ("row", "ascending"),
    ("family", "ascending"),
    ("qualifier", "ascending"),
    ("timestamp", "descending"),
    ("type", "descending"),
    ("sequence", "descending"),
]


def cells_to_arrow(cells_with_sequence: Iterable[SequencedCell]) -> pa.Table:
    """An Arrow table with CELL_SCHEMA, rows in HBase cell order; TableError on a bad cell type."""
    pairs = list(cells_with_sequence)
    sequences = np.array([seq for _, seq in pairs], np.int64)
    return _columns_to_arrow(CellColumns.from_cells([cell for cell, _ in pairs]), sequences)


def memstore_to_arrow(chunks: Iterable[tuple[list[Cell] | CellColumns, int]]) -> pa.Table:
    """``cells_to_arrow`` of a memstore's chunks (each WAL entry's cells, as Cells or as columns, with its
    sequence id)."""
    chunks = list(chunks)
    sequences = np.repeat(np.array([seq for _, seq in chunks], np.int64), [len(chunk) for chunk, _ in chunks])
    parts: list[CellColumns] = []
    # consecutive chunks of Cells (a client's many small batches) become one part
    for as_columns, run in itertools.groupby((chunk for chunk, _ in chunks), key=lambda c: isinstance(c, CellColumns)):
        if as_columns:
            parts.extend(run)
        else:
            parts.append(CellColumns.from_cells(list(itertools.chain.from_iterable(run))))
    return _columns_to_arrow(CellColumns.concat(parts), sequences)


def _columns_to_arrow(cells: CellColumns, sequences: np.ndarray) -> pa.Table:
    # The memstore's chunks are Arrow tables already (cell_columns.py): the flush adds the sequence column
    # and sorts with Arrow's sort; rows that came in cell order (a backlog of increasing row keys) are not
    # copied again.
    bad = cells.types() - STORED_TYPES
    if bad:
        index = cells.first_index_of_type(bad)
        assert index is not None
        row, typ = cells.table.column("row")[index].as_py(), cells.table.column("type")[index].as_py()
        raise TableError(f"cell of row {row!r} has type {typ}, not a Put or delete type")
    columns = cells.table.columns
    sequence = pa.Array.from_buffers(pa.int64(), len(sequences), [None, pa.py_buffer(sequences)])
    table = pa.Table.from_arrays([*columns[:SEQUENCE_AT], sequence, *columns[SEQUENCE_AT:]], schema=CELL_SCHEMA)
    if table.num_rows < 2:
        return table
    order = pc.sort_indices(table, sort_keys=CELL_ORDER)
    if np.array_equal(order.to_numpy(), np.arange(table.num_rows)):
        return table
    # one chunk first: Table.take over the memstore's many chunks took 3x as long (micro-benchmark, 128k
    # 1 KB cells in 16 chunks: 0.088 s against 0.030 s with the concatenation)
    return table.combine_chunks().take(order)


def write_cells(
    fs: FileSystem,
    root: str,
    table: str,
    encoded_region: str,
    cells_with_sequence: Iterable[SequencedCell],
    max_sequence: int,
) -> str:
    """Write one flush as a Parquet file atomically and return its path.

    TableError if a cell's sequence is above ``max_sequence`` or its type is not a stored type;
    TableFileExists if this region already has a file for ``max_sequence`` (a flush never overwrites).
    """
    return write_arrow(fs, root, table, encoded_region, cells_to_arrow(cells_with_sequence), max_sequence)


def write_arrow(fs: FileSystem, root: str, table: str, encoded_region: str, arrow: pa.Table, max_sequence: int) -> str:
    """``write_cells`` of cells already in a CELL_SCHEMA table in cell order (``cells_to_arrow``)."""
    _check_region(table, encoded_region)
    if arrow.num_rows and pc.max(arrow["sequence"]).as_py() > max_sequence:
        raise TableError(
            f"table {table} region {encoded_region}: a cell's sequence is above max_sequence {max_sequence}"
        )
    path = fs.join(table_dir(fs, root, table), encoded_region, table_file_name(max_sequence))
    if fs.exists(path):
        raise TableFileExists(f"table file already exists: {path}")
    arrow = arrow.replace_schema_metadata(
        {"hbrep.table": table, "hbrep.region": encoded_region, "hbrep.max_sequence": str(max_sequence)}
    )
    sink = io.BytesIO()
    pq.write_table(arrow, sink, compression="snappy")
    fs.write_atomic(path, sink.getvalue())
    return path


def _check_region(table: str, encoded_region: str) -> None:
    if not encoded_region or "/" in encoded_region or encoded_region.startswith((".", "_")):
        raise TableError(f"table {table}: illegal encoded region name {encoded_region!r}")


def list_table_files(fs: FileSystem, root: str, table: str) -> list[TableFile]:
    """Every finished table file of ``table`` (temp files skipped), by region then sequence."""
    out = []
    for region in fs.list(table_dir(fs, root, table)):
        if not region.is_dir or region.name == TABLEDESC_DIR or region.name.startswith((".", "_")):
            continue
        for status in fs.list(region.path):
            parsed = _parse(status)
            if parsed is not None:
                out.append(TableFile(status.path, region.name, parsed, status.length))
    return sorted(out, key=lambda f: (f.encoded_region, f.max_sequence))


def _parse(status: FileStatus) -> int | None:
    name = status.name
    if status.is_dir or name.startswith((".", "_")) or not name.endswith(SUFFIX):
        return None
    stem = name[: -len(SUFFIX)]
    return int(stem) if stem.isdigit() else None


def read_table_file(fs: FileSystem, path: str) -> pa.Table:
    """One table file as an Arrow table (CELL_SCHEMA); CorruptTableFile naming the path if unreadable."""
    data = fs.read_range(path, 0)
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise CorruptTableFile(f"bad table file {path}: {exc}") from None
    schema = table.schema.remove_metadata()
    if schema == LEGACY_CELL_SCHEMA:
        table = table.append_column(CELL_SCHEMA.field("tags"), pa.array([b""] * table.num_rows, pa.binary()))
    elif schema != CELL_SCHEMA:
        raise CorruptTableFile(f"bad table file {path}: unexpected schema {table.schema.names}")
    return table


def read_cells(fs: FileSystem, root: str, table: str) -> list[SequencedCell]:
    """Every stored cell of ``table`` with its sequence id (all versions and markers), in HBase order."""
    out: list[SequencedCell] = []
    for tf in list_table_files(fs, root, table):
        cols = read_table_file(fs, tf.path).to_pydict()
        for row, fam, qual, ts, typ, val, seq, tags in zip(
            cols["row"],
            cols["family"],
            cols["qualifier"],
            cols["timestamp"],
            cols["type"],
            cols["value"],
            cols["sequence"],
            cols["tags"],
            strict=True,
        ):
            out.append((Cell(row, fam, qual, ts, typ, val, tags), seq))
    out.sort(key=sort_key)
    return out
