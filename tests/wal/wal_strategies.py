"""Hypothesis strategies and helpers for the WAL tests."""

from __future__ import annotations

import uuid

from hypothesis import strategies as st

from replication.wal.model import Cell, CellType, Entry, WALKey

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
UINT63 = st.integers(min_value=0, max_value=2**63 - 1)
TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=8)

cells = st.builds(
    Cell,
    row=st.binary(max_size=16),
    family=st.binary(min_size=1, max_size=8),
    qualifier=st.binary(max_size=12),
    timestamp=UINT63,
    type=st.sampled_from([int(t) for t in CellType]),
    value=st.binary(max_size=40),
    tags=st.one_of(st.just(b""), st.binary(min_size=1, max_size=12)),
)

keys = st.builds(
    WALKey,
    encoded_region_name=st.binary(min_size=1, max_size=32),
    table_name=st.sampled_from([b"t1", b"ns:t2", b"hbase:meta", b"usertable"]),
    log_sequence_number=UINT63,
    write_time=UINT63,
    scopes=st.dictionaries(st.binary(min_size=1, max_size=6), st.sampled_from([0, 1, 2]), max_size=3),
    cluster_ids=st.lists(st.uuids().map(lambda u: uuid.UUID(int=u.int)), max_size=3),
    nonce_group=INT64,
    nonce=INT64,
    orig_sequence_number=UINT63,
    extended_attributes=st.dictionaries(TEXT, st.binary(max_size=8), max_size=2),
)

entries = st.builds(Entry, key=keys, cells=st.lists(cells, max_size=5))


def simple_entry(i: int, *, table: bytes = b"t1", families: tuple[bytes, ...] = (b"f",), n: int = 2) -> Entry:
    """A deterministic entry number ``i`` with ``n`` cells per family."""
    key = WALKey(b"%032x" % i, table, i + 1, 1_700_000_000_000 + i, {f: 1 for f in families})
    cells = [
        Cell(b"row%05d" % i, fam, b"q%d" % j, 1_700_000_000_000 + i, CellType.PUT, b"v%d-%d" % (i, j))
        for fam in families
        for j in range(n)
    ]
    return Entry(key, cells)
