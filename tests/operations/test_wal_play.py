"""``wal play``'s rules without a cluster: WALPlayer's time parsing, table mapping, file and entry selection and
its counters (the comparison with HBase's own WALPlayer is tests/hbase_source/test_wal_play_from_hbase.py)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.fs import LocalFileSystem
from replication.operations.wal_play import (
    EARLIEST,
    LATEST,
    PlayCounters,
    TableMap,
    TimeRange,
    WalPlayError,
    entries_in_range,
    parse_time,
    replayed,
    wal_files,
)
from replication.wal.markers import METAFAMILY
from replication.wal.model import Cell, CellType, Entry, WALKey


@given(st.integers(min_value=EARLIEST, max_value=LATEST))
def test_a_number_is_milliseconds(ms: int) -> None:
    assert parse_time("--starttime", str(ms)) == ms


@given(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2999, 12, 31)), st.integers(0, 99))
def test_a_date_is_read_as_walplayer_reads_it(moment: dt.datetime, hundredths: int) -> None:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{hundredths:02d}"
    expected = int(moment.replace(microsecond=0, tzinfo=dt.UTC).timestamp()) * 1000 + hundredths
    assert parse_time("--endtime", text) == expected  # "SS" is a count of milliseconds, as SimpleDateFormat's


@given(st.text(max_size=30))
def test_anything_else_is_one_error_naming_the_option(text: str) -> None:
    try:
        parse_time("--starttime", text)
    except WalPlayError as exc:
        assert str(exc).startswith("--starttime") and "\n" not in str(exc)


def test_the_examples_of_walplayers_usage() -> None:
    assert parse_time("--starttime", "1234567890120") == 1234567890120
    assert parse_time("--starttime", "2009-02-13T23:31:30.12") == 1234567890012
    with pytest.raises(WalPlayError, match=re.escape("2001-02-20T16:35:06.99 or as number of milliseconds")):
        parse_time("--starttime", "yesterday")
    with pytest.raises(WalPlayError, match=re.escape("--endtime '2009-02-30T00:00:00.00'")):
        parse_time("--endtime", "2009-02-30T00:00:00.00")


def test_an_empty_time_range_is_refused() -> None:
    with pytest.raises(WalPlayError, match="--starttime 20 is after --endtime 10"):
        TimeRange.parse("20", "10")
    assert TimeRange.parse(None, "10") == TimeRange(EARLIEST, 10)


def test_tables_and_their_mappings() -> None:
    tables = TableMap.parse(["t1", "ns:t2", "default:t3"], ["t1:copy", "ns:t2:ns:copy2"])
    assert tables.targets == {"t1": "copy", "ns:t2": "ns:copy2", "t3": "t3"}
    assert tables.target_of(b"t1") == "copy" and tables.target_of(b"default:t3") == "t3"
    assert tables.target_of(b"hbase:meta") is None
    for mappings, message in (
        (["t9:x"], "t9 is not one of the --table tables"),
        (["t1:x", "t1:y"], "t1 is already mapped to x"),
        (["t1"], "expected SRC:DST"),
        (["t1:bad name"], "'bad name' is not a table name"),
    ):
        with pytest.raises(WalPlayError, match=message):
            TableMap.parse(["t1"], mappings)
    with pytest.raises(WalPlayError, match="name at least one table"):
        TableMap.parse([], [])


def test_files_are_taken_by_the_start_timestamp_in_their_name(tmp_path: Path) -> None:
    (tmp_path / "WALs" / "rs,1,1").mkdir(parents=True)
    (tmp_path / "oldWALs").mkdir()
    for name in ("WALs/rs,1,1/rs%2C1%2C1.100", "WALs/rs,1,1/rs%2C1%2C1.200.meta", "oldWALs/rs%2C1%2C1.300",
                 "oldWALs/notes"):  # fmt: skip
        (tmp_path / name).write_bytes(b"")
    fs = LocalFileSystem()
    every = wal_files(fs, [str(tmp_path)], TimeRange())
    assert [Path(p).name for p in every] == ["rs%2C1%2C1.100", "rs%2C1%2C1.200.meta", "notes", "rs%2C1%2C1.300"]
    # the WAL created at 100 is skipped whole even if it holds later edits (WALInputFormat.addFile); a name
    # without a timestamp is always taken
    taken = wal_files(fs, [str(tmp_path)], TimeRange(150, 250))
    assert [Path(p).name for p in taken] == ["rs%2C1%2C1.200.meta", "notes"]
    with pytest.raises(WalPlayError, match=f"WAL path {tmp_path}/nope does not exist"):
        wal_files(fs, [str(tmp_path / "nope")], TimeRange())


def _entry(table: bytes, write_time: int, *cells: Cell) -> Entry:
    return Entry(WALKey(b"r" * 32, table, 5, write_time, {b"a": 1}, []), list(cells))


def test_entries_before_the_range_are_skipped_and_the_first_after_it_ends_the_file() -> None:
    entries = [_entry(b"t", ts, Cell(b"r", b"a", b"q", ts, CellType.PUT, b"v")) for ts in (5, 10, 20, 31, 25)]
    assert [e.key.write_time for e in entries_in_range(entries, TimeRange(10, 30))] == [10, 20]


def test_a_replayed_entry_and_walplayers_counters() -> None:
    put = Cell(b"r1", b"a", b"q", 1, CellType.PUT, b"v")
    delete = Cell(b"r1", b"a", b"q", 1, CellType.DELETE_COLUMN)
    marker = Cell(b"r1", METAFAMILY, b"HBASE::FLUSH", 1, CellType.PUT, b"x")
    counters = PlayCounters()
    tables = TableMap.parse(["t"], ["t:u"])
    out = replayed(_entry(b"t", 7, put, delete, put, marker), tables, counters)
    assert out is not None and out.key.table_name == b"u" and out.key.cluster_ids == []
    assert out.cells == [put, delete, put]
    # WALMapper writes the Put and the Delete it holds at each change of type, and both again at the end
    assert counters.as_dict() == {"WALEDITS": 1, "CELLS_READ": 4, "CELLS_WRITTEN": 3, "PUTS": 3, "DELETES": 2}
    assert replayed(_entry(b"other", 7, put), tables, counters) is None
    assert replayed(_entry(b"t", 7, marker), tables, counters) is None
    assert counters.as_dict() == {"WALEDITS": 3, "CELLS_READ": 5, "CELLS_WRITTEN": 3, "PUTS": 3, "DELETES": 2}
