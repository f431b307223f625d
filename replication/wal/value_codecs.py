"""The codecs of WAL value compression (HBase 2.5+, ``hbase.regionserver.wal.value.enablecompression``).

The WALHeader names the codec by the ordinal of ``Compression.Algorithm`` (``value_compression_algorithm``,
spec §1.2). HBase's ValueCompressor writes each value through ``Compression.Algorithm.createCompressionStream``,
whose FinishOnFlushCompressionStream finishes the codec's stream on every flush and resets it: each value's
bytes (varint32 length + bytes in the cell) are therefore one self-contained unit of the codec:

- GZ: one gzip member (header, deflate data, CRC and size trailer).
- SNAPPY, LZ4 (Hadoop's SnappyCodec / Lz4Codec, a BlockCompressorStream): Hadoop blocks, each an int32 BE
  uncompressed length and then int32 BE length-prefixed raw compressed chunks adding up to it. A value
  longer than the codec's input limit is one block of several chunks followed by an empty block (four
  zero bytes, HBASE-28390); an empty value is a lone empty block.
- ZSTD: Hadoop blocks whose chunks are zstd frames (HBase's own hbase-compression-zstd ZstdCodec, the one
  that runs without Hadoop's native library; what the writer writes), or one zstd frame (Hadoop's
  native ZStandardCodec, the default of ``hbase.io.compress.zstd.codec``; read only); told apart by the
  zstd frame magic.
- BZIP2: one bzip2 stream ("BZh...", Hadoop's BZip2Codec). Not checked against HBase: without the native
  libhadoop, HBase 2.6.1 cannot write BZIP2 values at all (BZip2DummyCompressor throws on the first value).
- NONE: the value as it is.

LZO (GPL, never on HBase's class path), LZMA (removed from HBase 2.6, HBASE-28506) and BROTLI are not read:
a WAL naming one of them is refused at its header, naming the codec.
"""

from __future__ import annotations

import bz2
import struct
import zlib
from collections.abc import Callable

from replication.wal.errors import CompressedWALNotSupported, CorruptWALError
from replication.wal.varint import decode_varint

# Compression.Algorithm, in enum order (the ordinal is what the WALHeader holds).
ALGORITHMS = ("LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD", "LZMA", "BROTLI")
SUPPORTED = ("GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD")

_I32 = struct.Struct(">i")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# BlockCompressorStream's input limit: the codec buffer (io.compression.codec.{snappy,lz4}.buffersize,
# 256 KiB by default) less the codec's overhead (snappy: size / 6 + 32; lz4: size / 255 + 16).
CODEC_BUFFER = 256 * 1024
SNAPPY_MAX_INPUT = CODEC_BUFFER - (CODEC_BUFFER // 6 + 32)
LZ4_MAX_INPUT = CODEC_BUFFER - (CODEC_BUFFER // 255 + 16)
ZSTD_MAX_INPUT = CODEC_BUFFER - CODEC_BUFFER // 256  # zstd's compressBound(256 KiB) is 256 KiB + 1 KiB


def algorithm_name(ordinal: int) -> str:
    """The Compression.Algorithm name of ``ordinal`` (``#N`` for one HBase does not have)."""
    return ALGORITHMS[ordinal] if 0 <= ordinal < len(ALGORITHMS) else f"#{ordinal}"


class ValueCodec:
    """Compresses and decompresses the values of one WAL file with one Compression.Algorithm."""

    def __init__(self, name: str) -> None:
        name = name.upper()
        if name not in SUPPORTED:
            raise CompressedWALNotSupported(
                f"WAL value compression with {name} is not supported (hbrep reads {', '.join(SUPPORTED)})"
            )
        self.name = name
        self.ordinal = ALGORITHMS.index(name)
        self._compress: Callable[[bytes], bytes]
        self._decompress: Callable[[bytes, int], bytes]
        self._compress, self._decompress = _codec(name)

    def compress(self, value: bytes) -> bytes:
        """The bytes HBase's ValueCompressor writes for ``value`` (one finished unit of the codec)."""
        return self._compress(value)

    def decompress(self, data: bytes, length: int) -> bytes:
        """The value of ``length`` bytes in ``data``; CorruptWALError when ``data`` is not exactly that."""
        try:
            value = self._decompress(data, length)
        except CorruptWALError:
            raise
        except Exception as exc:  # each library has its own error type
            raise CorruptWALError(f"{self.name} value does not decompress: {exc}") from None
        if len(value) != length:
            raise CorruptWALError(f"{self.name} value decompresses to {len(value)} bytes, the cell says {length}")
        return value


def _codec(name: str) -> tuple[Callable[[bytes], bytes], Callable[[bytes, int], bytes]]:
    if name == "NONE":
        return bytes, lambda data, _length: data
    if name == "GZ":
        return _gzip_compress, _gzip_decompress
    if name == "BZIP2":
        return bz2.compress, _bzip2_decompress
    if name == "ZSTD":
        import zstandard

        compressor = zstandard.ZstdCompressor(level=3)
        return lambda value: _blocks_compress(value, ZSTD_MAX_INPUT, compressor.compress), _zstd_decompress
    import cramjam

    if name == "SNAPPY":

        def snappy_chunk(chunk: bytes) -> bytes:
            # the raw format starts with the uncompressed length: bounded by the codec buffer, as in Hadoop
            parsed = decode_varint(chunk, 0)
            if parsed is None or parsed[0] > CODEC_BUFFER:
                raise CorruptWALError(f"snappy chunk of {len(chunk)} bytes does not announce at most {CODEC_BUFFER}")
            return bytes(cramjam.snappy.decompress_raw(chunk))

        return (
            lambda value: _blocks_compress(value, SNAPPY_MAX_INPUT, cramjam.snappy.compress_raw),
            lambda data, length: _blocks_decompress(data, snappy_chunk),
        )

    # LZ4: raw blocks without a size prefix; a chunk holds at most the codec buffer (256 KiB).
    def lz4_chunk(chunk: bytes) -> bytes:
        out = bytearray(CODEC_BUFFER)
        return bytes(out[: cramjam.lz4.decompress_block_into(chunk, out)])

    return (
        lambda value: _blocks_compress(
            value, LZ4_MAX_INPUT, lambda raw: cramjam.lz4.compress_block(raw, store_size=False)
        ),
        lambda data, length: _blocks_decompress(data, lz4_chunk),
    )


def _gzip_compress(value: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    return compressor.compress(value) + compressor.flush()


def _gzip_decompress(data: bytes, length: int) -> bytes:
    decompressor = zlib.decompressobj(31)
    value = decompressor.decompress(data, length + 1)
    if not decompressor.eof or decompressor.unused_data or decompressor.unconsumed_tail:
        raise CorruptWALError(f"GZ value is not one whole gzip member of {len(data)} bytes")
    return value


def _bzip2_decompress(data: bytes, length: int) -> bytes:
    decompressor = bz2.BZ2Decompressor()
    value = decompressor.decompress(data, length + 1)
    if not decompressor.eof or decompressor.unused_data:
        raise CorruptWALError(f"BZIP2 value is not one whole bzip2 stream of {len(data)} bytes")
    return value


def _zstd_decompress(data: bytes, length: int) -> bytes:
    import zstandard

    if not data.startswith(ZSTD_MAGIC):
        return _blocks_decompress(data, lambda chunk: _zstd_frame(zstandard, chunk, CODEC_BUFFER))
    return _zstd_frame(zstandard, data, length)


def _zstd_frame(zstandard, data: bytes, limit: int) -> bytes:
    """One whole zstd frame of at most ``limit`` bytes (a frame announcing more is not decompressed)."""
    size = zstandard.frame_content_size(data)
    if size > limit:
        raise CorruptWALError(f"ZSTD frame announces {size} bytes, more than {limit}")
    return zstandard.ZstdDecompressor().decompress(data, max_output_size=max(limit, 1), allow_extra_data=False)


def _blocks_compress(value: bytes, max_input: int, compress: Callable[[bytes], bytes]) -> bytes:
    """Hadoop's BlockCompressorStream: one block, a big value cut into chunks and then an empty block."""
    out = [_I32.pack(len(value))]
    for start in range(0, len(value), max_input):
        chunk = bytes(compress(value[start : start + max_input]))
        out += (_I32.pack(len(chunk)), chunk)
    if len(value) > max_input:
        out.append(_I32.pack(0))
    return b"".join(out)


def _blocks_decompress(data: bytes, decompress: Callable[[bytes], bytes]) -> bytes:
    """Hadoop's BlockDecompressorStream over one value's bytes: every block, every chunk, nothing left over."""
    out: list[bytes] = []
    pos, end = 0, len(data)
    while pos < end:
        if pos + 4 > end:
            raise CorruptWALError(f"block header cut at byte {pos} of {end}")
        (raw,) = _I32.unpack_from(data, pos)
        pos += 4
        if raw < 0:
            raise CorruptWALError(f"negative block length {raw}")
        got = 0
        while got < raw:
            if pos + 4 > end:
                raise CorruptWALError(f"chunk header cut at byte {pos} of {end}")
            (size,) = _I32.unpack_from(data, pos)
            pos += 4
            if size <= 0 or pos + size > end:
                raise CorruptWALError(f"chunk of {size} bytes at byte {pos} does not fit the value's {end} bytes")
            chunk = decompress(data[pos : pos + size])
            pos += size
            got += len(chunk)
            out.append(chunk)
        if got != raw:
            raise CorruptWALError(f"block says {raw} bytes, its chunks hold {got}")
    return b"".join(out)
