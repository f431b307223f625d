"""The sink forwards shipped cell bytes only when they are exactly the cells' encoding (decode bounds)."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from replication.cluster.region_routing import owner_of
from replication.cluster.sink import _Encoded, owner_indices, split_by_owner
from replication.wal.cell_codec import encode_cell, encode_cells
from replication.wal.cell_columns import decode_cell_columns
from replication.wal.model import Cell, CellType


def _cells() -> list[Cell]:
    tags = b"\x01\x00\x02ab"  # one tag on cell 3
    return [
        Cell(b"row-%d" % i, b"f", b"q%d" % i, 1000 + i, int(CellType.PUT), b"v" * i, tags if i == 3 else b"")
        for i in range(6)
    ]


def test_bounds_cover_the_block_and_each_cell_is_its_encoding():
    cells = _cells()
    block = encode_cells(cells)
    decoded = decode_cell_columns(block, len(cells))
    bounds = decoded.bounds.tolist()
    assert decoded.columns.cells() == cells and decoded.canonical
    assert decoded.end == len(block) and len(bounds) == len(cells) + 1
    for cell, start, stop in zip(cells, bounds[:-1], bounds[1:], strict=True):
        assert block[start:stop] == encode_cell(cell)
    assert _Encoded(block, decoded.bounds, [(0, len(cells))]).group_bytes() is block
    group = _Encoded(block, decoded.bounds, [(4, 5), (0, 2)])  # out of order, with an adjacent pair
    assert group.group_bytes() == encode_cells([cells[4], cells[0], cells[1]])
    assert group.cell_bounds() == ([bounds[4], bounds[0], bounds[1]], [bounds[5], bounds[1], bounds[2]])


def test_an_explicit_empty_tags_block_is_not_canonical_so_the_cells_are_encoded_again():
    cell = Cell(b"r", b"f", b"q", 5, int(CellType.PUT), b"v")
    plain = encode_cell(cell)
    # the same KeyValue with a zero-length tags block: 2 more bytes, a larger serialized size
    size = struct.unpack(">i", plain[:4])[0] + 2
    with_empty_tags = struct.pack(">i", size) + plain[4:] + b"\x00\x00"
    decoded = decode_cell_columns(plain + with_empty_tags, 2)
    assert decoded.end == len(plain + with_empty_tags) and decoded.columns.cells() == [cell, cell]
    assert decoded.bounds.tolist() == [0, len(plain), len(plain + with_empty_tags)]
    assert not decoded.canonical


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.integers(0, 12), min_size=0, max_size=40),
    gaps=st.lists(st.booleans(), min_size=40, max_size=40),
    servers=st.integers(1, 4),
)
def test_split_by_owner_gives_each_owner_its_cells_and_exactly_their_bytes(rows, gaps, servers):
    """Whatever the rows, their order and gaps between cells (entries of other groups in between), each
    owner gets its cells in order and its ranges join to exactly those cells' encodings."""
    cells = [
        Cell(b"row-%d" % r, b"f", b"q%d" % i, 1000 + i, int(CellType.PUT), b"v" * (i % 5)) for i, r in enumerate(rows)
    ]
    block = bytearray()
    starts, ends = [], []
    for cell, gap in zip(cells, gaps, strict=False):
        if gap:
            block += b"\xee" * 3  # bytes of another group's cell
        starts.append(len(block))
        block += encode_cell(cell)
        ends.append(len(block))
    ordered = [f"rs{i}" for i in range(servers)]
    split = split_by_owner([c.row for c in cells], starts, ends, ordered)
    encoded = _Encoded(bytes(block), np.zeros(1, np.int64), [])
    assert sum(len(owned) for owned, _ in split.values()) == len(cells)
    plain_split = owner_indices([c.row for c in cells], ordered)
    assert set(plain_split) == set(split)
    for owner, (owned, ranges) in split.items():
        expected = [c for c in cells if owner_of(c.row, ordered) == owner]
        assert [cells[i] for i in owned] == expected and plain_split[owner] == owned
        assert encoded.join(ranges) == encode_cells(expected)
        assert len(ranges) <= len(expected)
