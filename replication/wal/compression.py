"""Reading WALs written with ``hbase.regionserver.wal.enablecompression`` (spec §1.5).

HBase's CompressionContext keeps five LRU dictionaries per file (REGION, TABLE, FAMILY, QUALIFIER,
ROW). A dictionary-coded field is a status byte: 0xFF (NOT_IN_DICTIONARY) then a raw varint32 length
and the literal, which the reader adds to the dictionary (empty literals are not added); any other
status byte is the high byte of a big-endian short index. Looking an index up moves it to the LRU head;
a full dictionary evicts its tail and reuses that index (LRUDictionary).

WALKey: region (REGION), table (TABLE), scope families (FAMILY) and attribute values (TABLE) hold
the coded form. Cells (CompressedKvEncoder/Decoder): varint32 key length, value length, tags length
(all uncompressed lengths); row (ROW), family (FAMILY), qualifier (QUALIFIER); int64 timestamp; type
byte; the value (raw, or with value compression a varint32 length and the codec's bytes, see
value_codecs.py); then, when the tags length is not 0, the tags: raw, or with tag compression
(``has_tag_compression``, HBase's default with WAL compression) TagCompressionContext's form: each tag
(its type byte and bytes, without its 2-byte length) coded in a sixth dictionary of Short.MAX_VALUE
entries, until the tags length is filled.

Dictionaries are per file, so reading from a position means decoding from the first entry again.
The writer side (``CompressionContext.for_writing``) mirrors LRUDictionary.findEntry, so a file it
writes is read back by HBase with the same dictionaries.
"""

from __future__ import annotations

import struct
from collections import OrderedDict

from replication.wal.cell_codec import KEY_INFRASTRUCTURE_SIZE
from replication.wal.errors import CorruptWALError
from replication.wal.model import Cell, WALKey
from replication.wal.value_codecs import ValueCodec
from replication.wal.varint import decode_varint, encode_varint

NOT_IN_DICTIONARY = 0xFF
SHORT_MAX = 0x7FFF
BYTE_MAX = 0x7F
_TS_TYPE = struct.Struct(">qB")
_U16 = struct.Struct(">H")


class ShortInput(Exception):
    """The buffer ends inside a compressed structure (a truncated tail, not corruption)."""


class LRUDictionary:
    """HBase's LRUDictionary: add_entry and get_entry (reader side), find_entry (writer side), with the
    same index reuse."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: list[bytes] = []
        self._lru: OrderedDict[int, None] = OrderedDict()  # least recently used first
        self._index: dict[bytes, int] = {}  # entry → index, for find_entry

    def add_entry(self, data: bytes) -> None:
        """Add a literal (empty ones are ignored, as in HBase); evicts the LRU tail when full."""
        if not data:
            return
        if len(self._entries) < self.capacity:
            idx = len(self._entries)
            self._entries.append(data)
            self._lru[idx] = None
        else:
            idx = next(iter(self._lru))
            old = self._entries[idx]
            if self._index.get(old) == idx:
                del self._index[old]
            self._entries[idx] = data
            self._lru.move_to_end(idx)
        self._index[data] = idx

    def find_entry(self, data: bytes) -> int:
        """LRUDictionary.findEntry: the index of ``data`` (moved to the LRU head), or -1 after adding it."""
        idx = self._index.get(data)
        if idx is not None:
            self._lru.move_to_end(idx)
            return idx
        self.add_entry(data)
        return -1

    def get_entry(self, idx: int) -> bytes:
        """The entry at ``idx`` (moved to the LRU head); CorruptWALError for an index never assigned."""
        if not 0 <= idx < len(self._entries):
            raise CorruptWALError(f"dictionary index {idx} not assigned (dictionary holds {len(self._entries)})")
        self._lru.move_to_end(idx)
        return self._entries[idx]

    def __len__(self) -> int:
        return len(self._entries)


class CompressionContext:
    """The dictionaries (and value codec) of one compressed WAL file, filled as its entries are read
    or written in order. ``value_codec`` is None without value compression."""

    def __init__(self, *, has_tag_compression: bool = False, value_codec: ValueCodec | None = None) -> None:
        self.region = LRUDictionary(SHORT_MAX)
        self.table = LRUDictionary(SHORT_MAX)
        self.family = LRUDictionary(BYTE_MAX)
        self.qualifier = LRUDictionary(BYTE_MAX)
        self.row = LRUDictionary(SHORT_MAX)
        self.tags = LRUDictionary(SHORT_MAX) if has_tag_compression else None
        self.has_tag_compression = has_tag_compression
        self.value_codec = value_codec


def read_coded(buf: bytes | memoryview, pos: int, limit: int, dictionary: LRUDictionary) -> tuple[bytes, int]:
    """One dictionary-coded field at ``pos``: (bytes, next offset). Raises ShortInput at ``limit``."""
    if pos >= limit:
        raise ShortInput
    status = buf[pos]
    if status == NOT_IN_DICTIONARY:
        length, start = _varint(buf, pos + 1, limit)
        end = start + length
        if end > limit:
            raise ShortInput
        data = bytes(buf[start:end])
        dictionary.add_entry(data)
        return data, end
    if pos + 2 > limit:
        raise ShortInput
    return dictionary.get_entry((status << 8) | buf[pos + 1]), pos + 2


def write_coded(out: bytearray, data: bytes, dictionary: LRUDictionary) -> None:
    """Dictionary.write: the 2-byte index of ``data``, or NOT_IN_DICTIONARY, varint32 length and ``data``."""
    idx = dictionary.find_entry(data)
    if idx < 0:
        out.append(NOT_IN_DICTIONARY)
        out += encode_varint(len(data))
        out += data
    else:
        out += _U16.pack(idx)


def compress_field(data: bytes, dictionary: LRUDictionary) -> bytes:
    """A WALKey bytes field in its coded form (BaosAndCompressor.compress)."""
    out = bytearray()
    write_coded(out, data, dictionary)
    return bytes(out)


def compress_key(key: WALKey, ctx: CompressionContext) -> WALKey:
    """A copy of ``key`` with the fields HBase codes in their coded form, in WALKeyImpl.getBuilder's order."""
    return WALKey(
        compress_field(key.encoded_region_name, ctx.region),
        compress_field(key.table_name, ctx.table),
        key.log_sequence_number,
        key.write_time,
        {compress_field(f, ctx.family): s for f, s in key.scopes.items()},
        key.cluster_ids,
        key.nonce_group,
        key.nonce,
        key.orig_sequence_number,
        {k: compress_field(v, ctx.table) for k, v in key.extended_attributes.items()},
    )


def encode_compressed_cells(cells: list[Cell], ctx: CompressionContext) -> bytes:
    """``cells`` as CompressedKvEncoder writes them with this context (which they update)."""
    out = bytearray()
    codec = ctx.value_codec
    for cell in cells:
        row, family, qualifier, value, tags = cell.row, cell.family, cell.qualifier, cell.value, cell.tags
        if len(row) > SHORT_MAX or len(family) > BYTE_MAX or len(tags) > 0xFFFF:
            raise ValueError(f"row ({len(row)}), family ({len(family)}) or tags ({len(tags)}) too long for a KeyValue")
        out += encode_varint(KEY_INFRASTRUCTURE_SIZE + len(row) + len(family) + len(qualifier))
        out += encode_varint(len(value))
        out += encode_varint(len(tags))
        write_coded(out, row, ctx.row)
        write_coded(out, family, ctx.family)
        write_coded(out, qualifier, ctx.qualifier)
        out += _TS_TYPE.pack(cell.timestamp, cell.type)
        if codec is None:
            out += value
        else:
            packed = codec.compress(value)
            out += encode_varint(len(packed))
            out += packed
        if tags:
            if ctx.tags is None:
                out += tags
            else:
                _compress_tags(out, tags, ctx.tags)
    return bytes(out)


def _compress_tags(out: bytearray, tags: bytes, dictionary: LRUDictionary) -> None:
    """TagCompressionContext.compressTags: each tag's bytes (after its 2-byte length) dictionary-coded."""
    pos, end = 0, len(tags)
    while pos < end:
        if pos + 2 > end:
            raise ValueError(f"tags block of {end} bytes: a tag length is cut at byte {pos}")
        (length,) = _U16.unpack_from(tags, pos)
        pos += 2
        if pos + length > end:
            raise ValueError(f"tags block of {end} bytes: a tag of {length} bytes at byte {pos} does not fit")
        write_coded(out, tags[pos : pos + length], dictionary)
        pos += length


def _uncompress_tags(
    buf: bytes | memoryview, pos: int, limit: int, length: int, dictionary: LRUDictionary
) -> tuple[bytes, int]:
    """TagCompressionContext.uncompressTags: coded tags until ``length`` bytes of tags (each with its
    2-byte length) are filled; (the tags block, next offset)."""
    parts: list[bytes] = []
    filled = 0
    while filled < length:
        tag, pos = read_coded(buf, pos, limit, dictionary)
        if len(tag) > 0xFFFF:
            raise CorruptWALError(f"a compressed tag of {len(tag)} bytes")
        parts += (_U16.pack(len(tag)), tag)
        filled += 2 + len(tag)
    if filled != length:
        raise CorruptWALError(f"compressed tags fill {filled} bytes, the cell says {length}")
    return b"".join(parts), pos


def uncompress_field(data: bytes, dictionary: LRUDictionary) -> bytes:
    """A coded WALKey bytes field (ByteStringUncompressor.uncompress); CorruptWALError if incomplete."""
    try:
        value, _end = read_coded(data, 0, len(data), dictionary)
    except ShortInput:
        raise CorruptWALError(f"dictionary-coded WALKey field of {len(data)} bytes is incomplete") from None
    return value


def uncompress_key(key: WALKey, ctx: CompressionContext) -> WALKey:
    """Replace the coded fields of a key parsed from a compressed WAL, in HBase's reading order."""
    key.encoded_region_name = uncompress_field(key.encoded_region_name, ctx.region)
    key.table_name = uncompress_field(key.table_name, ctx.table)
    if key.scopes:
        key.scopes = {uncompress_field(f, ctx.family): s for f, s in key.scopes.items()}
    if key.extended_attributes:
        key.extended_attributes = {k: uncompress_field(v, ctx.table) for k, v in key.extended_attributes.items()}
    return key


def _varint(buf: bytes | memoryview, pos: int, limit: int) -> tuple[int, int]:
    try:
        parsed = decode_varint(buf, pos, limit)
    except ValueError as exc:
        raise CorruptWALError(str(exc)) from None
    if parsed is None:
        raise ShortInput
    return parsed


def decode_compressed_cells(
    buf: bytes | memoryview, count: int, pos: int, limit: int, ctx: CompressionContext
) -> tuple[list[Cell], int]:
    """``count`` compressed cells from ``pos``: (cells, next offset). ShortInput at ``limit``;
    CorruptWALError for lengths that disagree and values or tags that do not decode."""
    cells: list[Cell] = []
    codec = ctx.value_codec
    tag_dict = ctx.tags
    for _ in range(count):
        start = pos
        klen, pos = _varint(buf, pos, limit)
        vlen, pos = _varint(buf, pos, limit)
        tlen, pos = _varint(buf, pos, limit)
        row, pos = read_coded(buf, pos, limit, ctx.row)
        family, pos = read_coded(buf, pos, limit, ctx.family)
        qualifier, pos = read_coded(buf, pos, limit, ctx.qualifier)
        if len(row) > SHORT_MAX or len(family) > BYTE_MAX:
            raise CorruptWALError(f"compressed cell at offset {start}: row or family too long")
        if KEY_INFRASTRUCTURE_SIZE + len(row) + len(family) + len(qualifier) != klen:
            raise CorruptWALError(f"compressed cell at offset {start}: key length {klen} does not match its parts")
        if pos + 9 > limit:
            raise ShortInput
        ts, typ = _TS_TYPE.unpack_from(buf, pos)
        pos += 9
        if codec is None:
            if pos + vlen > limit:
                raise ShortInput
            value = bytes(buf[pos : pos + vlen])
            pos += vlen
        else:
            clen, pos = _varint(buf, pos, limit)
            if pos + clen > limit:
                raise ShortInput
            try:
                value = codec.decompress(bytes(buf[pos : pos + clen]), vlen)
            except CorruptWALError as exc:
                raise CorruptWALError(f"compressed cell at offset {start}: {exc}") from None
            pos += clen
        tags = b""
        if tlen:
            if tag_dict is not None:
                try:
                    tags, pos = _uncompress_tags(buf, pos, limit, tlen, tag_dict)
                except CorruptWALError as exc:
                    raise CorruptWALError(f"compressed cell at offset {start}: {exc}") from None
            else:
                if pos + tlen > limit:
                    raise ShortInput
                tags = bytes(buf[pos : pos + tlen])
                pos += tlen
        cells.append(Cell(row, family, qualifier, ts, typ, value, tags))
    return cells, pos
