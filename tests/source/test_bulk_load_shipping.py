"""The shadow peer's side of bulk-load replication: the filter's cut of a marker, the source's directories,
and a peer's hfile-refs on a real ZooKeeper."""

from __future__ import annotations

import uuid

from replication.proto import WAL_pb2
from replication.source.bulk_load import PeerHFileRefs, hadoop_uri, source_hfile_dirs
from replication.source.filters import EntryFilter
from replication.wal.bulk_load import BULK_LOAD, read_bulk_load
from replication.wal.cell_codec import encode_cell, encode_cells
from replication.wal.markers import METAFAMILY
from replication.wal.model import Cell, CellType, WALKey
from replication.zk.hfile_refs import HFileRefsStorage
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig

LOCAL, PEER = uuid.UUID(int=1), uuid.UUID(int=2)


def marker(stores: dict[bytes, list[str]], replicate: bool = True) -> bytes:
    d = WAL_pb2.BulkLoadDescriptor(encoded_region_name=b"e" * 32, bulkload_seq_num=3, replicate=replicate)
    d.table_name.namespace, d.table_name.qualifier = b"default", b"t1"
    for family, files in stores.items():
        d.stores.add(family_name=family, store_home_dir=family.decode()).store_file.extend(files)
    return encode_cell(Cell(b"\x00r", METAFAMILY, BULK_LOAD, 5, CellType.PUT, d.SerializeToString()))


def key(scopes=None) -> WALKey:
    return WALKey(b"e" * 32, b"default:t1", 9, 1000, scopes if scopes is not None else {b"a": 1, b"b": 0})


def entry_filter(pending=lambda name: True, **config) -> EntryFilter:
    peer = ReplicationPeerConfig(cluster_key="zk:2181:/peer", **config)
    return EntryFilter(peer.need_to_replicate, LOCAL, PEER, hfile_pending=pending)


def test_a_marker_ships_the_stores_of_global_families_still_pending():
    cell = marker({b"a": ["a1", "a2"], b"b": ["b1"]})
    shipped = entry_filter(pending=lambda name: name != "a2").filter(key(), 1, memoryview(cell))
    assert shipped is not None and shipped.hfiles == ("a1",) and shipped.cell_count == 1
    assert shipped.key.cluster_ids == [LOCAL]
    descriptor = read_bulk_load(shipped.cell_bytes).descriptor
    assert [(s.family_name, list(s.store_file)) for s in descriptor.stores] == [(b"a", ["a1"])]


def test_a_marker_with_nothing_left_to_ship_is_dropped():
    cell = marker({b"a": ["a1"], b"b": ["b1"]})
    assert entry_filter(pending=lambda name: False).filter(key(), 1, cell) is None  # delivered before
    assert entry_filter().filter(key({b"b": 1}), 1, cell) is not None  # b GLOBAL here: its store ships
    assert entry_filter().filter(key({b"b": 0, b"a": 0}), 1, cell) is None
    assert entry_filter().filter(key(), 1, marker({b"a": ["a1"]}, replicate=False)) is None
    # the peer's table-cfs want only family b
    assert entry_filter(replicate_all=False, table_cfs={"t1": ["b"]}).filter(
        key({b"a": 1, b"b": 1}), 1, cell
    ).hfiles == ("b1",)


def test_without_hfile_refs_a_marker_is_not_data():
    plain = EntryFilter(ReplicationPeerConfig(cluster_key="zk:2181:/peer").need_to_replicate, LOCAL, PEER)
    assert plain.filter(key(), 1, marker({b"a": ["a1"]})) is None


def test_the_pending_check_runs_only_for_wanted_families():
    asked: list[str] = []
    entry_filter(pending=lambda name: asked.append(name) or True).filter(key(), 1, marker({b"a": ["a1"], b"b": ["b1"]}))
    assert asked == ["a1"]


def test_ordinary_single_cell_entries_are_unchanged():
    body = encode_cells([Cell(b"r1", b"a", b"q", 1, CellType.PUT, b"v")])
    shipped = entry_filter().filter(key(), 1, memoryview(body))
    assert bytes(shipped.cell_bytes) == body and shipped.hfiles == ()


def test_source_dirs_are_hadoop_uris_of_data_and_archive():
    assert hadoop_uri("/srv/hbase/") == "file:/srv/hbase"
    assert source_hfile_dirs("/srv/hbase") == ("file:/srv/hbase/data", "file:/srv/hbase/archive/data")
    assert source_hfile_dirs("file:///srv/hbase") == ("file:///srv/hbase/data", "file:///srv/hbase/archive/data")
    assert source_hfile_dirs("webhdfs://nn:9870/hbase")[1] == "webhdfs://nn:9870/hbase/archive/data"


def test_hfile_refs_are_read_and_removed_on_a_real_zookeeper(zk):
    paths = ZNodePaths(parent="/hbase")
    storage = HFileRefsStorage(zk, paths, "p1")
    assert storage.list() == [] and storage.remove(["x"]) == 0  # no hfile-refs znode at all
    for name in ("f1", "f2", "f3"):
        zk.create(f"/hbase/replication/hfile-refs/p1/{name}", b"", makepath=True)
    refs = PeerHFileRefs(lambda: zk, paths, "p1")
    assert refs.pending("f1") and not refs.pending("gone") and refs.skipped == 1
    assert refs.acknowledged(["f1", "f2", "missing"]) == 2
    assert storage.list() == ["f3"] and not storage.exists("f1")
    assert refs.acknowledged([]) == 0
