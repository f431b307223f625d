"""Reading WALs: HBase's protobuf WAL and the 0.94 SequenceFile HLog (auto-detected), from any position.

Promises (spec §1.1, ProtobufLogReader / WALEntryStream):

- Entries come with their start and end offsets; ``end`` is a position a later reader can start from.
- A cleanly closed file has a trailer (``... 00 00 00 00 "LAWP"``); entries stop where it starts
  (``trailer_present``). An entry that runs into the trailer is corruption.
- Without a trailer (crashed or still-open writer) an incomplete last entry, or a partial trailer, ends
  the read at the last whole entry: ``position`` stays there and ``truncated_tail_bytes`` says how much
  follows. A read from ``position`` later (when the writer has appended more) resumes correctly.
- Bytes that are all there but do not decode raise :class:`CorruptWALError` naming file and offset.
  Departure from HBase: ProtobufLogReader treats a garbled entry like EOF; we never skip silently.
- ``has_compression`` WALs are read with their dictionaries rebuilt from the first entry
  (replication/wal/compression.py), compressed tags and compressed values (value_codecs.py) included;
  a value codec hbrep does not read, and encryption, raise naming themselves.
- A zero-length file has no entries and position 0.

The ship path (:meth:`WALReader.raw_entries`) decodes only WALKeys: cells stay encoded as a memoryview
of the read buffer, found by following the int32 size of each cell.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from itertools import repeat
from types import TracebackType
from typing import BinaryIO, NamedTuple

from google.protobuf.message import DecodeError

from replication.fs import FileSystem, FileSystemError, LocalFileSystem
from replication.proto import WAL_pb2
from replication.wal.cell_codec import KEY_INFRASTRUCTURE_SIZE, CellCodecError, decode_cells, encode_cells
from replication.wal.compression import CompressionContext, ShortInput, decode_compressed_cells, uncompress_key
from replication.wal.errors import CompressedWALNotSupported, CorruptWALError, WALError, WALNotFound
from replication.wal.key_codec import KeyDecoder, decode_key
from replication.wal.legacy import read_sequence_file_header, scan_sequence_file
from replication.wal.model import Entry, RawEntry, WALKey
from replication.wal.value_codecs import ValueCodec, algorithm_name
from replication.wal.varint import decode_varint
from replication.wal.writer import KNOWN_WRITER_CLASSES, PB_WAL_COMPLETE_MAGIC, PB_WAL_MAGIC, WAL_CELL_CODEC

__all__ = [
    "CompressedWALNotSupported",
    "CorruptWALError",
    "RawEntry",
    "ReadEntry",
    "WALNotFound",
    "WALReader",
    "open_wal",
]

SEQUENCE_FILE_MAGIC = b"SEQ"
TRAILER_TAIL = b"\x00\x00\x00\x00" + PB_WAL_COMPLETE_MAGIC  # empty trailer + int32 0 + "LAWP"
CHUNK = 8 << 20
MIN_CELL_SIZE = 8 + KEY_INFRASTRUCTURE_SIZE
_I32 = struct.Struct(">i")
# Codecs whose cell encoding is the plain KeyValue framing (spec §1.4).
PLAIN_CELL_CODECS = frozenset({"", WAL_CELL_CODEC})


class ReadEntry(NamedTuple):
    """A decoded entry and its byte range in the file."""

    entry: Entry
    start: int
    end: int


def open_wal(path: str, *, fs: FileSystem | None = None, start: int = 0) -> WALReader:
    """Open a WAL (protobuf or 0.94 SequenceFile) to read from ``start`` (0 = the first entry).

    Raises WALNotFound, CorruptWALError (not a WAL, bad header, start inside the header or past
    the end) or CompressedWALNotSupported, each naming the file.
    """
    return WALReader(path, fs=fs, start=start)


class WALReader:
    """One pass over a WAL from a start position. Iterate for :class:`ReadEntry`, or use raw_entries().

    After iteration: ``position`` (where the next read starts), ``file_length``, ``trailer_present``
    and ``truncated_tail_bytes``.
    """

    def __init__(self, path: str, *, fs: FileSystem | None = None, start: int = 0) -> None:
        self.path = path
        self.fs = fs or LocalFileSystem()
        if start < 0:
            raise CorruptWALError(f"{path}: negative start position {start}")
        try:
            # not status().length: on HDFS a WAL still being written is readable past it (hflushed bytes)
            self.file_length = self.fs.readable_length(path)
        except FileSystemError:
            raise WALNotFound(f"WAL not found: {path}") from None
        self.start = start
        self.header: WAL_pb2.WALHeader | None = None
        self.sequence_file_metadata: dict[str, str] = {}
        self.trailer_present = False
        self.truncated_tail_bytes = 0
        self.position = 0
        self.first_entry_offset = 0
        self._stop = self.file_length
        self._consumed = False
        self.compressed = False
        self.value_codec: ValueCodec | None = None
        self.format = self._open()

    # --- opening -------------------------------------------------------------------------------

    def _open(self) -> str:
        if self.file_length == 0:
            self._check_start(0)
            return "empty"
        head = self.fs.read_range(self.path, 0, min(self.file_length, 64 << 10))
        if head.startswith(PB_WAL_MAGIC):
            self._open_protobuf(head)
            return "protobuf"
        if head.startswith(SEQUENCE_FILE_MAGIC):
            self.sequence_file_metadata, self.first_entry_offset = read_sequence_file_header(head, self.path)
            self._set_start()
            return "sequencefile"
        if len(head) < len(PB_WAL_MAGIC) and PB_WAL_MAGIC.startswith(head):
            # A writer that died while writing the magic: nothing to read yet.
            self._check_start(0)
            self.truncated_tail_bytes = self.file_length
            return "empty"
        raise CorruptWALError(f"{self.path}: not a WAL (starts with {head[:4]!r}, expected 'PWAL' or 'SEQ')")

    def _open_protobuf(self, head: bytes) -> None:
        try:
            parsed = decode_varint(head, 4)
        except ValueError as exc:  # found by fuzzing: an over-long header length varint
            raise CorruptWALError(f"{self.path}: garbled WALHeader length at offset 4: {exc}") from None
        if parsed is None or parsed[1] + parsed[0] > self.file_length:
            # The header itself is incomplete: a writer that died right after creating the file.
            self._check_start(0)
            self.truncated_tail_bytes = self.file_length
            self._stop = 0
            return
        size, body = parsed
        if body + size > len(head):
            head = self.fs.read_range(self.path, 0, body + size)
        header = WAL_pb2.WALHeader()
        try:
            header.ParseFromString(head[body : body + size])
        except DecodeError as exc:
            raise CorruptWALError(f"{self.path}: garbled WALHeader at offset 4: {exc}") from None
        self.compressed = header.has_compression
        if header.has_compression and header.has_value_compression:
            # ProtobufLogReader: the codec is the Compression.Algorithm of this ordinal.
            if not header.HasField("value_compression_algorithm"):
                raise CompressedWALNotSupported(
                    f"{self.path}: has_value_compression without value_compression_algorithm in the WALHeader"
                )
            name = algorithm_name(header.value_compression_algorithm)
            try:
                self.value_codec = ValueCodec(name)
            except CompressedWALNotSupported as exc:
                raise CompressedWALNotSupported(f"{self.path}: {exc}") from None
        if header.HasField("encryption_key"):
            raise WALError(f"{self.path}: encrypted WALs are not supported (encryption_key in the WALHeader)")
        if header.HasField("writer_cls_name") and header.writer_cls_name not in KNOWN_WRITER_CLASSES:
            raise CorruptWALError(f"{self.path}: got unknown writer class {header.writer_cls_name!r} in the WALHeader")
        if header.cell_codec_cls_name not in PLAIN_CELL_CODECS:
            raise WALError(f"{self.path}: unsupported cell codec {header.cell_codec_cls_name!r} in the WALHeader")
        self.header = header
        self.first_entry_offset = body + size
        self._find_trailer()
        self._set_start()

    def _find_trailer(self) -> None:
        """ProtobufLogReader.setTrailerIfPresent: int32 size + "LAWP" in the last 8 bytes."""
        length = self.file_length
        if length - self.first_entry_offset < 8:
            return
        tail = self.fs.read_range(self.path, length - 8, 8)
        if tail[4:] != PB_WAL_COMPLETE_MAGIC:
            return
        size = int.from_bytes(tail[:4], "big", signed=True)
        trailer_start = length - 8 - size
        if size < 0 or trailer_start < self.first_entry_offset:
            return
        trailer = WAL_pb2.WALTrailer()
        try:
            trailer.ParseFromString(self.fs.read_range(self.path, trailer_start, size) if size else b"")
        except DecodeError:
            return  # as setTrailerIfPresent: an unparsable trailer means "no trailer"
        self.trailer_present = True
        self._stop = trailer_start

    def _check_start(self, first: int) -> None:
        if self.start not in (0, first):
            raise CorruptWALError(
                f"{self.path}: start position {self.start} is past the end of the entries (file length "
                f"{self.file_length})"
            )
        self.position = first

    def _set_start(self) -> None:
        if self.start == 0:
            self.position = self.first_entry_offset
        elif self.start < self.first_entry_offset:
            raise CorruptWALError(
                f"{self.path}: start position {self.start} is inside the header (entries start at "
                f"{self.first_entry_offset})"
            )
        elif self.start > self._stop:
            raise CorruptWALError(
                f"{self.path}: start position {self.start} is past the end of the entries at {self._stop} "
                f"(file length {self.file_length})"
            )
        else:
            self.position = self.start

    @property
    def entries_end(self) -> int:
        """Where the entries end now: the trailer's start in a closed WAL, else the file's length."""
        return self._stop

    # --- reading -------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[ReadEntry]:
        """Every entry from the start position, cells decoded, with its [start, end) offsets."""
        for raw in self.raw_entries():
            try:
                cells, _ = decode_cells(raw.cell_bytes, raw.cell_count)
            except CellCodecError as exc:
                raise CorruptWALError(f"{self.path}: corrupt entry at offset {raw.start}: {exc}") from None
            yield ReadEntry(Entry(raw.key, cells), raw.start, raw.end)

    def raw_entries(self, key_filter: Callable[[WALKey], bool] | None = None) -> Iterator[RawEntry]:
        """Entries with cells left encoded (a memoryview of the file bytes), for shipping.

        ``key_filter``: entries whose key it rejects are passed over (their bytes still advance the
        position). Only one pass per reader.
        """
        if self._consumed:
            raise WALError(f"{self.path}: this reader has already been read; open the WAL again")
        self._consumed = True
        if self.format == "empty":
            return iter(())
        if self.format == "sequencefile":
            return scan_sequence_file(self, key_filter)
        if self.compressed:
            return self._scan_compressed(key_filter)
        return self._scan_protobuf(key_filter)

    def entries(self) -> Iterator[Entry]:
        """The decoded entries only (no offsets)."""
        for read in self:
            yield read.entry

    def finish(self, tail_start: int) -> None:
        """The scan ended at ``tail_start``: the position stays there, and when the WAL has no trailer
        the bytes past it are its truncated tail (``truncated_tail_bytes``)."""
        self.position = tail_start
        self.truncated_tail_bytes = 0 if self.trailer_present else self.file_length - tail_start

    def _scan_protobuf(self, key_filter: Callable[[WALKey], bool] | None) -> Iterator[RawEntry]:
        stop = self._stop
        path = self.path
        pos = self.position
        if pos >= stop:
            self.finish(pos)
            return
        stream: BinaryIO = self.fs.open_read(path, pos)
        try:
            base = pos  # file offset of buf[0]
            buf = stream.read(min(CHUNK, stop - pos))
            view = memoryview(buf)
            off = 0
            n = len(buf)
            decode_key = KeyDecoder().decode
            unpack_i32 = _I32.unpack_from
            strides: dict[tuple[int, int], struct.Struct] = {}
            while True:
                at = base + off
                if at >= stop:
                    break
                if stop - at < 8 and base + n >= stop and TRAILER_TAIL.startswith(buf[off:]):
                    # A partial trailer (isWALTrailer): the writer died while closing. No entry is < 9 bytes.
                    self.finish(at)
                    return
                # --- one entry: varint32 key length, WALKey, following_kv_count cells ---
                entry_end = -1
                # A key under 128 bytes has the usual one-byte length.
                try:
                    parsed = (buf[off], off + 1) if off < n and buf[off] < 0x80 else decode_varint(buf, off)
                except ValueError:
                    self._corrupt(at, "the WALKey length is not a varint (more than 10 bytes)")
                if parsed is not None:
                    klen, kstart = parsed
                    kend = kstart + klen
                    if kend <= n:
                        try:
                            key, count = decode_key(buf, view, kstart, kend)
                        except CorruptWALError as exc:
                            self._corrupt(at, str(exc))
                        # The cells: follow each int32 size (cells_end, inlined: this is the hot loop).
                        cpos = kend
                        try:
                            # Fast path: cells of one size (one row's columns, YCSB-like). A single
                            # strided unpack reads every size field; all must equal the first, else
                            # the loop below follows them one by one. Both verify every size.
                            if count > 1:
                                first = unpack_i32(buf, cpos)[0]
                                if MIN_CELL_SIZE <= first <= 0xFFFF:
                                    stride = strides.get((first, count))
                                    if stride is None:
                                        if len(strides) > 4096:
                                            strides.clear()
                                        stride = strides[(first, count)] = struct.Struct(">" + f"i{first}x" * count)
                                    if stride.size <= n - cpos and stride.unpack_from(buf, cpos).count(first) == count:
                                        cpos += stride.size
                                        count_left = 0
                                    else:
                                        count_left = count
                                else:
                                    count_left = count
                            else:
                                count_left = count
                            for _ in repeat(None, count_left):
                                size = unpack_i32(buf, cpos)[0]
                                if size < MIN_CELL_SIZE:
                                    self._corrupt(at, f"cell at offset {base + cpos}: size {size} is too small")
                                cpos += 4 + size
                        except struct.error:  # the buffer ends inside a size field
                            cpos = n + 1
                        if cpos <= n:
                            entry_end = cpos
                if entry_end < 0:
                    # Incomplete in the buffer: read more, or it is the tail of the file.
                    if base + n >= stop:
                        if self.trailer_present:
                            self._corrupt(at, f"entry runs into the trailer at {stop}")
                        self.finish(at)
                        return
                    rest = buf[off:]
                    more = stream.read(min(max(CHUNK, 2 * len(rest)), stop - base - n))
                    if not more:  # the file is shorter than its length said (truncated meanwhile)
                        self.finish(at)
                        return
                    base = at
                    buf = rest + more
                    view = memoryview(buf)
                    n = len(buf)
                    off = 0
                    continue
                self.position = base + entry_end
                if key_filter is None or key_filter(key):
                    yield RawEntry(key, count, view[kend:entry_end], at, base + entry_end)
                off = entry_end
            self.finish(min(base + off, stop))
        finally:
            stream.close()

    def _scan_compressed(self, key_filter: Callable[[WALKey], bool] | None) -> Iterator[RawEntry]:
        """Entries of a dictionary-compressed WAL (spec §1.5): decoded from the first entry, since the
        dictionaries are built as the file is read; entries before the start position are skipped.
        Cells are handed out re-encoded in the plain KeyValue framing, so the ship path can forward them."""

        assert self.header is not None
        stop = self._stop
        data = self.fs.read_range(self.path, 0, stop)
        view = memoryview(data)
        n = min(len(data), stop)
        ctx = CompressionContext(has_tag_compression=self.header.has_tag_compression, value_codec=self.value_codec)
        target = self.position
        pos = self.first_entry_offset
        while pos < n:
            at = pos
            if n - at < 8 and TRAILER_TAIL.startswith(data[at:n]):
                break
            try:
                try:
                    parsed = decode_varint(data, at, n)
                except ValueError:
                    raise CorruptWALError("the WALKey length is not a varint (more than 10 bytes)") from None
                if parsed is None or parsed[0] + parsed[1] > n:
                    raise ShortInput
                kstart, kend = parsed[1], parsed[1] + parsed[0]
                key, count = decode_key(view[kstart:kend])
                key = uncompress_key(key, ctx)
                cells, pos = decode_compressed_cells(data, count, kend, n, ctx)
            except ShortInput:
                if self.trailer_present:
                    self._corrupt(at, f"entry runs into the trailer at {stop}")
                pos = at
                break
            except CorruptWALError as exc:
                self._corrupt(at, str(exc))
            if at < target:
                if pos > target:
                    raise CorruptWALError(f"{self.path}: start position {target} is not an entry boundary")
                continue
            self.position = pos
            if key_filter is None or key_filter(key):
                yield RawEntry(key, count, memoryview(encode_cells(cells)), at, pos)
        self.finish(pos)

    def _corrupt(self, offset: int, why: str) -> None:
        raise CorruptWALError(f"{self.path}: corrupt entry at offset {offset}: {why}")

    def close(self) -> None:
        """Nothing is held open between reads; kept for symmetry with the writer."""

    def __enter__(self) -> WALReader:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
