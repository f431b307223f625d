"""Reading HBase's replication barriers from hbase:meta cells (ReplicationBarrierFamilyFormat's layout)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.hbase.region_names import BadMetaRow, region_name
from replication.hbase.replication_barriers import (
    PARENT_QUALIFIER,
    REPLICATION_BARRIER_FAMILY,
    SEQNUM_QUALIFIER,
    encoded_of,
    parents_bytes,
    parse_barrier,
    parse_parents,
    region_barriers,
)
from replication.wal.model import Cell, CellType

names = st.lists(st.binary(min_size=1, max_size=40), max_size=4)


@given(names)
def test_parent_names_round_trip_through_hbase_escaping(parents):
    assert parse_parents(parents_bytes(parents)) == parents


def test_parent_bytes_are_hbase_s_escape_and_separator():
    # getParentsBytes: each 0xFF doubled, names joined by 0xFF 0x00
    assert parents_bytes([b"a\xffb", b"c"]) == b"a\xff\xffb\xff\x00c"
    assert parse_parents(b"a\xff\xffb\xff\x00c") == [b"a\xffb", b"c"]


@given(st.binary(max_size=60))
def test_any_parent_value_parses_and_writes_back_the_same_names(value):
    parsed = parse_parents(value)
    again = parse_parents(parents_bytes(parsed))
    assert again == parsed or (b"" in parsed and [p for p in again if p] == [p for p in parsed if p])


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_a_barrier_is_an_eight_byte_big_endian_long(seq):
    assert parse_barrier(struct.pack(">q", seq)) == seq


@pytest.mark.parametrize("value", [b"", b"\x00" * 7, b"\x00" * 9])
def test_a_barrier_of_another_length_is_refused_with_its_column_named(value):
    with pytest.raises(BadMetaRow, match="seqnumDuringOpen"):
        parse_barrier(value)


def _cell(row: bytes, family: bytes, qualifier: bytes, value: bytes, ts: int = 1) -> Cell:
    return Cell(row, family, qualifier, ts, CellType.PUT, value)


def test_a_meta_row_gives_sorted_distinct_barriers_the_newest_state_and_encoded_parents():
    row = region_name(b"t1", b"m", 1700000000000)
    parent_a, parent_b = region_name(b"t1", b"", 1600000000000), region_name(b"t1", b"m", 1600000000001)
    cells = [
        _cell(row, b"info", b"state", b"OPEN", 9),
        _cell(row, b"info", b"state", b"OPENING", 8),  # an older version: not the state now
        _cell(row, REPLICATION_BARRIER_FAMILY, PARENT_QUALIFIER, parents_bytes([parent_a, parent_b])),
        *(_cell(row, REPLICATION_BARRIER_FAMILY, SEQNUM_QUALIFIER, struct.pack(">q", s), ts) for ts, s in
          enumerate([40, 7, 40, 19])),
    ]  # fmt: skip
    found = region_barriers(row, cells)
    assert found.barriers == (7, 19, 40)
    assert found.state == "OPEN"
    assert found.parents == (encoded_of(parent_a), encoded_of(parent_b))
    assert encoded_of(row) == row[-33:-1].decode() and len(encoded_of(row)) == 32


def test_a_region_name_without_an_encoded_part_is_refused():
    with pytest.raises(BadMetaRow):
        encoded_of(b"hbase:meta,,1")
