"""Cell framing: hand-computed KeyValue bytes, round trips, and errors on short or garbled input."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wal_strategies import cells

from replication.wal.cell_codec import (
    CellCodecError,
    TruncatedCellError,
    cells_end,
    decode_cells,
    encode_cell,
    encode_cells,
    iter_cell_spans,
    select_cells,
)
from replication.wal.cell_columns import MIN_COLUMN_RUN, CellColumns, DecodedCells, decode_cell_columns
from replication.wal.model import Cell, CellType


def test_keyvalue_layout_by_hand() -> None:
    cell = Cell(b"row1", b"cf", b"q", 0x0102030405060708, CellType.PUT, b"value")
    key = b"\x00\x04row1" + b"\x02cf" + b"q" + bytes.fromhex("0102030405060708") + b"\x04"
    assert len(key) == 2 + 4 + 1 + 2 + 1 + 8 + 1
    kv = struct.pack(">ii", len(key), 5) + key + b"value"
    assert encode_cell(cell) == struct.pack(">i", len(kv)) + kv
    assert decode_cells(encode_cell(cell), 1) == ([cell], 4 + len(kv))


def test_tags_block_only_when_present() -> None:
    tags = b"\x00\x03\x07ab"  # one tag: length 3 (type + 2 bytes), type 7, "ab"
    with_tags = Cell(b"r", b"f", b"", 1, CellType.DELETE_COLUMN, b"", tags)
    data = encode_cell(with_tags)
    plain = encode_cell(Cell(b"r", b"f", b"", 1, CellType.DELETE_COLUMN))
    assert data[4:] == plain[4:] + b"\x00\x05" + tags
    assert struct.unpack(">i", data[:4])[0] == struct.unpack(">i", plain[:4])[0] + 2 + len(tags)
    assert decode_cells(data, 1)[0] == [with_tags]
    assert with_tags.is_delete and not Cell(b"r", b"f", b"", 1, CellType.PUT).is_delete


@settings(max_examples=60, deadline=None)
@given(st.lists(cells, max_size=6))
def test_round_trip(batch: list[Cell]) -> None:
    data = b"xx" + encode_cells(batch)
    decoded, end = decode_cells(data, len(batch), offset=2)
    assert decoded == batch
    assert end == len(data) == cells_end(data, len(batch), 2)
    assert [(f, s, e) for f, s, e in iter_cell_spans(data, len(batch), 2)] == [
        (c.family, s, s + len(encode_cell(c))) for c, s in zip(batch, _starts(batch, 2), strict=True)
    ]


def _starts(batch: list[Cell], offset: int) -> list[int]:
    out, pos = [], offset
    for cell in batch:
        out.append(pos)
        pos += len(encode_cell(cell))
    return out


def test_short_input_is_truncation() -> None:
    data = encode_cells([Cell(b"r", b"f", b"q", 1, 4, b"v" * 10)] * 2)
    for cut in range(len(data)):
        with pytest.raises(TruncatedCellError):
            decode_cells(data[:cut], 2)
        with pytest.raises(TruncatedCellError):
            cells_end(data[:cut], 2)


def test_garbled_lengths_are_errors_not_truncation() -> None:
    good = bytearray(encode_cell(Cell(b"r", b"f", b"q", 1, 4, b"value")))
    bad_key = bytearray(good)
    bad_key[4:8] = struct.pack(">i", 500)  # key length larger than the cell
    with pytest.raises(CellCodecError, match="offset 0") as info:
        decode_cells(bytes(bad_key), 1)
    assert not isinstance(info.value, TruncatedCellError)
    tiny = struct.pack(">i", 3) + b"abc"
    with pytest.raises(CellCodecError, match="too small"):
        decode_cells(tiny, 1)
    bad_family = bytearray(good)
    bad_family[4 + 8 + 2 + 1] = 100  # family length past the key
    with pytest.raises(CellCodecError, match="family length"):
        decode_cells(bytes(bad_family), 1)


def test_select_cells_keeps_original_bytes() -> None:
    batch = [Cell(b"r", fam, b"q", 1, 4, b"v") for fam in (b"a", b"b", b"a")]
    data = encode_cells(batch)
    count, kept = select_cells(data, 3, lambda fam: fam == b"a")
    assert count == 2
    assert decode_cells(bytes(kept), 2)[0] == [batch[0], batch[2]]
    count, kept = select_cells(data, 3, lambda fam: True)
    assert count == 3 and isinstance(kept, memoryview) and bytes(kept) == data
    assert select_cells(data, 3, lambda fam: False) == (0, b"")


# --- the strided read of cells that share one layout (decode_cells' fast path) ---------------------------
def _layout_runs():
    """Runs of cells of one layout (equal row/family/qualifier/value lengths), some long enough for a
    strided read, mixed with tagged cells and cells of other lengths."""
    run = st.builds(
        lambda n, rlen, family, qlen, vlen, tags, seed: [
            Cell(
                bytes([(seed + i) % 256]) * rlen,
                family,
                bytes([(seed * 7 + i) % 256]) * qlen,
                ((seed + i) * 0x0102030405060708) % (1 << 63),  # all 8 bytes used
                CellType.PUT if i % 3 else CellType.DELETE_COLUMN,
                bytes([(seed + 3 * i) % 256]) * vlen,
                tags if i == n // 2 else b"",
            )
            for i in range(n)
        ],
        st.integers(1, 150),
        st.integers(0, 20),
        st.sampled_from([b"f", b"cf", b"", b"\xff"]),
        st.integers(0, 5),
        st.integers(0, 40),
        st.sampled_from([b"", b"", b"\x01\x00\x01t"]),
        st.integers(0, 255),
    )
    return st.lists(run, min_size=1, max_size=4).map(lambda runs: [cell for r in runs for cell in r])


@settings(max_examples=300, deadline=None)
@given(_layout_runs(), st.integers(0, 3))
def test_strided_and_one_by_one_reads_agree(batch: list[Cell], offset: int) -> None:
    from replication.wal.cell_codec import decode_each

    data = b"\x00" * offset + encode_cells(batch) + b"\x00"
    spans: list = []
    cells, end = decode_cells(data, len(batch), offset, spans)
    one_by_one: list[Cell] = []
    reference_spans: list = []
    starts: list[int] = []
    read = decode_each(data, len(data), len(batch), offset, one_by_one, reference_spans, starts)
    assert (cells, end) == (batch, read)
    assert one_by_one == batch and spans == reference_spans
    decoded = decode_cell_columns(data, len(batch), offset)
    assert (decoded.columns.cells(), decoded.end) == (batch, end)
    assert decoded.bounds.tolist() == [*starts, end]
    assert decoded.canonical == (None not in spans)
    assert decoded.columns == CellColumns.from_cells(batch)


def test_a_long_run_of_one_layout_is_read_as_columns_and_the_cells_around_it_one_by_one() -> None:
    """Cells of other layouts before and after a run: the run is one part, its neighbours keep their places."""
    put, delete_family = int(CellType.PUT), int(CellType.DELETE_FAMILY)
    run = [Cell(b"r%04d" % i, b"f", b"q", 1 << 40 | i, put, b"%06d" % i) for i in range(MIN_COLUMN_RUN * 3)]
    batch = [Cell(b"a", b"f", b"", 1, delete_family), *run, Cell(b"zz", b"f", b"q", 2, put, b"v", b"\x01\x00\x01t")]
    data = encode_cells(batch)
    decoded = decode_cell_columns(data, len(batch))
    assert decoded.columns.cells() == batch and decoded.end == len(data)
    assert decoded.columns.table.column("value").num_chunks == 3  # the cell before, the run, the cell after
    bounds = decoded.bounds.tolist()
    assert [data[s:e] for s, e in itertools.pairwise(bounds)] == [encode_cell(c) for c in batch]


def test_no_cells_decode_to_no_columns_ending_where_they_start() -> None:
    decoded = decode_cell_columns(b"xyz", 0, 2)
    assert isinstance(decoded, DecodedCells) and len(decoded.columns) == 0 and decoded.end == 2 and decoded.canonical


@settings(max_examples=300, deadline=None)
@given(_layout_runs(), st.data())
def test_a_damaged_run_fails_as_the_one_by_one_read_does(batch: list[Cell], data) -> None:
    """A byte changed or the buffer cut anywhere: the strided read gives the same cells or the same error."""
    from replication.wal.cell_codec import decode_each

    encoded = bytearray(encode_cells(batch))
    if data.draw(st.booleans()):
        encoded = encoded[: data.draw(st.integers(0, len(encoded) - 1))]
    else:
        encoded[data.draw(st.integers(0, len(encoded) - 1))] ^= data.draw(st.integers(1, 255))
    buf = bytes(encoded)

    def one_by_one() -> tuple[list[Cell], int]:
        cells: list[Cell] = []
        return cells, decode_each(buf, len(buf), len(batch), 0, cells, None)

    def outcome(read):
        try:
            return read()
        except CellCodecError as exc:  # TruncatedCellError is a subclass: the type is compared too
            return type(exc), str(exc)

    assert outcome(lambda: decode_cells(buf, len(batch))) == outcome(one_by_one)
    assert outcome(lambda: _as_cells(decode_cell_columns(buf, len(batch)))) == outcome(one_by_one)


def _as_cells(decoded: DecodedCells) -> tuple[list[Cell], int]:
    return decoded.columns.cells(), decoded.end
