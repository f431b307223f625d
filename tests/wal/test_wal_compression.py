"""Dictionary-compressed WALs (spec §1.5): hand-made golden bytes, LRU index reuse, positions."""

from __future__ import annotations

import struct
from collections import OrderedDict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wal_strategies import simple_entry

from replication.proto import WAL_pb2
from replication.wal.compression import LRUDictionary
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError
from replication.wal.key_codec import key_to_pb
from replication.wal.model import Cell, Entry, WALKey
from replication.wal.reader import open_wal
from replication.wal.varint import delimited, encode_varint


def _header(*, tag_compression: bool = False) -> bytes:
    header = WAL_pb2.WALHeader(
        has_compression=True,
        has_tag_compression=tag_compression,
        writer_cls_name="ProtobufLogWriter",
        cell_codec_cls_name="org.apache.hadoop.hbase.regionserver.wal.WALCellCodec",
        has_value_compression=False,
    )
    return b"PWAL" + delimited(header.SerializeToString())


def test_golden_bytes_with_literals_then_indexes(tmp_path: Path) -> None:
    def key(region: bytes, table: bytes, seq: int) -> bytes:
        body = b"\x0a" + bytes([len(region)]) + region + b"\x12" + bytes([len(table)]) + table
        return delimited(body + bytes([0x18, seq, 0x20, seq, 0x38, 1]))

    def cell(row: bytes, fam: bytes, qual: bytes, ts: int, value: bytes) -> bytes:
        return bytes([15, len(value), 0]) + row + fam + qual + struct.pack(">qB", ts, 4) + value

    lit = lambda b: b"\xff" + bytes([len(b)]) + b  # noqa: E731 - NOT_IN_DICTIONARY, varint length, literal
    first = key(lit(b"r1"), lit(b"t"), 1) + cell(lit(b"a"), lit(b"f"), lit(b"q"), 1, b"v")
    second = key(b"\x00\x00", b"\x00\x00", 2) + cell(b"\x00\x00", b"\x00\x00", b"\x00\x00", 2, b"w")
    path = tmp_path / "c"
    path.write_bytes(_header() + first + second + b"\x00\x00\x00\x00LAWP")
    reader = open_wal(str(path))
    got = list(reader)
    assert [
        (r.entry.key.encoded_region_name, r.entry.key.table_name, r.entry.key.log_sequence_number) for r in got
    ] == [
        (b"r1", b"t", 1),
        (b"r1", b"t", 2),
    ]
    assert [r.entry.cells for r in got] == [[Cell(b"a", b"f", b"q", 1, 4, b"v")], [Cell(b"a", b"f", b"q", 2, 4, b"w")]]
    assert reader.trailer_present and reader.position == len(path.read_bytes()) - 8
    # Reading from the second entry still works: the dictionaries are rebuilt from the first one.
    assert [r.entry.cells[0].value for r in open_wal(str(path), start=got[0].end)] == [b"w"]
    with pytest.raises(CorruptWALError, match="not an entry boundary"):
        list(open_wal(str(path), start=got[0].end - 1))


def test_lru_dictionary_reuses_the_least_recently_used_index() -> None:
    d = LRUDictionary(2)
    d.add_entry(b"a")
    d.add_entry(b"")  # empty literals are not added
    d.add_entry(b"b")
    assert len(d) == 2
    assert d.get_entry(0) == b"a"  # "a" is now the most recent; "b" (index 1) the eviction candidate
    d.add_entry(b"c")
    assert (d.get_entry(0), d.get_entry(1)) == (b"a", b"c")
    with pytest.raises(CorruptWALError, match="index 2 not assigned"):
        d.get_entry(2)


class _WriterDict:
    """The writer side of LRUDictionary.findEntry: hit → move to head, miss → add (or evict the tail)."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.entries, self.index, self.lru = capacity, [], {}, OrderedDict()

    def code(self, data: bytes) -> bytes:
        if data in self.index:
            idx = self.index[data]
            self.lru.move_to_end(idx)
            return struct.pack(">H", idx)
        if data:
            if len(self.entries) < self.capacity:
                idx = len(self.entries)
                self.entries.append(data)
            else:
                idx = next(iter(self.lru))
                del self.index[self.entries[idx]]
                self.entries[idx] = data
            self.index[data] = idx
            self.lru[idx] = None
            self.lru.move_to_end(idx)
        return b"\xff" + encode_varint(len(data)) + data


def _compressed_wal(entries: list[Entry]) -> tuple[bytes, list[int]]:
    region, table, family, qualifier, row = (_WriterDict(n) for n in (0x7FFF, 0x7FFF, 0x7F, 0x7F, 0x7FFF))
    out, ends = bytearray(_header()), []
    for entry in entries:
        k = entry.key
        coded = WALKey(
            region.code(k.encoded_region_name),
            table.code(k.table_name),
            k.log_sequence_number,
            k.write_time,
            {family.code(f): s for f, s in k.scopes.items()},
            k.cluster_ids,
            extended_attributes={a: table.code(v) for a, v in k.extended_attributes.items()},
        )
        out += delimited(key_to_pb(coded, len(entry.cells)).SerializeToString())
        for c in entry.cells:
            out += encode_varint(12 + len(c.row) + len(c.family) + len(c.qualifier))
            out += encode_varint(len(c.value)) + encode_varint(len(c.tags))
            out += row.code(c.row) + family.code(c.family) + qualifier.code(c.qualifier)
            out += struct.pack(">qB", c.timestamp, c.type) + c.value + c.tags
        ends.append(len(out))
    return bytes(out), ends


_names = st.sampled_from([b"", b"a", b"b", b"c", b"row-1", b"row-2"])
_cells = st.builds(Cell, _names, st.sampled_from([b"f", b"g"]), _names, st.integers(0, 2**40), st.just(4), _names)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_cells, max_size=4), min_size=1, max_size=6), st.data())
def test_round_trip_prefix_and_resume(tmp_path_factory: pytest.TempPathFactory, batches, data) -> None:
    entries = [Entry(simple_entry(i % 2).key, cells) for i, cells in enumerate(batches)]
    content, ends = _compressed_wal(entries)
    path = tmp_path_factory.mktemp("cwal") / "c"
    path.write_bytes(content)
    assert [r.entry for r in open_wal(str(path))] == entries
    cut = data.draw(st.integers(min_value=ends[0] - 1, max_value=len(content)))
    path.write_bytes(content[:cut])
    reader = open_wal(str(path))
    whole = [e for e in ends if e <= cut]
    assert [r.entry for r in reader] == entries[: len(whole)]
    assert reader.truncated_tail_bytes == cut - reader.position
    path.write_bytes(content)
    assert [r.entry for r in open_wal(str(path), start=reader.position)] == entries[len(whole) :]


def test_small_dictionaries_evict_and_reuse_indexes(tmp_path: Path) -> None:
    # 200 distinct qualifiers overflow the 127-entry QUALIFIER dictionary; earlier ones come back later.
    quals = [b"q%d" % i for i in range(200)] + [b"q5", b"q199", b"q150"]
    entries = [Entry(simple_entry(0).key, [Cell(b"r", b"f", q, 1, 4, b"")]) for q in quals]
    content, _ = _compressed_wal(entries)
    path = tmp_path / "c"
    path.write_bytes(content)
    assert [r.entry.cells[0].qualifier for r in open_wal(str(path))] == quals


def test_compressed_tags_are_refused_with_the_offset(tmp_path: Path) -> None:
    entry = Entry(simple_entry(0).key, [Cell(b"r", b"f", b"q", 1, 4, b"v", b"\x00\x02\x01x")])
    content, _ = _compressed_wal([entry])
    header_len = len(_header())
    path = tmp_path / "c"
    path.write_bytes(_header(tag_compression=True) + content[header_len:])
    # Same entry bytes, but the header now says tags are dictionary-compressed.
    with pytest.raises(CompressedWALNotSupported, match="compressed tags are not supported"):
        list(open_wal(str(path)))
    path.write_bytes(content)
    assert [r.entry for r in open_wal(str(path))] == [entry]  # raw tags are fine
