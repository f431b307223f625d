"""ProtobufLogWriter: writes HBase's protobuf WAL byte for byte (spec §1.1, §1.2).

File layout::

    "PWAL" | varint32 + WALHeader | { varint32 + WALKey, N cells } ... | WALTrailer | int32 size | "LAWP"

The header is the one HBase's writers produce: has_compression, has_tag_compression and
has_value_compression (false when off), ``writer_cls_name`` (``ProtobufLogWriter`` → an 80-byte header,
``AsyncProtobufLogWriter`` → 85 bytes), the WALCellCodec class name and, with value compression, the
codec's Compression.Algorithm ordinal. The trailer is written only by :meth:`ProtobufLogWriter.close`;
a crashed writer leaves a file without one.

``compression`` (a :class:`WALCompression`) writes what HBase writes with
``hbase.regionserver.wal.enablecompression`` (spec §1.5): dictionary-coded WALKeys and cells, tags
dictionary-coded too unless ``tags`` is off (``hbase.regionserver.wal.tags.enablecompression``), and
values through ``values``, a codec name (``hbase.regionserver.wal.value.enablecompression`` with
``hbase.regionserver.wal.value.compression.type``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from types import TracebackType
from typing import BinaryIO

from replication.fs import FileSystem, LocalFileSystem
from replication.proto import WAL_pb2
from replication.wal.cell_codec import encode_cells
from replication.wal.compression import CompressionContext, compress_key, encode_compressed_cells
from replication.wal.errors import WALError
from replication.wal.key_codec import encode_key
from replication.wal.model import Entry
from replication.wal.value_codecs import ValueCodec
from replication.wal.varint import delimited

PB_WAL_MAGIC = b"PWAL"
PB_WAL_COMPLETE_MAGIC = b"LAWP"
WAL_CELL_CODEC = "org.apache.hadoop.hbase.regionserver.wal.WALCellCodec"
KNOWN_WRITER_CLASSES = frozenset({"ProtobufLogWriter", "AsyncProtobufLogWriter"})


@dataclass(frozen=True)
class WALCompression:
    """WAL compression as HBase configures it: tag compression on by default (as in HBase), values
    compressed with the codec named by ``values`` (GZ, SNAPPY, LZ4, ZSTD, BZIP2, NONE) or not (None)."""

    tags: bool = True
    values: str | None = None

    def context(self) -> CompressionContext:
        """Fresh dictionaries (and value codec) for one new file."""
        codec = ValueCodec(self.values) if self.values is not None else None
        return CompressionContext(has_tag_compression=self.tags, value_codec=codec)


def build_header(
    writer_cls_name: str = "ProtobufLogWriter", compression: WALCompression | None = None
) -> WAL_pb2.WALHeader:
    """The WALHeader HBase writes for an unencrypted WAL, uncompressed unless ``compression`` is given."""
    header = WAL_pb2.WALHeader(
        has_compression=compression is not None,
        has_tag_compression=compression is not None and compression.tags,
        writer_cls_name=writer_cls_name,
        cell_codec_cls_name=WAL_CELL_CODEC,
        has_value_compression=compression is not None and compression.values is not None,
    )
    if compression is not None and compression.values is not None:
        header.value_compression_algorithm = ValueCodec(compression.values).ordinal
    return header


def trailer_bytes() -> bytes:
    """The bytes of a clean close: the (empty) WALTrailer, its int32 size, and "LAWP"."""
    trailer = WAL_pb2.WALTrailer().SerializeToString()
    return trailer + struct.pack(">i", len(trailer)) + PB_WAL_COMPLETE_MAGIC


def encode_entry(entry: Entry) -> bytes:
    """One entry as it sits in the file: delimited WALKey (following_kv_count set) + the cells."""
    return delimited(encode_key(entry.key, len(entry.cells))) + encode_cells(entry.cells)


def encode_compressed_entry(entry: Entry, ctx: CompressionContext) -> bytes:
    """One entry of a compressed WAL, coded with (and updating) the file's ``ctx``."""
    key = compress_key(entry.key, ctx)
    return delimited(encode_key(key, len(entry.cells))) + encode_compressed_cells(entry.cells, ctx)


class ProtobufLogWriter:
    """Writes one new WAL file. ``append`` buffers, ``sync`` makes everything appended durable.

    With ``compression`` the file is a compressed WAL; its entries can then only be appended one by
    one (``append``), since each is coded against the dictionaries the ones before it filled."""

    def __init__(
        self,
        path: str,
        *,
        fs: FileSystem | None = None,
        writer_cls_name: str = "ProtobufLogWriter",
        compression: WALCompression | None = None,
    ) -> None:
        self.path = path
        self._ctx = compression.context() if compression is not None else None
        header = build_header(writer_cls_name, compression)
        self._fs = fs or LocalFileSystem()
        self._stream: BinaryIO | None = self._fs.create(path)
        head = PB_WAL_MAGIC + delimited(header.SerializeToString())
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
        stream = self._open_stream()
        data = encode_entry(entry) if self._ctx is None else encode_compressed_entry(entry, self._ctx)
        stream.write(data)
        self._length += len(data)
        return self._length

    def append_raw(self, data: bytes | memoryview) -> int:
        """Append bytes already encoded as entries (e.g. from :func:`encode_entry`), or a part of one whose
        rest the next call appends before any sync. Not for a compressed WAL (its entries depend on each other)."""
        if self._ctx is not None:
            raise WALError(f"WAL writer for {self.path}: append_raw on a compressed WAL; append entries one by one")
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
