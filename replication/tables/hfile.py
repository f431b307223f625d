"""HBase's HFile (version 3), read whole into cells: what a bulk load brings into a table.

Layout (HBase's HFileWriterImpl, FixedFileTrailer, HFileBlock):
- the file ends with a fixed-size trailer (4096 bytes for version 3; the last int is the version, the
  major version in its low three bytes): ``TRABLK"$`` then a varint-delimited ``FileTrailerProto``
  (file_info_offset = 1, first_data_block_offset = 9, last_data_block_offset = 10, compression_codec = 12,
  encryption_key = 13, entry_count = 7);
- blocks, each a 33-byte header (8-byte magic, int32 on-disk size without header, int32 uncompressed
  size, int64 previous block offset, checksum type, int32 bytes per checksum, int32 on-disk data size
  with header) then data then checksums; data blocks have the magic ``DATABLK*``, and index or bloom
  blocks may lie between them;
- a data block's cells: int32 key length, int32 value length, the KeyValue key, the value, then
  ``int16 tags length + tags`` when the file info has ``hfile.MAX_TAGS_LEN``, then the memstore timestamp
  as a Hadoop vlong when its ``KEY_VALUE_VERSION`` is 1;
- the file info block (``FILEINF2``) holds ``PBUF`` + a delimited ``FileInfoProto`` (key/value pairs).

Only what bulk loads write by default is read: uncompressed blocks, no data block encoding, no
encryption, no compressed tags; anything else is refused with one HFileError line naming it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from replication.tables.errors import TableError
from replication.wal.model import Cell
from replication.wal.varint import decode_varint

TRAILER_MAGIC = b'TRABLK"$'
DATA_MAGIC = b"DATABLK*"
FILE_INFO_MAGIC = b"FILEINF2"
PB_MAGIC = b"PBUF"
HEADER_SIZE = 33  # HFileBlock.headerSize(true): HBase checksums in every 2.x block
TRAILER_SIZE_V3 = 4096
COMPRESSION_NONE = 2  # Compression.Algorithm.NONE's ordinal
_BLOCK_HEADER = struct.Struct(">8siiqBii")
_KV_LENGTHS = struct.Struct(">ii")
_U16 = struct.Struct(">H")
_TS_TYPE = struct.Struct(">qB")


class HFileError(TableError):
    """Bytes that are not an HFile hbrep reads (the message names the file and what is wrong)."""


def _fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """The (field number, value) pairs of a protobuf message: varints as ints, length-delimited as bytes."""
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, value
        elif wire == 2:
            size, pos = _varint(buf, pos)
            yield number, buf[pos : pos + size]
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    decoded = decode_varint(buf, pos)
    if decoded is None:
        raise ValueError("truncated varint")
    return decoded


def _vlong_size(first: int) -> int:
    """Bytes of the Hadoop vlong whose first byte is ``first`` (WritableUtils.decodeVIntSize)."""
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return 1
    return -119 - signed if signed < -120 else -111 - signed


def read_hfile(data: bytes, where: str) -> list[Cell]:
    """Every cell of the HFile ``data`` in file order; HFileError naming ``where`` when it is not one hbrep reads."""
    try:
        return list(_cells(data, where))
    except HFileError:
        raise
    except (ValueError, IndexError, struct.error) as exc:
        raise HFileError(f"{where} is not a readable HFile ({exc})") from None


def _cells(data: bytes, where: str) -> Iterator[Cell]:
    if len(data) < 4:
        raise HFileError(f"{where} is not an HFile (only {len(data)} bytes)")
    version = struct.unpack_from(">i", data, len(data) - 4)[0]
    major = version & 0x00FFFFFF
    if major != 3:
        raise HFileError(f"{where}: HFile version {major}; hbrep reads version 3")
    start = len(data) - TRAILER_SIZE_V3
    if start < 0 or data[start : start + 8] != TRAILER_MAGIC:
        raise HFileError(f"{where} is not an HFile (no trailer)")
    size, pos = _varint(data, start + 8)
    trailer = dict(_fields(data[pos : pos + size]))
    if trailer.get(13):
        raise HFileError(f"{where} is encrypted; hbrep reads unencrypted HFiles")
    if trailer.get(12, COMPRESSION_NONE) != COMPRESSION_NONE:
        raise HFileError(f"{where} is compressed (codec {trailer[12]}); hbrep reads uncompressed HFiles")
    info = _file_info(data, int(trailer.get(1, 0)), where)
    encoding = info.get(b"DATA_BLOCK_ENCODING", b"NONE")
    if encoding != b"NONE":
        raise HFileError(f"{where} has data block encoding {encoding.decode(errors='replace')}; hbrep reads NONE")
    if info.get(b"hfile.TAGS_COMPRESSED", b"\x00") not in (b"", b"\x00"):
        raise HFileError(f"{where} has compressed tags; hbrep reads uncompressed ones")
    with_tags = b"hfile.MAX_TAGS_LEN" in info
    with_mvcc = struct.unpack(">i", info[b"KEY_VALUE_VERSION"])[0] == 1 if b"KEY_VALUE_VERSION" in info else False
    if not trailer.get(7):  # entry_count: an empty file
        return
    offset, last = int(trailer.get(9, 0)), int(trailer.get(10, 0))
    while offset <= last:
        magic, on_disk, _size, _prev, _kind, _per, data_with_header = _BLOCK_HEADER.unpack_from(data, offset)
        if magic == DATA_MAGIC:
            yield from _block_cells(data, offset + HEADER_SIZE, offset + data_with_header, with_tags, with_mvcc)
        offset += HEADER_SIZE + on_disk


def _file_info(data: bytes, offset: int, where: str) -> dict[bytes, bytes]:
    magic, _on_disk, _uncompressed, _prev, _checksum, _per, data_with_header = _BLOCK_HEADER.unpack_from(data, offset)
    body = data[offset + HEADER_SIZE : offset + data_with_header]
    if magic != FILE_INFO_MAGIC or not body.startswith(PB_MAGIC):
        raise HFileError(f"{where}: no file info block at offset {offset}")
    size, pos = _varint(body, len(PB_MAGIC))
    info: dict[bytes, bytes] = {}
    for number, pair in _fields(body[pos : pos + size]):
        if number == 1 and isinstance(pair, bytes):
            fields = dict(_fields(pair))
            info[bytes(fields.get(1, b""))] = bytes(fields.get(2, b""))  # type: ignore[arg-type]
    return info


def _block_cells(data: bytes, pos: int, end: int, with_tags: bool, with_mvcc: bool) -> Iterator[Cell]:
    while pos < end:
        klen, vlen = _KV_LENGTHS.unpack_from(data, pos)
        key = pos + 8
        rlen = _U16.unpack_from(data, key)[0]
        f = key + 2 + rlen
        flen = data[f]
        q = f + 1 + flen
        ts_at = key + klen - 9
        timestamp, kind = _TS_TYPE.unpack_from(data, ts_at)
        value_at = key + klen
        pos = value_at + vlen
        tags = b""
        if with_tags:
            tlen = _U16.unpack_from(data, pos)[0]
            tags = data[pos + 2 : pos + 2 + tlen]
            pos += 2 + tlen
        if with_mvcc:
            pos += _vlong_size(data[pos])
        yield Cell(data[key + 2 : key + 2 + rlen], data[f + 1 : q], data[q:ts_at], timestamp, kind,
                   data[value_at : value_at + vlen], tags)  # fmt: skip
    if pos != end:
        raise ValueError(f"data block ends at {end}, its last cell at {pos}")
