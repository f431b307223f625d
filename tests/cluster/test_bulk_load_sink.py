"""The sink's split of a request into its edits and its bulk-load markers, and where it looks for the files."""

from __future__ import annotations

import uuid

from replication.cluster.bulk_load_sink import split_bulk_loads, store_file_cells
from replication.cluster.replicate_wire import parse_request, serialize_request
from replication.proto import WAL_pb2
from replication.wal.bulk_load import BULK_LOAD
from replication.wal.cell_codec import decode_cells, encode_cell
from replication.wal.markers import METAFAMILY
from replication.wal.model import Cell, CellType, WALKey

CODEC = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
IDS = [uuid.UUID(int=5)]


def marker(replicate: bool = True) -> bytes:
    d = WAL_pb2.BulkLoadDescriptor(encoded_region_name=b"eeee", bulkload_seq_num=3, replicate=replicate)
    d.table_name.namespace, d.table_name.qualifier = b"default", b"t1"
    d.stores.add(family_name=b"a", store_home_dir="a").store_file.append("f1_SeqId_4_")
    return encode_cell(Cell(b"\x00r", METAFAMILY, BULK_LOAD, 5, CellType.PUT, d.SerializeToString()))


def request(entries, dirs=("file:/nowhere/data", "file:/nowhere/archive/data")):
    key = WALKey(b"eeee", b"default:t1", 9, 1000, {b"a": 1}, cluster_ids=IDS)
    return parse_request(serialize_request([(key, n, cells) for n, cells in entries], "cid", CODEC, dirs))


def test_markers_leave_the_request_and_the_edits_stay_in_order():
    put1 = encode_cell(Cell(b"r1", b"a", b"q", 5, CellType.PUT, b"v1"))
    put2 = encode_cell(Cell(b"r2", b"a", b"q", 5, CellType.PUT, b"v2"))
    kept, block, loads = split_bulk_loads(*request([(1, put1), (1, marker()), (1, put2)]))
    assert [e.associated_cell_count for e in kept.entry] == [1, 1] and bytes(block) == put1 + put2
    assert [c.row for c in decode_cells(block, 2)[0]] == [b"r1", b"r2"]
    assert kept.sourceBaseNamespaceDirPath == "file:/nowhere/data"
    assert [(x.table, x.cluster_ids, list(x.descriptor.stores[0].store_file)) for x in loads] == [
        ("t1", IDS, ["f1_SeqId_4_"])
    ]


def test_a_request_without_markers_or_without_source_dirs_is_left_as_it_is():
    put = encode_cell(Cell(b"r1", b"a", b"q", 5, CellType.PUT, b"v"))
    req, block = request([(1, put)])
    assert split_bulk_loads(req, block) == (req, block, [])
    req, block = request([(1, marker())], dirs=None)
    assert split_bulk_loads(req, block) == (req, block, [])  # its METAFAMILY cell is refused downstream


def test_a_store_file_in_neither_directory_is_skipped(tmp_path):
    root = tmp_path / "src"
    req, block = request([(1, marker())], dirs=(f"file:{root}/data", f"file:{root}/archive/data"))
    kept, _block, loads = split_bulk_loads(req, block)
    assert store_file_cells(kept, loads[0]) == []
