"""The ship cycle end to end: real region servers, real ZooKeeper, the Spark job in a local[2] session."""

from __future__ import annotations

import uuid

import pytest

from replication.fs import get_filesystem
from replication.source.cycle import run_cycle
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.spark_views import scan
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow


def create_table(cluster, name: str, *families: tuple[str, int]) -> None:
    fs, root = get_filesystem(cluster.root)
    TableRegistry(fs, root).create(TableDescriptor.of(name, *[ColumnFamilyDescriptor(f, scope=s) for f, s in families]))


def table_state(spark, cluster, table: str, families=None) -> list[tuple]:
    with cluster.client() as client:
        client.flush(table)
    rows = scan(spark, cluster.root, table, families=families).collect()
    return sorted(
        (bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, r.type, bytes(r.value)) for r in rows
    )


@pytest.fixture(scope="module")
def peer_1(pair):
    with connected(pair.source_key) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)).add_peer(
            "1", ReplicationPeerConfig(cluster_key=str(pair.peer_key))
        )
    return "1"


def cycle(pair, spark, **kwargs):
    with connected(pair.source_key) as zk:
        return run_cycle(zk, pair.source_key, pair.conf, spark=spark, **kwargs)


def test_puts_and_deletes_reach_the_peer_for_global_families_only(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1), ("f0", 0))
    with pair.source.client() as client:
        cells = []
        for i in range(200):
            row = f"row{i:04d}".encode()
            cells.append(Cell(row, b"f1", b"q", 1000 + i, CellType.PUT, f"v{i}".encode()))
            cells.append(Cell(row, b"f0", b"q", 1000 + i, CellType.PUT, b"local"))
        client.batch(table, cells)
        client.delete(table, b"row0001", b"f1", b"q", ts=1001)  # Delete of one version
        client.delete(table, b"row0002")  # the whole row (DeleteFamily per family)
    report = cycle(pair, spark)
    assert report.spark_job
    assert all(q["status"] == "ok" for q in report.queues), report.queues
    peer = report.peers["1"]
    assert peer["rows_shipped"] >= 200 and peer["bytes_shipped"] > 0 and peer["entries_shipped"] >= 1
    expected = table_state(spark, pair.source, table, families=["f1"])
    assert len(expected) == 198  # row0001 (its one version deleted) and row0002 are gone
    assert table_state(spark, pair.peer, table) == expected  # f1 equal, nothing of f0
    again = cycle(pair, spark)
    assert sum(q["metrics"].get("shippedOps", 0) for q in again.queues) == 0


def test_positions_advance_and_finished_wals_leave_the_queue(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    with pair.source.client() as client:
        client.put(table, b"r", b"f1", b"q", b"v1")
        for server in pair.source.servers:
            client.roll_wal(server)
        client.put(table, b"r2", b"f1", b"q", b"v2")
    cycle(pair, spark)
    with connected(pair.source_key) as zk:
        snapshot = ReplicationQueueStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)).snapshot()
    for server in pair.source.servers:
        queue = snapshot.replicators[server]["1"]
        assert len(queue.wals) == 1, f"rolled WALs must be dropped once shipped: {queue.wals}"
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_system_tables_never_ship(pair, peer_1, spark):
    fs, root = get_filesystem(pair.source.root)
    TableRegistry(fs, root).create(
        TableDescriptor.of("hbase:metax", ColumnFamilyDescriptor("info", scope=1)), system=True
    )
    with pair.source.client() as client:
        client.put("hbase:metax", b"r", b"info", b"q", b"v")
    report = cycle(pair, spark)
    assert all(q["status"] == "ok" for q in report.queues), report.queues
    assert sum(q["metrics"]["logEditsFiltered"] for q in report.queues) >= 1


def test_table_missing_on_peer_is_a_clear_error_and_positions_stay(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, table, ("f1", 1))  # not on the peer
    with connected(pair.source_key) as zk:
        storage = ReplicationQueueStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent))
        with pair.source.client() as client:
            client.put(table, b"r", b"f1", b"q", b"v")
        before = storage.snapshot().as_dict()
        report = run_cycle(zk, pair.source_key, pair.conf, spark=spark)
        after = storage.snapshot().as_dict()
    failed = [q for q in report.queues if q["status"] == "failed"]
    assert failed and all(table in q["error"] for q in failed), report.queues
    for q in failed:
        replicator, queue_id = q["queue"].split("/", 1)
        assert after[replicator][queue_id] == before[replicator][queue_id]
    create_table(pair.peer, table, ("f1", 1))  # fix it: the next cycle completes
    report = cycle(pair, spark)
    assert all(q["status"] == "ok" for q in report.queues), report.queues
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)
