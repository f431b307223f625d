"""The 0.94 HLog: a Hadoop SequenceFile of (HLogKey, WALEdit) records (spec §10).

File: ``"SEQ" 06``, key and value class names (vint-length Text), two booleans (record / block
compression), metadata (int32 count + Text pairs, e.g. ``version=1``), a 16-byte sync marker, then
records ``int32 recordLength | int32 keyLength | key | value``; a recordLength of -1 is followed by the
sync marker again instead of a record.

HLogKey: vint version (-1 INITIAL, -2 COMPRESSED; >= 0 = an unversioned key where the number is the
region name length), region and table names (vint length + bytes), int64 sequence, int64 write time,
then a boolean and, when true, the cluster id (most significant long first).

WALEdit: int32 -1 (VERSION_2), int32 cell count, cells as ``int32 length | KeyValue`` (the same framing
as the protobuf WAL, so cell bytes are forwarded unchanged), int32 scope count, (vint-length family,
int32 scope) pairs. Any other first int is the length of a single KeyValue (pre-VERSION_2 edits).

Departure from HBase: the whole file is read into memory (0.94 logs are small and read once, when
draining an old cluster); the protobuf reader streams.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Iterator
from typing import Protocol

from replication.fs import FileSystem
from replication.wal.cell_codec import CellCodecError, TruncatedCellError, cells_end
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError
from replication.wal.model import RawEntry, WALKey

HLOG_KEY_CLASS = "org.apache.hadoop.hbase.regionserver.wal.HLogKey"
WAL_EDIT_CLASS = "org.apache.hadoop.hbase.regionserver.wal.WALEdit"
SYNC_SIZE = 16
SYNC_ESCAPE = -1
WALEDIT_VERSION_2 = -1
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class _Short(Exception):
    """The buffer ended inside a structure (a truncated tail, not corruption)."""


def read_vlong(buf: bytes | memoryview, pos: int, limit: int) -> tuple[int, int]:
    """Hadoop ``WritableUtils.readVLong`` at ``pos``: (value, next offset). Raises _Short at ``limit``."""
    if pos >= limit:
        raise _Short
    first = buf[pos]
    first = first - 256 if first > 127 else first
    if first >= -112:
        return first, pos + 1
    size = -119 - first if first < -120 else -111 - first
    if pos + size > limit:
        raise _Short
    value = int.from_bytes(buf[pos + 1 : pos + size], "big")
    if first < -120:
        value = ~value
    return value, pos + size


def _read_bytes(buf: bytes | memoryview, pos: int, limit: int) -> tuple[bytes, int]:
    length, pos = read_vlong(buf, pos, limit)
    if length < 0:
        raise ValueError(f"negative length {length}")
    if pos + length > limit:
        raise _Short
    return bytes(buf[pos : pos + length]), pos + length


def read_sequence_file_header(head: bytes, path: str) -> tuple[dict[str, str], int]:
    """Check a SequenceFile header; returns its metadata and the offset of the first record.

    Raises CorruptWALError for another version or key/value class, CompressedWALNotSupported for
    SequenceFile compression or 0.94 dictionary WAL compression (``compression.type=dictionary``).
    """
    limit = len(head)
    try:
        if limit < 4:
            raise _Short
        version = head[3]
        if version != 6:
            raise CorruptWALError(f"{path}: SequenceFile version {version} is not supported (expected 6)")
        key_cls, pos = _read_bytes(head, 4, limit)
        value_cls, pos = _read_bytes(head, pos, limit)
        if key_cls.decode() != HLOG_KEY_CLASS or value_cls.decode() != WAL_EDIT_CLASS:
            raise CorruptWALError(f"{path}: SequenceFile of {key_cls.decode()}/{value_cls.decode()} is not an HLog")
        if pos + 2 > limit:
            raise _Short
        record_compressed, block_compressed = head[pos], head[pos + 1]
        pos += 2
        if record_compressed or block_compressed:
            raise CompressedWALNotSupported(f"{path}: compressed SequenceFile HLogs are not supported")
        if pos + 4 > limit:
            raise _Short
        (count,) = _I32.unpack_from(head, pos)
        pos += 4
        metadata: dict[str, str] = {}
        for _ in range(count):
            name, pos = _read_bytes(head, pos, limit)
            value, pos = _read_bytes(head, pos, limit)
            metadata[name.decode()] = value.decode()
        if pos + SYNC_SIZE > limit:
            raise _Short
    except _Short:
        raise CorruptWALError(f"{path}: SequenceFile header is truncated (file length {limit})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptWALError(f"{path}: garbled SequenceFile header: {exc}") from None
    if metadata.get("compression.type") == "dictionary":
        raise CompressedWALNotSupported(f"{path}: compressed WALs are not supported (compression.type=dictionary)")
    return metadata, pos + SYNC_SIZE


def parse_hlog_key(buf: bytes | memoryview, pos: int, end: int) -> WALKey:
    """Decode an HLogKey Writable occupying ``buf[pos:end]``."""
    version, p = read_vlong(buf, pos, end)
    if version < 0:
        region, p = _read_bytes(buf, p, end)
    else:  # unversioned key: the number just read is the region name length
        if p + version > end:
            raise _Short
        region, p = bytes(buf[p : p + version]), p + version
    table, p = _read_bytes(buf, p, end)
    if p + 16 > end:
        raise _Short
    seq = _I64.unpack_from(buf, p)[0]
    write_time = _I64.unpack_from(buf, p + 8)[0]
    p += 16
    cluster_ids: list[uuid.UUID] = []
    if p < end and buf[p]:
        if p + 17 > end:
            raise _Short
        msb = int.from_bytes(buf[p + 1 : p + 9], "big")
        lsb = int.from_bytes(buf[p + 9 : p + 17], "big")
        cluster_ids.append(uuid.UUID(int=(msb << 64) | lsb))
    return WALKey(region, table, seq, write_time, cluster_ids=cluster_ids)


def parse_wal_edit(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int, int, dict[bytes, int]]:
    """Decode a WALEdit in ``buf[pos:end]``: (cell count, cells start, cells end, scopes)."""
    if pos + 4 > end:
        raise _Short
    (first,) = _I32.unpack_from(buf, pos)
    if first != WALEDIT_VERSION_2:  # an old edit: one KeyValue, ``first`` is its length
        return 1, pos, cells_end(buf[:end], 1, pos), {}
    if pos + 8 > end:
        raise _Short
    (count,) = _I32.unpack_from(buf, pos + 4)
    if count < 0:
        raise ValueError(f"negative cell count {count}")
    start = pos + 8
    stop = cells_end(buf[:end], count, start)
    scopes: dict[bytes, int] = {}
    if stop + 4 <= end:
        (nscopes,) = _I32.unpack_from(buf, stop)
        p = stop + 4
        for _ in range(nscopes):
            family, p = _read_bytes(buf, p, end)
            if p + 4 > end:
                raise _Short
            scopes[family] = _I32.unpack_from(buf, p)[0]
            p += 4
    return count, start, stop, scopes


class SequenceFileCursor(Protocol):
    """What the scan reads and moves: the WAL's file and header, and the position it reached
    (``WALReader`` is one)."""

    fs: FileSystem
    path: str
    file_length: int
    first_entry_offset: int
    position: int

    def finish(self, tail_start: int) -> None:
        """The scan ended at ``tail_start`` (what is past it is a truncated tail, if any)."""
        ...


def scan_sequence_file(reader: SequenceFileCursor, key_filter: Callable[[WALKey], bool] | None) -> Iterator[RawEntry]:
    """The records of a 0.94 HLog from ``reader.position`` as RawEntry (cells left encoded)."""
    data = reader.fs.read_range(reader.path, 0)
    view = memoryview(data)
    limit = min(len(data), reader.file_length)
    sync = data[reader.first_entry_offset - SYNC_SIZE : reader.first_entry_offset]
    pos = reader.position
    while pos < limit:
        try:
            if pos + 4 > limit:
                raise _Short
            (rec_len,) = _I32.unpack_from(data, pos)
            if rec_len == SYNC_ESCAPE:
                if pos + 4 + SYNC_SIZE > limit:
                    raise _Short
                if data[pos + 4 : pos + 4 + SYNC_SIZE] != sync:
                    raise ValueError("sync marker does not match the header's")
                pos += 4 + SYNC_SIZE
                reader.position = pos
                continue
            if pos + 8 > limit:
                raise _Short
            (key_len,) = _I32.unpack_from(data, pos + 4)
            if rec_len < 0 or key_len < 0 or key_len > rec_len:
                raise ValueError(f"record length {rec_len} / key length {key_len} are inconsistent")
            key_start = pos + 8
            value_start = key_start + key_len
            end = key_start + rec_len
            if end > limit:
                raise _Short
            key = parse_hlog_key(data, key_start, value_start)
            count, cstart, cend, scopes = parse_wal_edit(view, value_start, end)
            key.scopes = scopes
        except (_Short, TruncatedCellError):
            reader.finish(pos)
            return
        except (ValueError, CellCodecError) as exc:
            raise CorruptWALError(f"{reader.path}: corrupt entry at offset {pos}: {exc}") from None
        reader.position = end
        if key_filter is None or key_filter(key):
            yield RawEntry(key, count, view[cstart:cend], pos, end)
        pos = end
    reader.finish(pos)
