"""PWAL files: golden bytes of spec §1, round trips, positions, truncation, trailer, corruption."""

from __future__ import annotations

import os
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wal_strategies import entries, simple_entry

from replication.proto import WAL_pb2
from replication.wal.cell_codec import decode_cells, encode_cells
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError, WALError, WALNotFound
from replication.wal.model import Entry
from replication.wal.reader import open_wal
from replication.wal.varint import delimited
from replication.wal.writer import ProtobufLogWriter, encode_entry

CODEC = b"org.apache.hadoop.hbase.regionserver.wal.WALCellCodec"


def _write(path: Path, batch: list[Entry], *, close: bool = True, writer: str = "ProtobufLogWriter") -> list[int]:
    w = ProtobufLogWriter(str(path), writer_cls_name=writer)
    ends = [w.append(e) for e in batch]
    w.sync()
    w.close() if close else w.abort()
    return ends


@pytest.mark.parametrize(("writer", "header_len"), [("ProtobufLogWriter", 80), ("AsyncProtobufLogWriter", 85)])
def test_golden_header_and_trailer(tmp_path: Path, writer: str, header_len: int) -> None:
    path = tmp_path / "w"
    entry = simple_entry(0, n=1)
    ends = _write(path, [entry], writer=writer)
    data = path.read_bytes()
    # Header by hand: 08 00 (has_compression) 18 00 (has_tag_compression) 22 <writer> 2a <codec> 30 00.
    header = b"\x08\x00\x18\x00" + b"\x22" + bytes([len(writer)]) + writer.encode() + b"\x2a\x35" + CODEC + b"\x30\x00"
    assert len(header) == header_len
    assert data[:4] == b"PWAL" and data[4] == header_len and data[5 : 5 + header_len] == header
    first = 5 + header_len
    assert first == {"ProtobufLogWriter": 85, "AsyncProtobufLogWriter": 90}[writer]
    assert data[-8:] == bytes.fromhex("00000000 4C415750")
    assert data[first:-8] == delimited(_key_pb(entry)) + encode_cells(entry.cells)
    assert ends == [len(data) - 8]
    reader = open_wal(str(path))
    got = list(reader)
    assert [(r.entry, r.start, r.end) for r in got] == [(entry, first, len(data) - 8)]
    assert reader.trailer_present and reader.truncated_tail_bytes == 0 and reader.position == len(data) - 8


def _key_pb(entry: Entry) -> bytes:
    from replication.wal.key_codec import encode_key

    return encode_key(entry.key, len(entry.cells))


@settings(max_examples=40, deadline=None)
@given(st.lists(entries, max_size=6), st.booleans())
def test_round_trip_and_every_suffix(batch: list[Entry], close: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "w")
        ends = _write(Path(path), batch, close=close)
        reader = open_wal(path)
        got = list(reader)
        assert [r.entry for r in got] == batch
        assert [r.end for r in got] == ends
        assert reader.trailer_present == close and reader.truncated_tail_bytes == 0
        starts = [reader.first_entry_offset, *ends]
        for i, start in enumerate(starts):
            suffix = list(open_wal(path, start=start))
            assert [r.entry for r in suffix] == batch[i:]
            assert [r.start for r in suffix] == starts[i : len(batch)]


@settings(max_examples=30, deadline=None)
@given(st.lists(entries, min_size=1, max_size=4), st.data())
def test_truncation_gives_prefix_and_resumable_position(batch: list[Entry], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full")
        ends = _write(Path(full), batch, close=data.draw(st.booleans()))
        content = Path(full).read_bytes()
        cut = data.draw(st.integers(min_value=0, max_value=len(content)))
        part = os.path.join(tmp, "part")
        Path(part).write_bytes(content[:cut])
        reader = open_wal(part)
        got = [r.entry for r in reader]
        whole = [i for i, end in enumerate(ends) if end <= cut]
        assert got == batch[: len(whole)]
        first = open_wal(full).first_entry_offset
        expected_position = ends[whole[-1]] if whole else (first if cut >= first else 0)
        assert reader.position == expected_position
        if not reader.trailer_present:
            assert reader.truncated_tail_bytes == cut - reader.position
        # The writer carries on: a later read from the recorded position gets exactly the rest.
        Path(part).write_bytes(content)
        assert [r.entry for r in open_wal(part, start=reader.position)] == batch[len(whole) :]


def test_still_open_writer_is_read_up_to_the_last_synced_entry(tmp_path: Path) -> None:
    path = str(tmp_path / "w")
    w = ProtobufLogWriter(path)
    w.append(simple_entry(0))
    w.sync()
    half = encode_entry(simple_entry(1))
    w.append_raw(half[:10])  # a torn append
    w.sync()
    reader = open_wal(path)
    assert [r.entry for r in reader] == [simple_entry(0)]
    assert not reader.trailer_present
    assert reader.truncated_tail_bytes == 10
    w.append_raw(half[10:])
    w.close()
    assert [r.entry for r in open_wal(path, start=reader.position)] == [simple_entry(1)]


def test_empty_and_magic_only_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    reader = open_wal(str(empty))
    assert list(reader) == [] and reader.position == 0 and reader.file_length == 0
    part = tmp_path / "pw"
    part.write_bytes(b"PW")
    reader = open_wal(str(part))
    assert list(reader) == [] and reader.position == 0 and reader.truncated_tail_bytes == 2
    header_only = tmp_path / "h"
    ProtobufLogWriter(str(header_only)).abort()
    reader = open_wal(str(header_only))
    assert list(reader) == [] and reader.position == 85 and reader.truncated_tail_bytes == 0


def test_corrupt_entry_in_the_middle_names_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "w"
    ends = _write(path, [simple_entry(i) for i in range(3)])
    data = bytearray(path.read_bytes())
    # Entry 2 starts at ends[0]: its varint length then the WALKey; replace the key by an invalid tag.
    data[ends[0] + 1] = 0xFF
    path.write_bytes(bytes(data))
    reader = open_wal(str(path))
    with pytest.raises(CorruptWALError, match=rf"{path}: corrupt entry at offset {ends[0]}"):
        list(reader)
    # A garbled cell inside an entry whose framing is intact: the full decode refuses it too.
    data = bytearray(_fresh(tmp_path / "w2", 3))
    ends2 = [r.end for r in open_wal(str(tmp_path / "w2"))]
    key_len = data[ends2[0]]
    cell = ends2[0] + 1 + key_len
    data[cell + 4 : cell + 8] = struct.pack(">i", 10_000)  # key length past the cell
    (tmp_path / "w2").write_bytes(bytes(data))
    with pytest.raises(CorruptWALError, match=rf"corrupt entry at offset {ends2[0]}"):
        list(open_wal(str(tmp_path / "w2")))


def _fresh(path: Path, n: int) -> bytes:
    _write(path, [simple_entry(i) for i in range(n)])
    return path.read_bytes()


def test_entry_running_into_the_trailer_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "w"
    _write(path, [simple_entry(0)])
    data = path.read_bytes()
    path.write_bytes(data[:-9] + data[-8:])  # lose the last byte of the entry, keep the trailer
    with pytest.raises(CorruptWALError, match="runs into the trailer"):
        list(open_wal(str(path)))


def test_value_compressed_wal_is_refused_clearly(tmp_path: Path) -> None:
    header = WAL_pb2.WALHeader(has_compression=True, has_value_compression=True, writer_cls_name="ProtobufLogWriter")
    path = tmp_path / "c"
    path.write_bytes(b"PWAL" + delimited(header.SerializeToString()))
    with pytest.raises(CompressedWALNotSupported, match=rf"{path}: has_value_compression without value_compression_a"):
        open_wal(str(path))


def test_bad_files_and_positions(tmp_path: Path) -> None:
    with pytest.raises(WALNotFound, match="nope"):
        open_wal(str(tmp_path / "nope"))
    junk = tmp_path / "junk"
    junk.write_bytes(b"hello world")
    with pytest.raises(CorruptWALError, match="not a WAL"):
        open_wal(str(junk))
    unknown = tmp_path / "u"
    unknown.write_bytes(b"PWAL" + delimited(WAL_pb2.WALHeader(writer_cls_name="Nope").SerializeToString()))
    with pytest.raises(CorruptWALError, match="unknown writer class 'Nope'"):
        open_wal(str(unknown))
    path = tmp_path / "w"
    ends = _write(path, [simple_entry(0)])
    with pytest.raises(CorruptWALError, match="inside the header"):
        open_wal(str(path), start=10)
    with pytest.raises(CorruptWALError, match="past the end"):
        open_wal(str(path), start=ends[0] + 1)
    reader = open_wal(str(path))
    list(reader)
    with pytest.raises(WALError, match="already been read"):
        list(reader.raw_entries())


def test_ship_path_raw_entries(tmp_path: Path) -> None:
    path = tmp_path / "w"
    batch = [simple_entry(i, table=b"t1" if i % 2 else b"ns:t2", families=(b"a", b"b")) for i in range(6)]
    ends = _write(path, batch)
    reader = open_wal(str(path))
    raws = list(reader.raw_entries(key_filter=lambda key: key.table_name == b"t1"))
    assert [r.key for r in raws] == [e.key for e in batch if e.key.table_name == b"t1"]
    for raw in raws:
        assert isinstance(raw.cell_bytes, memoryview)
        original = batch[ends.index(raw.end)]
        assert bytes(raw.cell_bytes) == encode_cells(original.cells)
        assert decode_cells(raw.cell_bytes, raw.cell_count)[0] == original.cells
    assert reader.position == ends[-1]


def test_reads_across_buffer_refills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replication.wal.reader as reader_module

    monkeypatch.setattr(reader_module, "CHUNK", 64)  # force many refills and entries split across them
    path = tmp_path / "w"
    batch = [simple_entry(i, n=3) for i in range(20)]
    ends = _write(path, batch)
    got = list(open_wal(str(path)))
    assert [r.entry for r in got] == batch and [r.end for r in got] == ends


def test_key_cache_never_leaks_between_entries(tmp_path: Path) -> None:
    import uuid

    from replication.wal.model import Cell, WALKey

    cid = uuid.UUID(int=42)
    keys = [
        WALKey(b"r" * 32, b"t1", 1, 10, {b"f": 1}),
        WALKey(b"r" * 32, b"t1", 2, 11, {b"f": 1}),  # same as above but seq/time: served from the cache
        WALKey(b"r" * 32, b"t1", 300, 2**40, {b"f": 1, b"g": 1}, [cid]),
        WALKey(b"r" * 32, b"t1", 301, 2**40 + 1, {b"f": 1}, nonce_group=5, nonce=-7, orig_sequence_number=9),
        WALKey(b"r" * 32, b"t1", 302, 2**40 + 2, {b"f": 1}),
    ]
    counts = [1, 1, 2, 1, 1]  # entries 1 and 4 have the layout of entry 0: their keys come from the cache
    batch = [Entry(k, [Cell(b"row", b"f", b"q", 1, 4, b"v")] * c) for k, c in zip(keys, counts, strict=True)]
    path = tmp_path / "w"
    _write(path, batch)
    got = []
    for raw in open_wal(str(path)).raw_entries():
        got.append(raw.key)
        raw.key.scopes[b"mutated"] = 2  # a caller changing its key must not change later ones
        raw.key.cluster_ids.append(cid)
    for key, expected in zip(got, keys, strict=True):
        key.scopes.pop(b"mutated")
        key.cluster_ids.pop()
        assert key == expected


def test_cells_of_mixed_sizes_and_a_corrupt_size(tmp_path: Path) -> None:
    from replication.wal.model import Cell

    same = [Cell(b"row", b"f", b"q%d" % j, 1, 4, b"v" * 10) for j in range(4)]
    mixed = [*same[:3], Cell(b"row", b"f", b"q3", 1, 4, b"v" * 11)]
    path = tmp_path / "w"
    ends = _write(path, [Entry(simple_entry(0).key, same), Entry(simple_entry(1).key, mixed), simple_entry(2)])
    assert [r.entry.cells for r in open_wal(str(path))] == [same, mixed, simple_entry(2).cells]
    data = bytearray(path.read_bytes())
    key_len = data[ends[0]]
    third_cell = ends[0] + 1 + key_len + 2 * len(encode_cells(same[:1]))
    data[third_cell : third_cell + 4] = struct.pack(">i", 3)  # a size no cell can have
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptWALError, match=rf"corrupt entry at offset {ends[0]}: cell at offset {third_cell}"):
        list(open_wal(str(path)).raw_entries())


def test_empty_key_at_the_very_end_is_corruption_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "w"
    ends = _write(path, [simple_entry(0)], close=False)
    path.write_bytes(path.read_bytes() + b"\x00" * 9)  # a zero-length WALKey, then zeros
    with pytest.raises(CorruptWALError, match=rf"corrupt entry at offset {ends[0]}: WALKey misses required"):
        list(open_wal(str(path)))


def test_overlong_varint_length_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "w"
    ends = _write(path, [simple_entry(0)], close=False)
    path.write_bytes(path.read_bytes() + b"\xff" * 12)  # a key length that never ends
    with pytest.raises(CorruptWALError, match=rf"corrupt entry at offset {ends[0]}: the WALKey length is not a varint"):
        list(open_wal(str(path)))
    path.write_bytes(path.read_bytes()[: ends[0] + 5])  # a few such bytes at the end: a torn tail
    reader = open_wal(str(path))
    assert [r.entry for r in reader] == [simple_entry(0)] and reader.truncated_tail_bytes == 5


def test_entries_end_is_the_file_length_while_open_and_the_trailer_start_once_closed(tmp_path: Path) -> None:
    path = tmp_path / "w"
    w = ProtobufLogWriter(str(path))
    assert open_wal(str(path)).entries_end == open_wal(str(path)).first_entry_offset  # header only
    ends = [w.append(simple_entry(i, n=2)) for i in range(3)]
    w.sync()
    assert open_wal(str(path)).entries_end == ends[-1] == path.stat().st_size  # still being written
    w.close()
    closed = open_wal(str(path))
    assert closed.trailer_present and closed.entries_end == ends[-1] == path.stat().st_size - 8
