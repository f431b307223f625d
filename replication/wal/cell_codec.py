"""Cells in HBase's KeyValue framing, as WALCellCodec / KeyValueCodecWithTags write them (spec §1.4).

Each cell is ``int32 BE serializedSize`` followed by the KeyValue::

    int32 keyLength | int32 valueLength |
    int16 rowLength | row | int8 familyLength | family | qualifier | int64 timestamp | int8 type |
    value | [int16 tagsLength | tags]      (tags only when present)

The same framing is used by 0.94 WALEdits and by replication RPC cell blocks, so these functions serve
all three. Decoding checks every length against the buffer: short input raises
:class:`TruncatedCellError`, inconsistent lengths raise :class:`CellCodecError`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator

from replication.wal.errors import CorruptWALError
from replication.wal.model import Cell

_I32 = struct.Struct(">i")
_I32x3 = struct.Struct(">iii")
_U16 = struct.Struct(">H")
_TS_TYPE = struct.Struct(">qB")
CELL_HEAD = struct.Struct(">iiiH")  # a cell's first 14 bytes: serialized size, key length, value length, row length

# 2 (row length) + 1 (family length) + 8 (timestamp) + 1 (type): key bytes besides row/family/qualifier.
KEY_INFRASTRUCTURE_SIZE = 12


class CellCodecError(CorruptWALError):
    """Bytes that are not a well-formed cell (the message names the offset in the buffer)."""


class TruncatedCellError(CellCodecError):
    """The buffer ends inside a cell."""


def encode_cell(cell: Cell) -> bytes:
    """The int32 size + KeyValue bytes of ``cell`` (tags block only when ``cell.tags`` is non-empty).

    Raises ValueError when a row is over 32767 bytes or a family over 127 bytes (KeyValue's limits).
    """
    row, family, qualifier, value, tags = cell.row, cell.family, cell.qualifier, cell.value, cell.tags
    rlen, flen = len(row), len(family)
    if rlen > 0x7FFF or flen > 0x7F:
        raise ValueError(f"row ({rlen} bytes) or family ({flen} bytes) too long for a KeyValue")
    klen = KEY_INFRASTRUCTURE_SIZE + rlen + flen + len(qualifier)
    vlen = len(value)
    size = 8 + klen + vlen
    if tags:
        size += 2 + len(tags)
        tail = _U16.pack(len(tags)) + tags
    else:
        tail = b""
    return b"".join(
        (
            CELL_HEAD.pack(size, klen, vlen, rlen),
            row,
            bytes((flen,)),
            family,
            qualifier,
            _TS_TYPE.pack(cell.timestamp, cell.type),
            value,
            tail,
        )
    )


def encode_cells(cells: Iterable[Cell]) -> bytes:
    """The concatenated encodings of ``cells``, in order."""
    return b"".join(encode_cell(cell) for cell in cells)


def decode_cells(
    buf: bytes | memoryview, count: int, offset: int = 0, spans: list[tuple[int, int] | None] | None = None
) -> tuple[list[Cell], int]:
    """Decode ``count`` cells starting at ``offset``; returns the cells and the offset just after them.

    ``spans``, when given, receives each cell's (start, end) in ``buf``, or None for a cell whose bytes
    are not what :func:`encode_cell` gives for it (an explicit empty tags block), so a caller can
    forward the bytes exactly when they are the canonical encoding. Raises TruncatedCellError when
    ``buf`` ends inside a cell and CellCodecError on inconsistent lengths.

    Cells are read up to STRIDE_CELLS at a time: when they share one layout (row, family, qualifier and
    value lengths, no tags: a table's fixed-width rows), by one struct unpack; else one by one.
    """
    cells: list[Cell] = []
    n = len(buf)
    pos = offset
    left = count
    while left:
        k = min(STRIDE_CELLS, left)
        unpacked = _unpack_uniform(buf, n, k, pos) if k > 1 else None
        if unpacked is not None:  # 11 fields per cell: size, klen, vlen, rlen, row, flen, family, qualifier, ...
            f, step = unpacked
            cells.extend(map(Cell, f[4::11], f[6::11], f[7::11], f[8::11], f[9::11], f[10::11]))
            end = pos + k * step
            if spans is not None:
                spans.extend(zip(range(pos, end, step), range(pos + step, end + step, step), strict=True))
            pos = end
        else:
            pos = decode_each(buf, n, k, pos, cells, spans)
        left -= k
    return cells, pos


# Cells per strided unpack, and the unpackers by layout (row, family, qualifier, value lengths, cells).
# One unpack of 64 cells and a Cell per cell took 0.7-1.1 µs a cell against 1.4-2.0 one by one (100-byte
# and 1 KB values, microbench); the sink decodes every cell it receives (py-spy: a third of its time).
STRIDE_CELLS = 64
_strides: dict[tuple[int, int, int, int, int], struct.Struct] = {}


# A cell's layout: bytes per cell (its int32 size field included); row, family, qualifier and value lengths.
CellLayout = tuple[int, int, int, int, int]


def uniform_layout(buf: bytes | memoryview, n: int, pos: int) -> CellLayout | None:
    """The layout of the well-formed, tagless cell at ``pos``; None when it has tags, is malformed or does
    not fit in the buffer (the one-by-one read then says which). Cells after it with its size, key,
    value, row and family lengths are laid out as it is."""
    if pos + 14 > n:
        return None
    size, klen, vlen, rlen = CELL_HEAD.unpack_from(buf, pos)
    if (
        size != 8 + klen + vlen  # tags (or stray bytes): one by one
        or vlen < 0
        or rlen > klen - KEY_INFRASTRUCTURE_SIZE
        or pos + 4 + size > n
    ):
        return None
    flen = buf[pos + 14 + rlen]
    qlen = klen - KEY_INFRASTRUCTURE_SIZE - rlen - flen
    if qlen < 0:
        return None
    return 4 + size, rlen, flen, qlen, vlen


def _unpack_uniform(buf: bytes | memoryview, n: int, k: int, pos: int) -> tuple[tuple, int] | None:
    """The k cells at ``pos`` read by one unpack when they all have the first one's layout: (the unpacked
    fields, the bytes per cell); else None: the caller reads them one by one, with its checks.

    Why equal fields suffice: a cell whose size, key, value, row and family lengths are the first one's
    is laid out as the first one, so the next cell starts where the unpacker reads it, and so on.
    """
    first = uniform_layout(buf, n, pos)
    if first is None or pos + k * first[0] > n:
        return None
    step, rlen, flen, qlen, vlen = first
    size = step - 4
    klen = size - 8 - vlen
    layout = (rlen, flen, qlen, vlen, k)
    unpacker = _strides.get(layout)
    if unpacker is None:
        if len(_strides) > 4096:
            _strides.clear()
        unpacker = _strides[layout] = struct.Struct(">" + f"iiiH{rlen}sB{flen}s{qlen}sqB{vlen}s" * k)
    # per cell: size, klen, vlen, rlen, row, flen, family, qualifier, timestamp, type, value
    f = unpacker.unpack_from(buf, pos)
    if (
        f[0::11].count(size) != k
        or f[1::11].count(klen) != k
        or f[2::11].count(vlen) != k
        or f[3::11].count(rlen) != k
        or f[5::11].count(flen) != k
    ):
        return None
    return f, step


def decode_each(
    buf: bytes | memoryview,
    n: int,
    count: int,
    pos: int,
    cells: list[Cell],
    spans: list[tuple[int, int] | None] | None,
    starts: list[int] | None = None,
) -> int:
    """Decode ``count`` cells from ``pos`` one by one into ``cells`` (``spans`` as in :func:`decode_cells`;
    ``starts``, when given, receives each cell's offset); returns the offset after them."""
    append = cells.append
    add_span = spans.append if spans is not None else None
    add_start = starts.append if starts is not None else None
    unpack_head = CELL_HEAD.unpack_from
    unpack_ts_type = _TS_TYPE.unpack_from
    for _ in range(count):
        # One unpack reads the size, key, value and row lengths (14 bytes); a cell is at least 24.
        if pos + 14 > n:
            if pos + 4 > n:
                raise TruncatedCellError(f"cell at offset {pos}: buffer ends after {n - pos} of 4 size bytes")
            (size,) = _I32.unpack_from(buf, pos)
            if size < 8 + KEY_INFRASTRUCTURE_SIZE:
                raise CellCodecError(f"cell at offset {pos}: serialized size {size} is too small")
            raise TruncatedCellError(f"cell at offset {pos}: needs {size + 4} bytes, buffer has {n - pos}")
        size, klen, vlen, rlen = unpack_head(buf, pos)
        if add_start is not None:
            add_start(pos)
        kv = pos + 4
        end = kv + size
        if size < 8 + KEY_INFRASTRUCTURE_SIZE:
            raise CellCodecError(f"cell at offset {pos}: serialized size {size} is too small")
        if end > n:
            raise TruncatedCellError(f"cell at offset {pos}: needs {size + 4} bytes, buffer has {n - pos}")
        if klen < KEY_INFRASTRUCTURE_SIZE or vlen < 0 or 8 + klen + vlen > size:
            raise CellCodecError(
                f"cell at offset {pos}: key length {klen} / value length {vlen} do not fit size {size}"
            )
        r = kv + 10
        f = r + rlen
        if rlen > klen - KEY_INFRASTRUCTURE_SIZE:
            raise CellCodecError(f"cell at offset {pos}: row length {rlen} does not fit key length {klen}")
        flen = buf[f]
        q = f + 1 + flen
        key_end = kv + 8 + klen
        qe = key_end - 9
        if qe < q:
            raise CellCodecError(f"cell at offset {pos}: family length {flen} does not fit key length {klen}")
        ts, typ = unpack_ts_type(buf, qe)
        vend = key_end + vlen
        if vend < end:
            if vend + 2 > end:
                raise CellCodecError(f"cell at offset {pos}: {end - vend} stray byte(s) after the value")
            (tlen,) = _U16.unpack_from(buf, vend)
            if vend + 2 + tlen != end:
                raise CellCodecError(f"cell at offset {pos}: tags length {tlen} does not fit size {size}")
            tags = bytes(buf[vend + 2 : end])
            if add_span is not None:
                add_span((pos, end) if tlen else None)
        else:
            tags = b""
            if add_span is not None:
                add_span((pos, end))
        append(
            Cell(
                bytes(buf[r:f]),
                bytes(buf[f + 1 : q]),
                bytes(buf[q:qe]),
                ts,
                typ,
                bytes(buf[key_end:vend]),
                tags,
            )
        )
        pos = end
    return pos


def cells_end(buf: bytes | memoryview, count: int, offset: int = 0) -> int:
    """The offset just after ``count`` cells starting at ``offset``, following only the size fields.

    This is the cheap walk of the ship path: no cell is decoded. Raises TruncatedCellError when the
    buffer ends first and CellCodecError for a size that cannot be a cell.
    """
    n = len(buf)
    pos = offset
    unpack = _I32.unpack_from
    for _ in range(count):
        if pos + 4 > n:
            raise TruncatedCellError(f"cell at offset {pos}: buffer ends after {n - pos} of 4 size bytes")
        (size,) = unpack(buf, pos)
        if size < 8 + KEY_INFRASTRUCTURE_SIZE:
            raise CellCodecError(f"cell at offset {pos}: serialized size {size} is too small")
        pos += 4 + size
    if pos > n:
        raise TruncatedCellError(f"cells from offset {offset}: need {pos - offset} bytes, buffer has {n - offset}")
    return pos


def iter_cell_spans(buf: bytes | memoryview, count: int, offset: int = 0) -> Iterator[tuple[bytes, int, int]]:
    """For each of ``count`` cells from ``offset``: (family, start, end) of its framed bytes in ``buf``.

    Only the family is copied; values are never touched, so a caller can filter by family and
    forward ``buf[start:end]`` slices as they are.
    """
    n = len(buf)
    pos = offset
    unpack = _I32x3.unpack_from
    unpack_row = _U16.unpack_from
    for _ in range(count):
        if pos + 14 > n:
            raise TruncatedCellError(f"cell at offset {pos}: buffer ends inside the cell header")
        size, klen, vlen = unpack(buf, pos)
        end = pos + 4 + size
        if size < 8 + KEY_INFRASTRUCTURE_SIZE or klen < KEY_INFRASTRUCTURE_SIZE or 8 + klen + vlen > size:
            raise CellCodecError(f"cell at offset {pos}: sizes {size}/{klen}/{vlen} are inconsistent")
        if end > n:
            raise TruncatedCellError(f"cell at offset {pos}: needs {size + 4} bytes, buffer has {n - pos}")
        f = pos + 14 + unpack_row(buf, pos + 12)[0]
        flen = buf[f]
        yield bytes(buf[f + 1 : f + 1 + flen]), pos, end
        pos = end


def first_cell_column(buf: bytes | memoryview, offset: int = 0) -> tuple[bytes, bytes]:
    """(family, qualifier) of the cell framed at ``offset`` (its value is not read)."""
    if offset + 14 > len(buf):
        raise TruncatedCellError(f"cell at offset {offset}: buffer ends inside the cell header")
    _size, klen, _vlen = _I32x3.unpack_from(buf, offset)
    rowlen = _U16.unpack_from(buf, offset + 12)[0]
    f = offset + 14 + rowlen
    flen = buf[f]
    qlen = klen - (2 + rowlen + 1 + flen + 8 + 1)
    if qlen < 0 or f + 1 + flen + qlen > len(buf):
        raise CellCodecError(f"cell at offset {offset}: key length {klen} is inconsistent")
    return bytes(buf[f + 1 : f + 1 + flen]), bytes(buf[f + 1 + flen : f + 1 + flen + qlen])


def select_cells(
    buf: bytes | memoryview, count: int, keep_family: Callable[[bytes], bool], offset: int = 0
) -> tuple[int, bytes | memoryview]:
    """The cells of ``buf`` whose family passes ``keep_family``: (kept count, their framed bytes).

    When every cell is kept the original buffer region comes back as a memoryview (no copy).
    """
    view = memoryview(buf)
    spans = [(s, e) for fam, s, e in iter_cell_spans(view, count, offset) if keep_family(fam)]
    if len(spans) == count:
        return count, view[offset : spans[-1][1]] if spans else view[offset:offset]
    return len(spans), b"".join(view[s:e] for s, e in spans)
