"""The 0.94 SequenceFile HLog reader, on the real files HBase wrote (shared/fixtures/hbase-0.94-hlogs)."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import pytest

from replication.wal.cell_codec import decode_cells
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError
from replication.wal.model import CellType
from replication.wal.names import server_of_wal, wal_start_timestamp
from replication.wal.reader import open_wal

MIGRATION = "TestMetaMigrationConvertToPB"
NS = "TestNamespaceUpgrade"


def _records(data: bytes) -> tuple[int, int]:
    """Count records and sync escapes with a walk independent of the reader: (records, syncs)."""
    pos = 4
    for _ in range(2):  # key and value class names: vint (1 byte here) + bytes
        pos += 1 + data[pos]
    pos += 2  # compression flags
    (meta,) = struct.unpack_from(">i", data, pos)
    pos += 4
    for _ in range(2 * meta):
        pos += 1 + data[pos]
    pos += 16
    records = syncs = 0
    while pos < len(data):
        (rec_len,) = struct.unpack_from(">i", data, pos)
        if rec_len == -1:
            syncs += 1
            pos += 20
            continue
        records += 1
        pos += 8 + rec_len
    assert pos == len(data)
    return records, syncs


def _all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_every_fixture_file_is_read_completely(hlog_fixtures: Path) -> None:
    files = _all_files(hlog_fixtures)
    assert len(files) == 8
    for path in files:
        data = path.read_bytes()
        reader = open_wal(str(path))
        got = list(reader)
        assert reader.format == "sequencefile"
        assert len(got) == _records(data)[0], path.name
        assert reader.position == len(data) and reader.truncated_tail_bytes == 0 and not reader.trailer_present
        for read in got:
            assert read.entry.cells, f"{path.name}: entry at {read.start} has no cells"


def test_header_only_files_have_no_entries(hlog_fixtures: Path) -> None:
    for name in (
        f"{MIGRATION}/META-1028785192-hlog.1344395137051",
        f"{MIGRATION}/TestTable-42af84bb9669e12f98b38c61910878b9-hlog.1344395623414",
        f"{NS}/META-1028785192-hlog.1368422402944",
    ):
        reader = open_wal(str(hlog_fixtures / name))
        assert list(reader) == []
        assert reader.position == reader.file_length
    assert open_wal(str(hlog_fixtures / NS / "META-1028785192-hlog.1368422402944")).sequence_file_metadata == {
        "version": "1"
    }


def test_testtable_puts_and_flush_markers(hlog_fixtures: Path) -> None:
    path = hlog_fixtures / MIGRATION / "10.10.11.105%2C52612%2C1344395574117.1344395576705"
    entries = [r.entry for r in open_wal(str(path))]
    user = [(c, e.key) for e in entries if e.key.table_name == b"TestTable" for c in e.cells]
    puts = [c for c, _ in user if c.family == b"f1"]
    assert sorted(c.row for c in puts) == sorted(b"row%d" % i for i in range(1, 101))
    assert {(c.qualifier, c.type) for c in puts} == {(b"c1", CellType.PUT)}
    assert {k.encoded_region_name for _, k in user} == {b"42af84bb9669e12f98b38c61910878b9"}
    markers = [c for e in entries for c in e.cells if c.row == b"METAROW"]
    assert markers and all(c.family == b"METAFAMILY" and c.qualifier == b"" for c in markers)
    assert {c.value for c in markers} == {b"HBASE::CACHEFLUSH"}
    tables = Counter(e.key.table_name for e in entries)
    assert set(tables) == {b"-ROOT-", b".META.", b"TestTable"}
    seqs = [e.key.log_sequence_number for e in entries if e.key.table_name == b"TestTable"]
    assert seqs == sorted(seqs)
    assert server_of_wal(path.name) == "10.10.11.105,52612,1344395574117"
    assert wal_start_timestamp(path.name) == 1344395576705


def test_namespace_upgrade_puts_and_delete_columns(hlog_fixtures: Path) -> None:
    path = hlog_fixtures / NS / "localhost%2C36372%2C1411407566650.1411407567922"
    reader = open_wal(str(path))
    assert reader.sequence_file_metadata == {"version": "1"}
    cells = [c for r in reader for c in r.entry.cells if r.entry.key.table_name == b"data"]
    data_cells = [c for c in cells if c.family == b"f"]
    assert {c.qualifier for c in data_cells} == {b"col"}
    assert {c.row for c in data_cells} == {b"A", b"10"}
    kinds = Counter(CellType(c.type) for c in data_cells)
    assert kinds[CellType.PUT] > 0 and kinds[CellType.DELETE_COLUMN] > 0
    assert all(c.value == b"" for c in data_cells if c.type == CellType.DELETE_COLUMN)


def test_sync_markers_are_skipped_and_positions_resume(hlog_fixtures: Path) -> None:
    path = hlog_fixtures / MIGRATION / "10.10.11.105%2C52612%2C1344395574117.1344395576705"
    assert _records(path.read_bytes())[1] > 0  # this file has sync escapes between records
    everything = list(open_wal(str(path)))
    for i in (1, 50, len(everything) - 1):
        suffix = list(open_wal(str(path), start=everything[i].start))
        assert [r.entry for r in suffix] == [r.entry for r in everything[i:]]


def test_raw_entries_forward_the_original_cell_bytes(hlog_fixtures: Path) -> None:
    path = hlog_fixtures / NS / "localhost%2C36372%2C1411407566650.1411407567922"
    data = path.read_bytes()
    decoded = list(open_wal(str(path)))
    raws = list(open_wal(str(path)).raw_entries())
    assert len(raws) == len(decoded)
    for raw, read in zip(raws, decoded, strict=True):
        assert raw.key == read.entry.key
        assert decode_cells(raw.cell_bytes, raw.cell_count)[0] == read.entry.cells
        assert bytes(raw.cell_bytes) in data[raw.start : raw.end]


def test_truncated_legacy_file_ends_at_last_whole_record(hlog_fixtures: Path, tmp_path: Path) -> None:
    source = hlog_fixtures / NS / "localhost%2C36372%2C1411407566650.1411407567922"
    everything = list(open_wal(str(source)))
    cut = everything[5].end + 7
    part = tmp_path / "part"
    part.write_bytes(source.read_bytes()[:cut])
    reader = open_wal(str(part))
    assert [r.entry for r in reader] == [r.entry for r in everything[:6]]
    assert reader.position == everything[5].end and reader.truncated_tail_bytes == 7


def test_garbled_record_and_compressed_metadata(hlog_fixtures: Path, tmp_path: Path) -> None:
    source = hlog_fixtures / MIGRATION / "ROOT-70236052-hlog.1344395136506"
    first = next(iter(open_wal(str(source))))
    data = bytearray(source.read_bytes())
    data[first.start + 8] = 0x10  # HLogKey version byte → an unversioned key claiming a 16-byte region name
    data[first.start + 4 : first.start + 8] = struct.pack(">i", 300)  # key length past the record
    bad = tmp_path / "bad"
    bad.write_bytes(bytes(data))
    with pytest.raises(CorruptWALError, match=rf"corrupt entry at offset {first.start}"):
        list(open_wal(str(bad)))
    head = source.read_bytes()[:0x66]  # "SEQ" 06 + both class names
    compressed = tmp_path / "compressed"
    meta = b"\x00\x00" + struct.pack(">i", 1) + b"\x10compression.type\x0adictionary" + b"\x00" * 16
    compressed.write_bytes(head + meta)
    with pytest.raises(CompressedWALNotSupported, match="compressed WALs are not supported"):
        open_wal(str(compressed))
