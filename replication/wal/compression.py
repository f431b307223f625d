"""Reading WALs written with ``hbase.regionserver.wal.enablecompression`` (spec §1.5).

HBase's CompressionContext keeps five LRU dictionaries per file (REGION, TABLE, FAMILY, QUALIFIER,
ROW). A dictionary-coded field is a status byte: 0xFF (NOT_IN_DICTIONARY) then a raw varint32 length
and the literal, which the reader adds to the dictionary (empty literals are not added); any other
status byte is the high byte of a big-endian short index. Looking an index up moves it to the LRU head;
a full dictionary evicts its tail and reuses that index (LRUDictionary).

WALKey: region (REGION), table (TABLE), scope families (FAMILY) and attribute values (TABLE) hold
the coded form. Cells (CompressedKvDecoder): varint32 key length, value length, tags length; row (ROW),
family (FAMILY), qualifier (QUALIFIER); int64 timestamp; type byte; the value raw; raw tags.

Dictionaries are per file, so reading from a position means decoding from the first entry again.
Not supported (clear error): value compression (a stateful stream codec) and compressed tags.
"""

from __future__ import annotations

import struct
from collections import OrderedDict

from replication.wal.cell_codec import KEY_INFRASTRUCTURE_SIZE
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError
from replication.wal.model import Cell, WALKey
from replication.wal.varint import decode_varint

NOT_IN_DICTIONARY = 0xFF
SHORT_MAX = 0x7FFF
BYTE_MAX = 0x7F
_TS_TYPE = struct.Struct(">qB")


class ShortInput(Exception):
    """The buffer ends inside a compressed structure (a truncated tail, not corruption)."""


class LRUDictionary:
    """HBase's LRUDictionary, reader side: add_entry and get_entry with the same index reuse."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: list[bytes] = []
        self._lru: OrderedDict[int, None] = OrderedDict()  # least recently used first

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
            self._entries[idx] = data
            self._lru.move_to_end(idx)

    def get_entry(self, idx: int) -> bytes:
        """The entry at ``idx`` (moved to the LRU head); CorruptWALError for an index never assigned."""
        if not 0 <= idx < len(self._entries):
            raise CorruptWALError(f"dictionary index {idx} not assigned (dictionary holds {len(self._entries)})")
        self._lru.move_to_end(idx)
        return self._entries[idx]

    def __len__(self) -> int:
        return len(self._entries)


class CompressionContext:
    """The dictionaries of one compressed WAL file, filled as its entries are read in order."""

    def __init__(self, *, has_tag_compression: bool = False) -> None:
        self.region = LRUDictionary(SHORT_MAX)
        self.table = LRUDictionary(SHORT_MAX)
        self.family = LRUDictionary(BYTE_MAX)
        self.qualifier = LRUDictionary(BYTE_MAX)
        self.row = LRUDictionary(SHORT_MAX)
        self.has_tag_compression = has_tag_compression


def read_coded(buf: bytes | memoryview, pos: int, limit: int, dictionary: LRUDictionary) -> tuple[bytes, int]:
    """One dictionary-coded field at ``pos``: (bytes, next offset). Raises ShortInput at ``limit``."""
    if pos >= limit:
        raise ShortInput
    status = buf[pos]
    if status == NOT_IN_DICTIONARY:
        parsed = decode_varint(buf, pos + 1, limit)
        if parsed is None:
            raise ShortInput
        length, start = parsed
        end = start + length
        if end > limit:
            raise ShortInput
        data = bytes(buf[start:end])
        dictionary.add_entry(data)
        return data, end
    if pos + 2 > limit:
        raise ShortInput
    return dictionary.get_entry((status << 8) | buf[pos + 1]), pos + 2


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
    parsed = decode_varint(buf, pos, limit)
    if parsed is None:
        raise ShortInput
    return parsed


def decode_compressed_cells(
    buf: bytes | memoryview, count: int, pos: int, limit: int, ctx: CompressionContext
) -> tuple[list[Cell], int]:
    """``count`` compressed cells from ``pos``: (cells, next offset). ShortInput at ``limit``;
    CorruptWALError for lengths that disagree; CompressedWALNotSupported for compressed tags."""
    cells: list[Cell] = []
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
        if pos + 9 + vlen > limit:
            raise ShortInput
        ts, typ = _TS_TYPE.unpack_from(buf, pos)
        pos += 9
        value = bytes(buf[pos : pos + vlen])
        pos += vlen
        tags = b""
        if tlen:
            if ctx.has_tag_compression:
                raise CompressedWALNotSupported(
                    f"compressed cell at offset {start}: compressed tags are not supported (has_tag_compression)"
                )
            if pos + tlen > limit:
                raise ShortInput
            tags = bytes(buf[pos : pos + tlen])
            pos += tlen
        cells.append(Cell(row, family, qualifier, ts, typ, value, tags))
    return cells, pos
