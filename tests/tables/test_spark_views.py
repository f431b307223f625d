"""Spark views against the pure-Python reference (semantics.py), on real Spark and real Parquet files."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor as CF
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.tables.semantics import scan_cells
from replication.tables.spark_views import cell_schema, latest_rows, read_cells, scan, scan_cells_df
from replication.tables.table_files import write_cells
from replication.wal.model import Cell

pytestmark = pytest.mark.slow
FS = LocalFileSystem()
PUT, DEL, DFV, DCOL, DFAM = 4, 8, 10, 12, 14


def as_tuples(df):
    return [
        (bytes(r["row"]), bytes(r["family"]), bytes(r["qualifier"]), r["timestamp"], r["type"], bytes(r["value"]))
        for r in df.collect()
    ]


def ref_tuples(cells):
    return [(c.row, c.family, c.qualifier, c.timestamp, c.type, c.value) for c in cells]


@pytest.fixture
def table_root(tmp_path):
    root = str(tmp_path / "root")
    TableRegistry(FS, root).create(TableDescriptor.of("ns:t", CF("f", 1, max_versions=3), CF("g", 0)))
    return root


def test_empty_table_and_missing_table(spark, table_root):
    df = read_cells(spark, table_root, "ns:t")
    assert df.schema == cell_schema() and df.count() == 0
    assert scan(spark, table_root, "ns:t").count() == 0
    assert latest_rows(spark, table_root, "ns:t").count() == 0
    with pytest.raises(UnknownTable, match="table nope does not exist"):
        scan(spark, table_root, "nope")
    with pytest.raises(UnknownFamily, match="'zz'"):
        scan(spark, table_root, "ns:t", families=["zz"])


def test_scan_over_files_of_two_flushes_and_two_regions(spark, table_root):
    flush1 = [
        (Cell(b"r1", b"f", b"a", 1, PUT, b"r1a1"), 1),
        (Cell(b"r1", b"f", b"a", 2, PUT, b"r1a2"), 2),
        (Cell(b"r1", b"f", b"b", 2, PUT, b"r1b2"), 3),
        (Cell(b"r1", b"g", b"a", 9, PUT, b"r1ga9"), 4),
    ]
    flush2 = [
        (Cell(b"r1", b"f", b"a", 2, PUT, b"r1a2-again"), 5),  # same coordinates, newer sequence
        (Cell(b"r1", b"f", b"b", 2, DCOL), 6),
        (Cell(b"r1", b"f", b"", 1, DFV), 7),
    ]
    other_region = [(Cell(b"r2", b"f", b"a", 5, PUT, b"r2a5"), 1), (Cell(b"r3", b"f", b"", 9, DFAM), 2)]
    write_cells(FS, table_root, "ns:t", "region0", flush1, 4)
    write_cells(FS, table_root, "ns:t", "region0", flush2, 7)
    write_cells(FS, table_root, "ns:t", "region1", other_region, 2)
    assert read_cells(spark, table_root, "ns:t").count() == 9
    assert as_tuples(scan(spark, table_root, "ns:t", versions=5)) == [
        (b"r1", b"f", b"a", 2, PUT, b"r1a2-again"),
        (b"r1", b"g", b"a", 9, PUT, b"r1ga9"),
        (b"r2", b"f", b"a", 5, PUT, b"r2a5"),
    ]
    unordered = scan(spark, table_root, "ns:t", versions=5, ordered=False)
    assert sorted(as_tuples(unordered)) == sorted(as_tuples(scan(spark, table_root, "ns:t", versions=5)))
    raw = as_tuples(scan(spark, table_root, "ns:t", raw=True, versions=5, families=["f"], row_prefixes=[b"r1"]))
    assert [(r[2], r[3], r[4]) for r in raw] == [
        (b"", 1, DFV),
        (b"a", 2, PUT),
        (b"a", 1, PUT),
        (b"b", 2, DCOL),
        (b"b", 2, PUT),
    ]
    rows = latest_rows(spark, table_root, "ns:t").collect()
    assert [bytes(r["row"]) for r in rows] == [b"r1", b"r2"]
    assert [r["cell_count"] for r in rows] == [2, 1]
    first = rows[0]["cells"]
    assert [
        (bytes(x["family"]), bytes(x["qualifier"]), x["timestamp"], x["type"], bytes(x["value"])) for x in first
    ] == [
        (b"f", b"a", 2, PUT, b"r1a2-again"),
        (b"g", b"a", 9, PUT, b"r1ga9"),
    ]


def test_family_versions_cap_comes_from_the_descriptor(spark, table_root):
    cells = [(Cell(b"r", fam, b"q", ts, PUT, b"%d" % ts), ts) for fam in (b"f", b"g") for ts in range(1, 6)]
    write_cells(FS, table_root, "ns:t", "region0", cells, 5)
    got = as_tuples(scan(spark, table_root, "ns:t", versions=5))
    assert [(r[1], r[3]) for r in got] == [(b"f", 5), (b"f", 4), (b"f", 3), (b"g", 1 + 4)]


_row = st.sampled_from([b"r1", b"r2", b"\xff"])
_fam = st.sampled_from([b"f", b"g"])
_ts = st.integers(0, 5)


@st.composite
def _cell(draw):
    kind = draw(st.sampled_from([PUT, PUT, PUT, DEL, DCOL, DFV, DFAM]))
    qual = b"" if kind in (DFV, DFAM) else draw(st.sampled_from([b"", b"a", b"b"]))
    value = b"" if kind != PUT else draw(st.binary(max_size=3))
    return (Cell(draw(_row), draw(_fam), qual, draw(_ts), kind, value), draw(st.integers(1, 30)))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cells=st.lists(_cell(), max_size=14),
    versions=st.integers(1, 3),
    start_ts=st.integers(0, 3),
    span=st.integers(1, 6),
    raw=st.booleans(),
    families=st.sampled_from([None, [b"g"], [b"f", b"g"]]),
    row_prefixes=st.sampled_from([None, [b"r"], [b"r2", b"\xff"]]),
)
def test_spark_scan_matches_the_reference(spark, cells, versions, start_ts, span, raw, families, row_prefixes):
    # One Spark scan per example (each costs ~1 s here); the hand-worked cases live in test_read_semantics.
    rows = [(c.row, c.family, c.qualifier, c.timestamp, c.type, c.value, s, c.tags) for c, s in cells]
    df = spark.createDataFrame(rows, cell_schema())
    kw = dict(
        versions=versions,
        start_ts=start_ts,
        end_ts=start_ts + span,
        raw=raw,
        families=families,
        row_prefixes=row_prefixes,
        family_max_versions={b"f": 2},
    )
    assert as_tuples(scan_cells_df(df, **kw)) == ref_tuples(scan_cells(cells, **kw))
