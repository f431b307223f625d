"""Compressed WALs (spec §1.5): hand-made golden bytes, LRU index reuse, positions; tag compression and
value compression with each codec, written by hbrep's writer and read back (Hypothesis)."""

from __future__ import annotations

import struct
from collections import OrderedDict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wal_strategies import simple_entry

from replication.proto import WAL_pb2
from replication.wal.cell_codec import decode_cells
from replication.wal.compression import LRUDictionary
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError, WALError
from replication.wal.key_codec import key_to_pb
from replication.wal.model import Cell, Entry, WALKey
from replication.wal.reader import open_wal
from replication.wal.value_codecs import SUPPORTED, ValueCodec
from replication.wal.varint import delimited, encode_varint
from replication.wal.writer import ProtobufLogWriter, WALCompression


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


def test_tags_stay_raw_without_tag_compression(tmp_path: Path) -> None:
    entry = Entry(simple_entry(0).key, [Cell(b"r", b"f", b"q", 1, 4, b"v", b"\x00\x02\x01x")])
    content, _ = _compressed_wal([entry])
    path = tmp_path / "c"
    path.write_bytes(content)
    assert [r.entry for r in open_wal(str(path))] == [entry]
    # the same bytes written by hbrep's writer with tag compression off
    ours = tmp_path / "ours"
    with ProtobufLogWriter(str(ours), compression=WALCompression(tags=False)) as writer:
        writer.append(entry)
    assert ours.read_bytes()[len(_header()) : -8] == content[len(_header()) :]


def test_tag_compression_golden_bytes(tmp_path: Path) -> None:
    # Two cells with tags [TTL, x] then [x, TTL]: the second cell's tags (and row, family, qualifier) are
    # dictionary indexes; TTL went in first (index 0), x second (index 1).
    ttl, x = b"\x08" + bytes(8), b"\x01x"
    key = delimited(key_to_pb(WALKey(b"\xff\x01r", b"\xff\x01t", 1, 1), 2).SerializeToString())
    ts_type = struct.pack(">qB", 1, 4)
    first = bytes([15, 0, 15]) + b"\xff\x01a\xff\x01f\xff\x01q" + ts_type + b"\xff\x09" + ttl + b"\xff\x02" + x
    second = bytes([15, 0, 15]) + b"\x00\x00" * 3 + ts_type + b"\x00\x01\x00\x00"
    content = _header(tag_compression=True) + key + first + second
    path = tmp_path / "c"
    path.write_bytes(content)
    [read] = [r.entry for r in open_wal(str(path))]
    block1 = b"\x00\x09" + ttl + b"\x00\x02" + x
    block2 = b"\x00\x02" + x + b"\x00\x09" + ttl
    assert read == Entry(WALKey(b"r", b"t", 1, 1), [Cell(b"a", b"f", b"q", 1, 4, b"", t) for t in (block1, block2)])
    # hbrep's writer writes these very bytes for that entry
    ours = tmp_path / "ours"
    with ProtobufLogWriter(str(ours), compression=WALCompression()) as writer:
        writer.append(read)
    assert ours.read_bytes() == content + b"\x00\x00\x00\x00LAWP"


def test_missing_tag_dictionary_index_is_corruption(tmp_path: Path) -> None:
    key = delimited(key_to_pb(WALKey(b"\xff\x01r", b"\xff\x01t", 1, 1), 1).SerializeToString())
    cell = bytes([15, 0, 4]) + b"\xff\x01a\xff\x01f\xff\x01q" + struct.pack(">qB", 1, 4) + b"\x00\x05"
    path = tmp_path / "c"
    path.write_bytes(_header(tag_compression=True) + key + cell + b"\x00\x00\x00\x00LAWP")
    with pytest.raises(CorruptWALError, match=r"corrupt entry at offset \d+: .*dictionary index 5 not assigned"):
        list(open_wal(str(path)))


# --- writer and reader together: tag and value compression, each codec ------------------------------

_tag = st.builds(lambda t, b: struct.pack(">H", 1 + len(b)) + bytes([t]) + b, st.sampled_from([1, 2, 8, 65]), _names)
_tags = st.lists(_tag, max_size=3).map(b"".join)
_values = st.one_of(_names, st.binary(max_size=300), st.binary(max_size=4).map(lambda b: b * 200))
_tagged_cells = st.builds(
    Cell,
    _names,
    st.sampled_from([b"f", b"g"]),
    _names,
    st.integers(0, 2**40),
    st.sampled_from([4, 8, 12]),
    _values,
    _tags,
)
CODECS = [None, *SUPPORTED]


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(CODECS),
    st.booleans(),
    st.lists(st.lists(_tagged_cells, max_size=4), min_size=1, max_size=6),
    st.data(),
)
def test_writer_round_trip_prefix_and_resume(tmp_path_factory, codec, tags, batches, data) -> None:
    entries = [Entry(simple_entry(i % 3).key, cells) for i, cells in enumerate(batches)]
    path = tmp_path_factory.mktemp("cw") / "c"
    ends = []
    with ProtobufLogWriter(str(path), compression=WALCompression(tags=tags, values=codec)) as writer:
        for entry in entries:
            ends.append(writer.append(entry))
    reader = open_wal(str(path))
    assert reader.header.has_tag_compression == tags and reader.header.has_value_compression == (codec is not None)
    assert [(r.entry, r.end) for r in reader] == list(zip(entries, ends, strict=True))
    # the ship path hands the cells out in the plain KeyValue framing
    assert [decode_cells(r.cell_bytes, r.cell_count)[0] for r in open_wal(str(path)).raw_entries()] == [
        e.cells for e in entries
    ]
    content = path.read_bytes()
    cut = data.draw(st.integers(min_value=ends[0] - 1, max_value=len(content) - 8))
    path.write_bytes(content[:cut])
    reader = open_wal(str(path))
    whole = [e for e in ends if e <= cut]
    assert [r.entry for r in reader] == entries[: len(whole)]
    assert reader.truncated_tail_bytes == cut - reader.position
    path.write_bytes(content)
    assert [r.entry for r in open_wal(str(path), start=reader.position)] == entries[len(whole) :]


@pytest.mark.parametrize("codec", SUPPORTED)
@given(value=st.one_of(st.binary(max_size=2000), st.binary(min_size=1, max_size=3).map(lambda b: b * 150_000)))
@settings(max_examples=15, deadline=None)
def test_value_codec_round_trip(codec: str, value: bytes) -> None:
    c = ValueCodec(codec)
    assert c.decompress(c.compress(value), len(value)) == value


@pytest.mark.parametrize("codec", ["SNAPPY", "LZ4", "ZSTD"])
def test_hadoop_block_layout_of_large_values(codec: str) -> None:
    # BlockCompressorStream: int32 length, chunks of at most the codec's input limit, then an empty block.
    c = ValueCodec(codec)
    big = bytes(range(256)) * 2000
    data = c.compress(big)
    assert struct.unpack_from(">i", data)[0] == len(big) and data.endswith(b"\x00\x00\x00\x00")
    assert c.compress(b"") == b"\x00\x00\x00\x00"
    assert c.decompress(data, len(big)) == big


def test_zstd_values_as_single_frames_read_too() -> None:
    # Hadoop's native ZStandardCodec writes each value as one zstd frame, without Hadoop's block framing.
    import zstandard

    value = b"hbase " * 1000
    assert ValueCodec("ZSTD").decompress(zstandard.ZstdCompressor().compress(value), len(value)) == value
    with pytest.raises(CorruptWALError, match="ZSTD value"):
        ValueCodec("ZSTD").decompress(zstandard.ZstdCompressor().compress(value)[:-3], len(value))


@pytest.mark.parametrize("codec", [c for c in SUPPORTED if c != "NONE"])
def test_corrupt_compressed_value_is_an_error_with_its_offset(tmp_path: Path, codec: str) -> None:
    entry = Entry(simple_entry(0).key, [Cell(b"r", b"f", b"q", 1, 4, b"value " * 50)])
    path = tmp_path / "c"
    with ProtobufLogWriter(str(path), compression=WALCompression(values=codec)) as writer:
        start = writer.length
        writer.append(entry)
    content = path.read_bytes()
    packed = ValueCodec(codec).compress(entry.cells[0].value)
    at = content.index(packed)
    corruptions = [bytes(len(packed))]  # zeroes where the value's bytes were
    if codec in ("GZ", "BZIP2"):  # the codecs with a checksum also catch one flipped byte
        mid = len(packed) // 2
        corruptions.append(packed[:mid] + bytes([packed[mid] ^ 0x55]) + packed[mid + 1 :])
    for bad in corruptions:
        path.write_bytes(content[:at] + bad + content[at + len(packed) :])
        with pytest.raises(
            CorruptWALError, match=rf"^{path}: corrupt entry at offset {start}: compressed cell at offs"
        ):
            list(open_wal(str(path)))


@pytest.mark.parametrize(("ordinal", "name"), [(0, "LZO"), (7, "LZMA"), (8, "BROTLI"), (42, "#42")])
def test_value_codec_hbrep_lacks_names_itself(tmp_path: Path, ordinal: int, name: str) -> None:
    header = WAL_pb2.WALHeader(
        has_compression=True, has_value_compression=True, value_compression_algorithm=ordinal,
        writer_cls_name="ProtobufLogWriter",
    )  # fmt: skip
    path = tmp_path / "c"
    path.write_bytes(b"PWAL" + delimited(header.SerializeToString()))
    with pytest.raises(CompressedWALNotSupported, match=rf"^{path}: WAL value compression with {name} is not supp"):
        open_wal(str(path))
    with pytest.raises(CompressedWALNotSupported, match=f"with {name} is not supported"):
        WALCompression(values=name).context()


def test_compressed_writer_refuses_raw_appends(tmp_path: Path) -> None:
    with (
        ProtobufLogWriter(str(tmp_path / "c"), compression=WALCompression()) as writer,
        pytest.raises(WALError, match="append_raw on a compressed WAL"),
    ):
        writer.append_raw(b"x")
