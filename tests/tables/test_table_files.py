import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replication import arrow_buffers
from replication.fs import LocalFileSystem
from replication.tables.errors import CorruptTableFile, TableError
from replication.tables.semantics import sort_key
from replication.tables.table_files import (
    CELL_SCHEMA,
    TableFileExists,
    cells_to_arrow,
    list_table_files,
    memstore_to_arrow,
    read_cells,
    read_table_file,
    write_cells,
)
from replication.wal.cell_columns import CellColumns
from replication.wal.model import Cell

FS = LocalFileSystem()


def c(row, q, ts, typ=4, value=b"v", fam=b"f"):
    return Cell(row, fam, q, ts, typ, value)


def test_write_then_read_back_in_hbase_order(tmp_path):
    root = str(tmp_path)
    cells = [(c(b"r2", b"a", 1), 3), (c(b"r1", b"a", 1), 1), (c(b"r1", b"a", 2), 2), (c(b"r1", b"", 2, 14, b""), 4)]
    path = write_cells(FS, root, "ns:t", "abc123", cells, max_sequence=4)
    assert path == str(tmp_path / "data" / "ns" / "t" / "abc123" / "0000000000000000004.parquet")
    table = read_table_file(FS, path)
    assert table.schema.remove_metadata() == CELL_SCHEMA
    assert table.schema.metadata[b"hbrep.max_sequence"] == b"4"
    back = read_cells(FS, root, "ns:t")
    assert [(x.row, x.qualifier, x.timestamp, x.type, s) for x, s in back] == [
        (b"r1", b"", 2, 14, 4),
        (b"r1", b"a", 2, 4, 2),
        (b"r1", b"a", 1, 4, 1),
        (b"r2", b"a", 1, 4, 3),
    ]
    # Parquet rows are stored in that order too.
    assert pq.read_table(path).column("sequence").to_pylist() == [4, 2, 1, 3]


def test_listing_skips_temp_files_descriptors_and_sorts_by_sequence(tmp_path):
    root = str(tmp_path)
    write_cells(FS, root, "t", "r1", [(c(b"a", b"q", 1), 10)], 10)
    write_cells(FS, root, "t", "r1", [(c(b"a", b"q", 2), 9)], 9)
    write_cells(FS, root, "t", "r0", [], 1)
    tdir = tmp_path / "data" / "default" / "t"
    (tdir / "r1" / ".0000000000000000011.parquet.tmp-1").write_bytes(b"partial")
    (tdir / ".tabledesc").mkdir()
    files = list_table_files(FS, root, "t")
    assert [(f.encoded_region, f.max_sequence) for f in files] == [("r0", 1), ("r1", 9), ("r1", 10)]
    assert len(read_cells(FS, root, "t")) == 2
    assert list_table_files(FS, root, "other") == []


def test_a_flush_file_is_never_overwritten(tmp_path):
    write_cells(FS, str(tmp_path), "t", "r1", [(c(b"a", b"q", 1), 5)], 5)
    with pytest.raises(TableFileExists, match=r"0000000000000000005\.parquet"):
        write_cells(FS, str(tmp_path), "t", "r1", [(c(b"a", b"q", 1, value=b"other"), 5)], 5)
    assert [x.value for x, _ in read_cells(FS, str(tmp_path), "t")] == [b"v"]


def test_bad_input_is_refused_without_writing(tmp_path):
    with pytest.raises(TableError, match="above max_sequence 3"):
        write_cells(FS, str(tmp_path), "t", "r1", [(c(b"a", b"q", 1), 4)], 3)
    with pytest.raises(TableError, match="type 0"):
        write_cells(FS, str(tmp_path), "t", "r1", [(c(b"a", b"q", 1, typ=0), 1)], 3)
    with pytest.raises(TableError, match="encoded region"):
        write_cells(FS, str(tmp_path), "t", ".r1", [], 3)
    assert list_table_files(FS, str(tmp_path), "t") == []


def test_garbled_file_names_the_path(tmp_path):
    path = write_cells(FS, str(tmp_path), "t", "r1", [(c(b"a", b"q", 1), 1)], 1)
    with open(path, "r+b") as f:
        f.write(b"garbage!")
    with pytest.raises(CorruptTableFile, match=r"0000000000000000001\.parquet"):
        read_cells(FS, str(tmp_path), "t")


# -- the flush's Arrow build against HBase's cell order as Python sorts it (semantics.sort_key) -------------
_byte_strings = st.binary(max_size=3)  # short, so equal rows / families / qualifiers are frequent


@st.composite
def _memstore_chunks(draw):
    chunks = []
    for seq in range(1, draw(st.integers(0, 6)) + 1):
        cells = draw(
            st.lists(
                st.builds(
                    Cell,
                    _byte_strings,
                    st.sampled_from([b"f", b"g", b"\xff"]),
                    _byte_strings,
                    st.sampled_from([0, 1, 2, 2**63 - 1]),
                    st.sampled_from([4, 8, 10, 12, 14]),
                    _byte_strings,
                    st.sampled_from([b"", b"\x01\x00\x01t"]),
                ),
                max_size=8,
            )
        )
        chunks.append((cells, seq * draw(st.sampled_from([1, -1])) + 100))
    return chunks


@settings(max_examples=300, deadline=None)
@given(_memstore_chunks())
def test_memstore_columns_are_in_the_order_pythons_sort_gives(chunks):
    pairs = [(cell, seq) for cells, seq in chunks for cell in cells]
    expected = sorted(pairs, key=sort_key)
    table = memstore_to_arrow(chunks)
    assert table.schema == CELL_SCHEMA
    got = (
        list(zip(*(table.column(name).to_pylist() for name in CELL_SCHEMA.names), strict=True))
        if table.num_rows
        else []
    )
    assert got == [(c.row, c.family, c.qualifier, c.timestamp, c.type, c.value, s, c.tags) for c, s in expected]
    assert cells_to_arrow(pairs).equals(table)
    # the sink's chunks are columns (CellColumns), alone or mixed with a client's Cells: the same table
    for every in (2, 3):  # 3: runs of consecutive Cell chunks, converted together
        as_columns = [
            (CellColumns.from_cells(cells) if i % every == 0 else cells, seq) for i, (cells, seq) in enumerate(chunks)
        ]
        assert memstore_to_arrow(as_columns).equals(table)


def test_a_memstore_cell_of_a_type_that_is_not_stored_is_refused():
    with pytest.raises(TableError, match="row b'r2' has type 3"):
        memstore_to_arrow([([c(b"r1", b"a", 1)], 1), ([c(b"r2", b"a", 1, typ=3)], 2)])


def test_a_column_over_the_binary_limit_is_built_in_chunks(monkeypatch):
    monkeypatch.setattr(arrow_buffers, "MAX_BINARY_BYTES", 10)
    chunks = [([c(b"r%d" % i, b"q", 1, value=b"v" * i) for i in range(8)], 7)]
    table = memstore_to_arrow(chunks)
    assert table.column("value").to_pylist() == [b"v" * i for i in range(8)]
    assert table.column("row").to_pylist() == [b"r%d" % i for i in range(8)]
