"""The ship cycle end to end: real region servers, real ZooKeeper, the Spark job in a local[2] session."""

from __future__ import annotations

import uuid

import pytest
from support import add_peer, create_table, cycle, queue_snapshot, set_peer_state, table_state

from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import commit_step, run_cycle, ship_step, snapshot_step
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def peer_1(pair):
    add_peer(pair, "1")
    return "1"


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
    assert all(q.status == "ok" for q in report.queues), report.queues
    peer = report.peers["1"]
    assert peer.rows_shipped >= 200 and peer.bytes_shipped > 0 and peer.entries_shipped >= 1
    expected = table_state(spark, pair.source, table, families=["f1"])
    assert len(expected) == 198  # row0001 (its one version deleted) and row0002 are gone
    assert table_state(spark, pair.peer, table) == expected  # f1 equal, nothing of f0
    again = cycle(pair, spark)
    assert sum(q.metrics.get("shippedOps", 0) for q in again.queues) == 0


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
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert sum(q.metrics["logEditsFiltered"] for q in report.queues) >= 1


def test_table_missing_on_peer_is_a_clear_error_and_positions_stay(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, table, ("f1", 1))  # not on the peer
    with connected(pair.source_key) as zk:
        storage = ReplicationQueueStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent))
        with pair.source.client() as client:
            client.put(table, b"r", b"f1", b"q", b"v")
        before = storage.snapshot().as_dict()
        report = run_cycle(zk, pair.source_key, pair.conf, runner=runner_for(pair.conf, spark))
        after = storage.snapshot().as_dict()
    failed = [q for q in report.queues if q.status == "failed"]
    assert failed and all(table in q.error for q in failed), report.queues
    for q in failed:
        replicator, queue_id = q.queue.split("/", 1)
        assert after[replicator][queue_id] == before[replicator][queue_id]
    create_table(pair.peer, table, ("f1", 1))  # fix it: the next cycle completes
    report = cycle(pair, spark)
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_disabled_peer_keeps_its_wals_and_catches_up_after_enable(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    set_peer_state(pair, "1", enabled=False)
    try:
        with pair.source.client() as client:
            client.put(table, b"r1", b"f1", b"q", b"while-disabled")
            for server in pair.source.servers:
                client.roll_wal(server)  # the WAL holding the edit is finished now
        before = queue_snapshot(pair).as_dict()
        report = cycle(pair, spark)
        assert not report.spark_job and report.queues == []
        assert queue_snapshot(pair).as_dict() == before  # nothing dropped, nothing moved
        assert table_state(spark, pair.peer, table) == []
    finally:
        set_peer_state(pair, "1", enabled=True)
    report = cycle(pair, spark)
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_two_cycles_at_once_never_ship_the_same_peer_twice(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    with pair.source.client() as client:
        client.batch(table, [Cell(f"r{i}".encode(), b"f1", b"q", 5000 + i, CellType.PUT, b"v") for i in range(50)])
    with connected(pair.source_key) as zk:
        first = snapshot_step(zk, pair.source_key, pair.conf, owner="cycle-one")
        second = snapshot_step(zk, pair.source_key, pair.conf, owner="cycle-two")
        assert first.peers == ["1"] and first.queues > 0
        assert second.peers == [] and "cycle-one" in second.busy_peers["1"]
        ship_step(first.manifest_path, pair.conf, runner=runner_for(pair.conf, spark))
        report = commit_step(zk, pair.source_key, pair.conf, first.manifest_path, owner="cycle-one")
        assert report.peers["1"].rows_shipped == 50
        # a retried commit is a no-op: versions moved on, nothing is recorded twice
        again = commit_step(zk, pair.source_key, pair.conf, first.manifest_path, owner="cycle-one")
        assert all(not q.committed or q.commit_note for q in again.queues)
        # the lease is free again
        assert snapshot_step(zk, pair.source_key, pair.conf, owner="cycle-two").peers == ["1"]
        commit_step(
            zk,
            pair.source_key,
            pair.conf,
            snapshot_step(zk, pair.source_key, pair.conf, owner="cycle-two").manifest_path,
            owner="cycle-two",
        )
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_ship_step_through_spark_submit(pair, peer_1, spark, tmp_path):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    with pair.source.client() as client:
        client.put(table, b"r", b"f1", b"q", b"via-spark-submit")
    with connected(pair.source_key) as zk:
        outcome = snapshot_step(zk, pair.source_key, pair.conf, owner="submit", work_dir=tmp_path)
        result = ship_step(outcome.manifest_path, pair.conf, runner=runner_for(pair.conf))  # spark-submit, local[2]
        assert [q.status for q in result.queues] == ["ok"] * len(result.queues) and result.queues
        commit_step(zk, pair.source_key, pair.conf, outcome.manifest_path, owner="submit")
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_a_cycle_naming_a_peer_that_does_not_exist_leaves_its_lease_free(pair, spark):
    """A cycle for a peer id not (yet) there ships nothing and does not keep that peer leased, so the
    peer's first cycle after it is added is not blocked until the lease expires."""
    from replication.zk import lease

    report = cycle(pair, spark, peer_ids=["later"])
    assert report.queues == []
    with connected(pair.source_key) as zk:
        assert lease.holder(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent), "later") is None
