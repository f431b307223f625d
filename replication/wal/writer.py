"""ProtobufLogWriter: writes HBase's protobuf WAL byte for byte (spec §1.1, §1.2).

File layout::

    "PWAL" | varint32 + WALHeader | { varint32 + WALKey, N cells } ... | WALTrailer | int32 size | "LAWP"

The header is the one HBase's writers produce: has_compression, has_tag_compression and
has_value_compression set to false, ``writer_cls_name`` (``ProtobufLogWriter`` → an 80-byte header,
``AsyncProtobufLogWriter`` → 85 bytes) and the WALCellCodec class name. The trailer is written only
by :meth:`ProtobufLogWriter.close`; a crashed writer leaves a file without one.
"""

from __future__ import annotations

import struct
from types import TracebackType
from typing import BinaryIO

from replication.fs import FileSystem, LocalFileSystem
from replication.proto import WAL_pb2
from replication.wal.cell_codec import encode_cells
from replication.wal.errors import WALError
from replication.wal.key_codec import encode_key
from replication.wal.model import Entry
from replication.wal.varint import delimited

PB_WAL_MAGIC = b"PWAL"
PB_WAL_COMPLETE_MAGIC = b"LAWP"
WAL_CELL_CODEC = "org.apache.hadoop.hbase.regionserver.wal.WALCellCodec"
KNOWN_WRITER_CLASSES = frozenset({"ProtobufLogWriter", "AsyncProtobufLogWriter"})


def build_header(writer_cls_name: str = "ProtobufLogWriter") -> WAL_pb2.WALHeader:
    """The WALHeader HBase writes for an uncompressed, unencrypted WAL."""
    return WAL_pb2.WALHeader(
        has_compression=False,
        has_tag_compression=False,
        writer_cls_name=writer_cls_name,
        cell_codec_cls_name=WAL_CELL_CODEC,
        has_value_compression=False,
    )


def trailer_bytes() -> bytes:
    """The bytes of a clean close: the (empty) WALTrailer, its int32 size, and "LAWP"."""
    trailer = WAL_pb2.WALTrailer().SerializeToString()
    return trailer + struct.pack(">i", len(trailer)) + PB_WAL_COMPLETE_MAGIC


def encode_entry(entry: Entry) -> bytes:
    """One entry as it sits in the file: delimited WALKey (following_kv_count set) + the cells."""
    return delimited(encode_key(entry.key, len(entry.cells))) + encode_cells(entry.cells)


class ProtobufLogWriter:
    """Writes one new WAL file. ``append`` buffers, ``sync`` makes everything appended durable."""

    def __init__(self, path: str, *, fs: FileSystem | None = None, writer_cls_name: str = "ProtobufLogWriter") -> None:
        self.path = path
        self._fs = fs or LocalFileSystem()
        self._stream: BinaryIO | None = self._fs.create(path)
        head = PB_WAL_MAGIC + delimited(build_header(writer_cls_name).SerializeToString())
        self._stream.write(head)
        self._stream.flush()
        self._length = len(head)

    @property
    def length(self) -> int:
        """Bytes written so far (the offset where the next entry starts)."""
        return self._length

    @property
    def closed(self) -> bool:
        return self._stream is None

    def _open_stream(self) -> BinaryIO:
        if self._stream is None:
            raise WALError(f"WAL writer for {self.path} is closed")
        return self._stream

    def append(self, entry: Entry) -> int:
        """Append one entry; returns its end offset (a position a reader can resume from)."""
        data = encode_entry(entry)
        self._open_stream().write(data)
        self._length += len(data)
        return self._length

    def append_raw(self, data: bytes | memoryview) -> int:
        """Append bytes already encoded as entries (e.g. from :func:`encode_entry`), or a part of one whose
        rest the next call appends before any sync."""
        self._open_stream().write(data)
        self._length += len(data)
        return self._length

    def sync(self) -> None:
        """Flush and fsync: every entry appended so far is durable when this returns."""
        self._fs.sync(self._open_stream())

    def close(self) -> None:
        """Clean close: trailer + size + "LAWP", synced, then the file is closed. Idempotent."""
        if self._stream is None:
            return
        tail = trailer_bytes()
        self._stream.write(tail)
        self._length += len(tail)
        self._fs.sync(self._stream)
        self._stream.close()
        self._stream = None

    def abort(self) -> None:
        """Close without a trailer (what a crashed writer leaves: entries written so far, no "LAWP")."""
        if self._stream is None:
            return
        self._stream.flush()
        self._stream.close()
        self._stream = None

    def __enter__(self) -> ProtobufLogWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # A failure inside the block must not look like a clean close (a trailer after a half entry).
        if exc_type is None:
            self.close()
        else:
            self.abort()
