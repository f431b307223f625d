"""The region-server process: start-up state in ZooKeeper, the write path into the WAL, errors."""

from __future__ import annotations

import os

import pytest

from replication.cluster.info import read_cluster_info
from replication.cluster.region_routing import LATEST_TIMESTAMP
from replication.cluster.service import COLUMNS_MIN_CELLS
from replication.fs import LocalFileSystem
from replication.processes import pid_alive
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.tables.table_files import read_cells
from replication.wal.model import Cell, CellType
from replication.wal.names import ServerName, wal_dir
from replication.zk.cluster_id import read_cluster_id
from replication.zk.layout import ZNodePaths
from tests.cluster.helpers import wal_entries

pytestmark = pytest.mark.slow


def test_start_registers_servers_cluster_id_and_info(embedded, zk_abs):
    paths = ZNodePaths(parent=embedded.paths.parent)
    assert sorted(zk_abs.get_children(paths.rs)) == embedded.servers
    assert len(embedded.servers) == 2
    for name in embedded.servers:
        server = ServerName.parse(name)
        assert server.host == "127.0.0.1" and server.port > 0 and server.start_code > 1_600_000_000_000
        # the live znode is ephemeral: owned by a session
        assert zk_abs.exists(paths.live_server(name)).ephemeralOwner != 0
        assert len(os.listdir(wal_dir(embedded.root, name))) == 1
    info = read_cluster_info(zk_abs, paths)
    assert info.root == embedded.root and info.name == "test"
    cluster_id = read_cluster_id(zk_abs, paths)
    assert zk_abs.get(paths.hbaseid)[0].startswith(b"PBUF")
    # a second server started later keeps the same cluster id
    embedded.start_region_server()
    assert read_cluster_id(zk_abs, paths) == cluster_id
    assert len(zk_abs.get_children(paths.rs)) == 3


def test_put_and_deletes_land_in_the_wal_with_scopes(embedded):
    registry = TableRegistry(None, embedded.root)
    registry.create(TableDescriptor.of("t1", ColumnFamilyDescriptor("f", scope=1), "local"))
    with embedded.client() as client:
        client.put("t1", b"row1", b"f", b"q", b"v1", ts=100)
        client.put("t1", b"row1", b"local", b"q", b"v2")
        client.delete("t1", b"row1", b"f", b"q", ts=200)
        client.delete("t1", b"row1")  # whole row: one DeleteFamily per family
        entries = [e for s in embedded.servers for e in wal_entries(embedded.root, s)]
    assert len(entries) == 4
    for entry in entries:
        assert entry.key.table_name == b"t1"
        assert entry.key.scopes == {b"f": 1}  # local-scope families are not in the key
        assert entry.key.cluster_ids == []
        assert len(entry.key.encoded_region_name) == 32
    cells = sorted((c for e in entries for c in e.cells), key=lambda c: (c.type, c.family))
    assert [(c.family, c.type) for c in cells] == [
        (b"f", CellType.PUT),
        (b"local", CellType.PUT),
        (b"f", CellType.DELETE_COLUMN),
        (b"f", CellType.DELETE_FAMILY),
        (b"local", CellType.DELETE_FAMILY),
    ]
    put_f = cells[0]
    assert put_f.timestamp == 100 and put_f.value == b"v1"
    assert cells[1].timestamp > 1_600_000_000_000  # LATEST_TIMESTAMP became the server clock
    # sequence ids grow per region
    by_region: dict[bytes, list[int]] = {}
    for entry in entries:
        by_region.setdefault(entry.key.encoded_region_name, []).append(entry.key.log_sequence_number)
    assert all(seqs == sorted(seqs) and len(set(seqs)) == len(seqs) for seqs in by_region.values())


@pytest.mark.parametrize("count", [COLUMNS_MIN_CELLS - 1, COLUMNS_MIN_CELLS])
def test_a_client_batch_read_as_cells_or_as_columns_is_stored_whole(embedded, count):
    """Below COLUMNS_MIN_CELLS a Mutate is read into Cells, from it on into columns: the same cells reach
    the WAL and the table file either way, the server's clock filling in a LATEST_TIMESTAMP."""
    TableRegistry(None, embedded.root).create(TableDescriptor.of("tb", "f"))
    cells = [Cell(b"r%04d" % i, b"f", b"q", 1000 + i, int(CellType.PUT), b"v%03d" % i) for i in range(count - 1)]
    cells.append(Cell(b"zz", b"f", b"q", LATEST_TIMESTAMP, int(CellType.PUT), b"now"))
    server = embedded.servers[0]
    with embedded.client() as client:
        client.mutate_on(server, "tb", cells)
        client.flush("tb")
    (entry,) = wal_entries(embedded.root, server)
    stored = [cell for cell, _ in read_cells(LocalFileSystem(), embedded.root, "tb")]
    for got in (entry.cells, stored):
        assert [(c.row, c.value, c.timestamp) for c in got[:-1]] == [(c.row, c.value, c.timestamp) for c in cells[:-1]]
        assert got[-1].row == b"zz" and got[-1].timestamp > 1_600_000_000_000


def test_alter_scope_applies_to_the_next_write(embedded):
    registry = TableRegistry(None, embedded.root)
    registry.create(TableDescriptor.of("t2", "f"))
    with embedded.client() as client:
        client.put("t2", b"a", b"f", b"q", b"1")
        registry.alter_scope("t2", "f", 1)
        client.put("t2", b"a", b"f", b"q", b"2")
        entries = [e for s in embedded.servers for e in wal_entries(embedded.root, s)]
    scopes = {e.cells[0].value: e.key.scopes for e in entries}
    assert scopes == {b"1": {}, b"2": {b"f": 1}}


def test_unknown_table_and_family_are_clear_errors(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t3", "f"))
    with embedded.client() as client:
        with pytest.raises(UnknownTable, match="table nope does not exist"):
            client.put("nope", b"r", b"f", b"q", b"v")
        with pytest.raises(UnknownFamily, match="no column family 'zz'"):
            client.put("t3", b"r", b"zz", b"q", b"v")
        entries = [e for s in embedded.servers for e in wal_entries(embedded.root, s)]
    assert entries == []  # nothing written for refused requests


def test_stop_leaves_no_process_and_closes_wals(cluster_key, tmp_path, cluster_conf):
    from replication.cluster.embedded import start_cluster

    cluster = start_cluster(cluster_key, str(tmp_path / "r"), 1, conf=cluster_conf)
    pids = [p.pid for p in cluster.processes.values()]
    TableRegistry(None, cluster.root).create(TableDescriptor.of("t", "f"))
    with cluster.client() as client:
        client.put("t", b"r", b"f", b"q", b"v")
    cluster.stop()
    assert not any(pid_alive(pid) for pid in pids)
    # a clean stop flushed the memstore and archived the closed WAL (all edits are in table files)
    assert os.listdir(os.path.join(cluster.root, "oldWALs"))
    data = os.path.join(cluster.root, "data")
    assert any(name.endswith(".parquet") for _, _, files in os.walk(data) for name in files)
