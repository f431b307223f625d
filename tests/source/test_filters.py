from __future__ import annotations

import dataclasses
import uuid

from replication.source.filters import EntryFilter, table_name_str
from replication.wal.cell_codec import decode_cells, encode_cells
from replication.wal.markers import METAFAMILY, REPLICATION_MARKER, is_replication_marker
from replication.wal.model import Cell, CellType, WALKey
from replication.wal.reader import open_wal
from replication.zk.peer_storage import ReplicationPeerConfig

LOCAL = uuid.UUID(int=1)
PEER = uuid.UUID(int=2)
OTHER = uuid.UUID(int=3)


def cells(*families: bytes) -> list[Cell]:
    return [Cell(b"r1", fam, b"q", 1000 + i, CellType.PUT, b"v" * 10) for i, fam in enumerate(families)]


def key(table: bytes = b"t1", scopes=None, cluster_ids=None) -> WALKey:
    return WALKey(
        b"a" * 32, table, 1, 1000, scopes if scopes is not None else {b"f1": 1}, cluster_ids=list(cluster_ids or [])
    )


def run(entry_filter: EntryFilter, k: WALKey, cs: list[Cell]):
    body = encode_cells(cs)
    return entry_filter.filter(k, len(cs), memoryview(body)), body


def filter_for(config: ReplicationPeerConfig | None = None) -> EntryFilter:
    config = config or ReplicationPeerConfig(cluster_key="zk:2181:/peer")
    return EntryFilter(config.need_to_replicate, LOCAL, PEER)


def test_global_scope_family_ships_unchanged_and_is_marked_with_local_cluster_id():
    shipped, body = run(filter_for(), key(), cells(b"f1", b"f1"))
    assert shipped is not None
    assert bytes(shipped.cell_bytes) == body and shipped.cell_count == 2
    assert shipped.key.cluster_ids == [LOCAL]


def test_local_scope_cells_are_cut_out_without_decoding_the_rest():
    shipped, _ = run(filter_for(), key(scopes={b"f1": 1}), cells(b"f1", b"f0", b"f1"))
    assert shipped.cell_count == 2
    decoded, end = decode_cells(bytes(shipped.cell_bytes), 2)
    assert [c.family for c in decoded] == [b"f1", b"f1"] and end == len(shipped.cell_bytes)


def test_entry_without_scopes_or_only_local_families_is_dropped():
    assert run(filter_for(), key(scopes={}), cells(b"f0"))[0] is None
    assert run(filter_for(), key(scopes={b"f1": 1}), cells(b"f0"))[0] is None


def test_system_tables_never_ship_except_acl_and_labels():
    assert run(filter_for(), key(b"hbase:meta"), cells(b"f1"))[0] is None
    assert run(filter_for(), key(b"hbase:namespace"), cells(b"f1"))[0] is None
    assert run(filter_for(), key(b"hbase:acl"), cells(b"f1"))[0] is not None


def test_094_catalog_tables_never_ship_even_when_scoped(hlog_fixtures):
    # the real 0.94 HLog of HBase's TestMetaMigrationConvertToPB holds -ROOT- and .META. edits beside
    # TestTable's; every family is given scope GLOBAL so only the table-name rule can stop the catalog
    path = hlog_fixtures / "TestMetaMigrationConvertToPB" / "10.10.11.105%2C52612%2C1344395574117.1344395576705"
    seen, shipped = set(), []
    for raw in open_wal(str(path)).raw_entries():
        families = {c.family for c in decode_cells(bytes(raw.cell_bytes), raw.cell_count)[0]} - {METAFAMILY}
        scoped = dataclasses.replace(raw.key, scopes=dict.fromkeys(families, 1))
        seen.add(raw.key.table_name)
        result = filter_for().filter(scoped, raw.cell_count, raw.cell_bytes)
        if result is not None:
            shipped.append(result)
    assert seen == {b"-ROOT-", b".META.", b"TestTable"}
    assert {s.key.table_name for s in shipped} == {b"TestTable"}
    assert sum(s.cell_count for s in shipped) == 100  # row1..row100, f1:c1
    assert run(filter_for(), key(b"-ROOT-"), cells(b"f1"))[0] is None
    assert run(filter_for(), key(b".META."), cells(b"f1"))[0] is None
    assert run(filter_for(), key(b"META"), cells(b"f1"))[0] is not None  # a user table named so ships


def test_edit_the_peer_already_has_is_not_sent_back():
    assert run(filter_for(), key(cluster_ids=[PEER]), cells(b"f1"))[0] is None
    shipped, _ = run(filter_for(), key(cluster_ids=[OTHER]), cells(b"f1"))
    assert shipped.key.cluster_ids == [OTHER, LOCAL]


def test_table_cfs_of_the_peer():
    config = ReplicationPeerConfig(cluster_key="zk:2181:/p", replicate_all=False, table_cfs={"t1": ["f1"]})
    flt = filter_for(config)
    both = key(scopes={b"f1": 1, b"f2": 1})
    shipped, _ = run(flt, both, cells(b"f1", b"f2"))
    assert shipped.cell_count == 1
    assert run(flt, key(b"t2", scopes={b"f1": 1}), cells(b"f1"))[0] is None


def test_empty_entry_is_filtered():
    assert filter_for().filter(key(), 0, memoryview(b"")) is None


def test_table_name_str():
    assert table_name_str(b"default:t1") == "t1"
    assert table_name_str(b"ns:t1") == "ns:t1"


def marker_cells() -> list[Cell]:
    """HBase's replication marker edit: one cell, METAFAMILY, HBASE::REPLICATION_MARKER, empty value
    (WALEdit.createReplicationMarkerEdit)."""
    return [Cell(b"\x00", METAFAMILY, REPLICATION_MARKER, 1000, CellType.PUT, b"")]


def test_hbase_replication_markers_never_ship_and_are_kept_as_heartbeats():
    entry_filter = filter_for()
    scoped = key(scopes={METAFAMILY: 1, b"f1": 1})  # HBase sets the marker's scope GLOBAL so it reaches us
    shipped, _ = run(entry_filter, dataclasses.replace(scoped, write_time=5000), marker_cells())
    assert shipped is None
    assert entry_filter.markers == 1 and entry_filter.last_marker_write_time == 5000
    assert is_replication_marker(1, encode_cells(marker_cells()))
    # any other METAFAMILY cell (flush, compaction, region event markers) is not data either
    other_meta = [Cell(b"r", METAFAMILY, b"HBASE::FLUSH", 1, CellType.PUT, b"x")]
    assert run(entry_filter, scoped, other_meta)[0] is None and entry_filter.markers == 1
    assert not is_replication_marker(1, encode_cells(other_meta))
    shipped, _ = run(entry_filter, scoped, [*other_meta, *cells(b"f1")])
    assert shipped is not None and shipped.cell_count == 1  # the data cell ships, the meta cell does not
