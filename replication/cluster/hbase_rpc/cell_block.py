"""Cells in an RPC cell block, coded with one of HBase's KeyValue codecs (``org.apache.hadoop.hbase.codec``).

Both codecs frame each cell as ``int32 BE size | KeyValue bytes`` (``KeyValueUtil.oswrite``), the same
framing as hbrep's WAL cells (spec §1.4), so a cell block is the entries' cell bytes concatenated:

- ``KeyValueCodecWithTags`` writes the KeyValue with its tags (``int16 tagsLength | tags`` after the
  value when there are tags). HBase's own replication uses it: ``hbase.replication.rpc.codec`` defaults
  to it and ``HBaseInterClusterReplicationEndpoint`` makes it the connection's codec.
- ``KeyValueCodec`` writes the KeyValue without tags (size = 8 + key length + value length), so tags
  are cut off here before sending.

The server decodes with the codec named in the ConnectionHeader and reads, for each WALEntry, its
``associated_cell_count`` cells from the block in order.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from replication.errors import HbrepError
from replication.wal.cell_codec import iter_cell_spans

KEY_VALUE_CODEC = "org.apache.hadoop.hbase.codec.KeyValueCodec"
KEY_VALUE_CODEC_WITH_TAGS = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
CODECS = (KEY_VALUE_CODEC_WITH_TAGS, KEY_VALUE_CODEC)
_I32x3 = struct.Struct(">iii")
_I32 = struct.Struct(">i")


class UnsupportedCodec(HbrepError):
    """A cell block codec hbrep cannot write (only HBase's two KeyValue codecs are supported)."""


def check_codec(codec_class: str) -> str:
    """``codec_class`` when hbrep can write it; UnsupportedCodec naming the supported ones otherwise."""
    if codec_class not in CODECS:
        supported = ", ".join(CODECS)
        raise UnsupportedCodec(f"hbase.replication.rpc.codec {codec_class!r} is not supported (use one of {supported})")
    return codec_class


def without_tags(cells: bytes | memoryview, count: int) -> bytes:
    """``count`` framed cells re-framed as ``KeyValueCodec`` writes them: each cell's tags removed."""
    out: list[bytes | memoryview] = []
    view = memoryview(cells)
    for _family, start, end in iter_cell_spans(view, count):
        size, klen, vlen = _I32x3.unpack_from(view, start)
        bare = 8 + klen + vlen
        if bare == size:
            out.append(view[start:end])
        else:
            out.append(_I32.pack(bare))
            out.append(view[start + 4 : start + 4 + bare])
    return b"".join(out)


def build_cell_block(entries: Iterable[tuple[int, bytes | memoryview]], codec_class: str) -> bytes:
    """The cell block for entries given as (cell count, framed cell bytes), in entry order."""
    return b"".join(cell_block_parts(entries, codec_class))


def cell_block_parts(entries: Iterable[tuple[int, bytes | memoryview]], codec_class: str) -> list[bytes | memoryview]:
    """Each entry's part of the cell block, in order, as ``codec_class`` writes it (joined: the cell block)."""
    if check_codec(codec_class) == KEY_VALUE_CODEC_WITH_TAGS:
        return [cells for _count, cells in entries]
    return [without_tags(cells, count) for count, cells in entries]
