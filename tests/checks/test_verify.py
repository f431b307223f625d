"""VerifyReplication counters on real Spark over real table files (written with table_files.write_cells)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from replication.checks import verify as verify_module
from replication.checks.verify import (
    BADROWS,
    CONTENT_DIFFERENT_ROWS,
    COUNTERS,
    GOODROWS,
    ONLY_IN_PEER_TABLE_ROWS,
    ONLY_IN_SOURCE_TABLE_ROWS,
    RECOMPARES,
    VerifyError,
    VerifyOptions,
    VerifyResult,
    looks_like_cluster_key,
    split_list,
    verify_tables,
)
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor as CF
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.errors import UnknownTable
from replication.tables.table_files import write_cells
from replication.wal.model import Cell

pytestmark = pytest.mark.slow
FS = LocalFileSystem()
PUT, DELETE_COLUMN = 4, 12
TABLE = "ns:t"


class Tables:
    """A source and a peer root with the same table, and a flush counter per root."""

    def __init__(self, tmp_path):
        self.source = str(tmp_path / "source")
        self.peer = str(tmp_path / "peer")
        self.seq = {self.source: 0, self.peer: 0}
        for root in (self.source, self.peer):
            TableRegistry(FS, root).create(TableDescriptor.of(TABLE, CF("f", 1, max_versions=3), CF("g", 1)))

    def flush(self, root: str, cells: list[Cell], table: str = TABLE) -> None:
        items = []
        for cell in cells:
            self.seq[root] += 1
            items.append((cell, self.seq[root]))
        write_cells(FS, root, table, "region1", items, self.seq[root])

    def both(self, cells: list[Cell]) -> None:
        self.flush(self.source, cells)
        self.flush(self.peer, cells)


def rows(n: int, ts: int = 1000, prefix: str = "row") -> list[Cell]:
    out = []
    for i in range(n):
        key = f"{prefix}{i:04d}".encode()
        out.append(Cell(key, b"f", b"a", ts + i, PUT, b"v%d" % i))
        out.append(Cell(key, b"g", b"b", ts + i, PUT, b"w%d" % i))
    return out


@pytest.fixture
def tables(tmp_path):
    return Tables(tmp_path)


def counters(result: VerifyResult) -> dict[str, int]:
    return {k: v for k, v in result.counters.items() if k in COUNTERS}


def test_identical_tables_are_all_good(spark, tables):
    tables.both(rows(20))
    result = verify_tables(spark, tables.source, tables.peer, TABLE)
    assert counters(result) == {
        GOODROWS: 20,
        BADROWS: 0,
        ONLY_IN_SOURCE_TABLE_ROWS: 0,
        ONLY_IN_PEER_TABLE_ROWS: 0,
        CONTENT_DIFFERENT_ROWS: 0,
    }
    assert result.counter_lines()[0] == "GOODROWS=20"


def test_changed_cell_missing_and_extra_rows(spark, tables):
    tables.both(rows(10))
    # one cell changed on the peer (a newer write of the same coordinates wins)
    tables.flush(tables.peer, [Cell(b"row0003", b"f", b"a", 1003, PUT, b"changed")])
    # one row only on the source, two only on the peer
    tables.flush(tables.source, [Cell(b"zsrc", b"f", b"a", 5, PUT, b"x")])
    tables.flush(tables.peer, [Cell(b"apeer", b"f", b"a", 5, PUT, b"x"), Cell(b"zpeer", b"g", b"q", 5, PUT, b"")])
    result = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(verbose=True))
    assert counters(result) == {
        GOODROWS: 9,
        BADROWS: 4,
        ONLY_IN_SOURCE_TABLE_ROWS: 1,
        ONLY_IN_PEER_TABLE_ROWS: 2,
        CONTENT_DIFFERENT_ROWS: 1,
    }
    assert [(b.row, b.counter) for b in result.bad_rows] == [
        (b"apeer", ONLY_IN_PEER_TABLE_ROWS),
        (b"row0003", CONTENT_DIFFERENT_ROWS),
        (b"zpeer", ONLY_IN_PEER_TABLE_ROWS),
        (b"zsrc", ONLY_IN_SOURCE_TABLE_ROWS),
    ]
    assert RECOMPARES not in result.counters


def test_cell_count_timestamp_and_type_differences(spark, tables):
    tables.both(rows(3))
    tables.flush(tables.source, [Cell(b"row0000", b"f", b"extra", 1, PUT, b"")])  # one more cell
    tables.flush(tables.peer, [Cell(b"row0001", b"f", b"a", 999, PUT, b"old")])  # older version: hidden
    tables.flush(tables.peer, [Cell(b"row0002", b"f", b"a", 1002, DELETE_COLUMN)])  # f:a deleted on peer
    result = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(verbose=True))
    assert result.counters[CONTENT_DIFFERENT_ROWS] == 2
    assert {b.row for b in result.bad_rows} == {b"row0000", b"row0002"}
    # with two versions the older peer version of row0001 shows up as a difference too
    result2 = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(versions=2))
    assert result2.counters[CONTENT_DIFFERENT_ROWS] == 3
    # raw scans see the DeleteColumn marker; non-raw scans do not
    raw = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(raw=True, verbose=True))
    assert b"row0002" in {b.row for b in raw.bad_rows}


def test_time_range_families_and_prefixes_select_rows(spark, tables):
    tables.both(rows(10, ts=1000))
    # rows outside [1000, 1005) differ on the peer; a time range that excludes them sees no bad row
    tables.flush(tables.peer, [Cell(b"row0008", b"f", b"a", 1008, PUT, b"changed")])
    tables.flush(tables.source, [Cell(b"late", b"f", b"a", 5000, PUT, b"only-source")])
    windowed = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(start_time=1000, end_time=1005))
    assert windowed.counters[GOODROWS] == 5 and windowed.counters[BADROWS] == 0
    # the reference guide's --stoptime is the same bound
    stopped = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(start_time=1000, stop_time=1005))
    assert stopped.counters == windowed.counters
    everything = verify_tables(spark, tables.source, tables.peer, TABLE)
    assert everything.counters[BADROWS] == 2
    assert everything.counters[GOODROWS] == 9
    # family g is untouched on the peer
    only_g = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(families=["g"]))
    assert only_g.counters[GOODROWS] == 10 and only_g.counters[BADROWS] == 0
    prefixed = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(row_prefixes=["row000"]))
    assert prefixed.counters[GOODROWS] == 9 and prefixed.counters[CONTENT_DIFFERENT_ROWS] == 1


def test_peer_table_name_and_unknown_table(spark, tables):
    TableRegistry(FS, tables.peer).create(TableDescriptor.of("copy", CF("f", 1, max_versions=3), CF("g", 1)))
    tables.flush(tables.source, rows(4))
    tables.flush(tables.peer, rows(4), table="copy")
    result = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(peer_table="copy"))
    assert result.counters[GOODROWS] == 4 and result.peer_table == "copy"
    with pytest.raises(UnknownTable, match="nope"):
        verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(peer_table="nope"))


def test_recompare_counts_rows_fixed_during_the_sleep_as_good(spark, tables, monkeypatch):
    tables.both(rows(5))
    tables.flush(tables.source, rows(2, ts=2000, prefix="inflight"))  # not replicated yet
    tables.flush(tables.source, [Cell(b"stuck", b"f", b"a", 1, PUT, b"never shipped")])
    slept: list[float] = []

    def sleep_while_the_peer_catches_up(seconds: float) -> None:
        # The in-flight rows reach the peer during the recompare's sleep, i.e. after the first
        # comparison saw them missing (a timer started before the verify raced a slow first scan).
        slept.append(seconds)
        tables.flush(tables.peer, rows(2, ts=2000, prefix="inflight"))
        time.sleep(seconds)

    # Without a recompare the in-flight rows are bad.
    plain = verify_tables(spark, tables.source, tables.peer, TABLE)
    assert plain.counters[ONLY_IN_SOURCE_TABLE_ROWS] == 3 and plain.counters[BADROWS] == 3
    # With one, the rows shipped during the sleep count as good; the stuck row stays bad.
    monkeypatch.setattr(
        verify_module, "time", SimpleNamespace(monotonic=time.monotonic, sleep=sleep_while_the_peer_catches_up)
    )
    result = verify_tables(spark, tables.source, tables.peer, TABLE, VerifyOptions(recompare_sleep_ms=400))
    assert slept == [0.4]
    assert result.counters[RECOMPARES] == 3
    assert result.counters[GOODROWS] == 7
    assert result.counters[ONLY_IN_SOURCE_TABLE_ROWS] == 1 and result.counters[BADROWS] == 1


def test_options_are_checked_and_round_trip():
    with pytest.raises(VerifyError, match="--endtime 5 is not after --starttime 10"):
        VerifyOptions(start_time=10, end_time=5)
    with pytest.raises(VerifyError, match="--stoptime 5 is not after --starttime 10"):
        VerifyOptions(start_time=10, stop_time=5)
    with pytest.raises(VerifyError, match=r"--stoptime 7 and --endtime 9 differ \(they are one option\)"):
        VerifyOptions(end_time=9, stop_time=7)
    assert VerifyOptions(stop_time=7) == VerifyOptions(end_time=7) == VerifyOptions(end_time=7, stop_time=7)
    with pytest.raises(VerifyError, match="--versions 0"):
        VerifyOptions(versions=0)
    with pytest.raises(VerifyError, match="--recomparesleep"):
        VerifyOptions(recompare_sleep_ms=-1)
    with pytest.raises(VerifyError, match="unknown verify options"):
        VerifyOptions.from_dict({"bogus": 1})
    opts = VerifyOptions(start_time=1, end_time=9, families=["f"], row_prefixes=["a"], versions=2, raw=True)
    assert VerifyOptions.from_dict(opts.as_dict()) == opts
    assert split_list(" a, ,b ") == ["a", "b"] and split_list("") is None
    assert looks_like_cluster_key("zk1,zk2:2181:/hbase") and not looks_like_cluster_key("1")
