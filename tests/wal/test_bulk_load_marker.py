"""HBase's bulk-load marker (WALEdit.createBulkLoadEvent): its descriptor read back, and cut down by store/file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replication.proto import WAL_pb2
from replication.wal.bulk_load import BULK_LOAD, encode_marker, keep_stores, read_bulk_load
from replication.wal.cell_codec import encode_cell
from replication.wal.markers import METAFAMILY
from replication.wal.model import Cell, CellType

_names = st.text(alphabet="0123456789abcdef_", min_size=1, max_size=40)
_stores = st.lists(
    st.tuples(st.sampled_from([b"a", b"b", b"c"]), st.lists(_names, min_size=1, max_size=4, unique=True)),
    min_size=1,
    max_size=3,
)


def descriptor(stores, replicate: bool = True) -> WAL_pb2.BulkLoadDescriptor:
    d = WAL_pb2.BulkLoadDescriptor(encoded_region_name=b"e" * 32, bulkload_seq_num=7, replicate=replicate)
    d.table_name.namespace, d.table_name.qualifier = b"default", b"t1"
    for family, files in stores:
        store = d.stores.add(family_name=family, store_home_dir=family.decode(), store_file_size_bytes=99)
        store.store_file.extend(files)
    return d


def marker_cell(d: WAL_pb2.BulkLoadDescriptor) -> bytes:
    return encode_cell(Cell(b"\x00region", METAFAMILY, BULK_LOAD, 1234, CellType.PUT, d.SerializeToString()))


@settings(max_examples=200, deadline=None)
@given(_stores, st.booleans())
def test_a_marker_reads_back_its_descriptor(stores, replicate):
    d = descriptor(stores, replicate)
    marker = read_bulk_load(memoryview(marker_cell(d)))
    assert marker.descriptor == d and marker.descriptor.replicate is replicate
    assert marker.store_files() == [name for _family, files in stores for name in files]
    assert encode_marker(marker) == marker_cell(d)  # unchanged, it encodes to the same bytes


@settings(max_examples=200, deadline=None)
@given(_stores, st.sets(_names), st.sets(st.sampled_from([b"a", b"b", b"c"])))
def test_keep_stores_keeps_exactly_the_accepted_files(stores, dropped_files, dropped_families):
    marker = read_bulk_load(marker_cell(descriptor(stores)))
    kept = keep_stores(marker, lambda family, name: family not in dropped_families and name not in dropped_files)
    expected = [
        (family, [n for n in files if n not in dropped_files])
        for family, files in stores
        if family not in dropped_families
    ]
    expected = [(family, files) for family, files in expected if files]
    if not expected:
        assert kept is None
        return
    assert [(s.family_name, list(s.store_file)) for s in kept.descriptor.stores] == expected
    again = read_bulk_load(encode_marker(kept))  # the rewritten cell carries the cut-down descriptor
    assert again.descriptor == kept.descriptor and again.cell.row == marker.cell.row
    assert (again.descriptor.bulkload_seq_num, again.descriptor.encoded_region_name) == (7, b"e" * 32)


def test_a_cut_store_drops_its_size_and_unknown_fields_survive():
    d = descriptor([(b"a", ["f1", "f2"])])
    raw = d.SerializeToString() + b"\x2a\x05peer1"  # field 5 (cluster_ids, not in hbrep's WAL.proto)
    cell = encode_cell(Cell(b"r", METAFAMILY, BULK_LOAD, 1, CellType.PUT, raw))
    kept = keep_stores(read_bulk_load(cell), lambda _family, name: name == "f2")
    assert list(kept.descriptor.stores[0].store_file) == ["f2"]
    assert not kept.descriptor.stores[0].HasField("store_file_size_bytes")
    assert b"\x2a\x05peer1" in kept.cell.value


def test_a_value_that_is_not_a_descriptor_is_one_error_naming_the_row():
    cell = encode_cell(Cell(b"row9", METAFAMILY, BULK_LOAD, 1, CellType.PUT, b"\xff\xff\xff"))
    with pytest.raises(ValueError, match="row9"):
        read_bulk_load(cell)
