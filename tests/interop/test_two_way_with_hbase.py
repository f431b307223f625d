"""Two-way replication between an embedded hbrep cluster A and a real HBase 2.6.1 cluster B, no loops.

A -> B: A's peer ``hb`` is B's cluster key; hbrep's ship cycle (snapshot, Spark ship job, commit) sends
A's edits over HBase's RPC to B's region servers. B -> A: B's peer is A's HBase-facing cluster key
(``<parent>/hbrep-hbase-rpc``), added through HBase's Admin API; HBase's own source ships into A's
HBase RPC listeners. Rows written on each side must end up on both, and each row must ARRIVE exactly
once on each side: counted in A's WALs (hbrep's reader) and in B's WALs (HBase's own WAL reader), one
entry per row, with the origin's cluster id on the copy and no id on the original. An edit loop
would show up as a second entry of the row (the copy coming back with both ids).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter

import pytest
from cluster.helpers import wal_entries
from interop.helpers import hbase_peer_into_hbrep, hbase_read_live

from replication.cluster.embedded import start_cluster
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.jobs.launch import runner_for
from replication.source.cycle import CycleReport, run_cycle
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow

ROWS = 200
TIMEOUT_S = 180
CONF = {
    "replication.source.sleepforretries": "200",
    "replication.source.maxretriesmultiplier": "10",
    "hbrep.source.ship.max.attempts": "8",
    "replication.sleep.before.failover": "0",
}


@pytest.fixture(scope="module")
def cluster_a(zk_server, real_hbase, tmp_path_factory):
    """Embedded hbrep cluster A (2 region servers) whose peer ``hb`` is the real HBase (B)."""
    conf = Config.load(env={}, overrides=CONF)
    key = ClusterKey.parse(f"127.0.0.1:{zk_server.port}:/hbrep-a-{uuid.uuid4().hex[:8]}")
    cluster = start_cluster(str(key), str(tmp_path_factory.mktemp("a")), 2, conf=conf, name="a")
    try:
        with connected(key) as zk:
            paths = ZNodePaths(conf, parent=key.znode_parent)
            ReplicationPeerStorage(zk, paths).add_peer(
                "hb", ReplicationPeerConfig(cluster_key=real_hbase.layout().cluster_key), enabled=True
            )
            cluster.cluster_id = str(read_cluster_id(zk, paths))
        cluster.conf, cluster.key = conf, key
        yield cluster
    finally:
        cluster.stop()


def _cycle(cluster_a, spark) -> CycleReport:
    with connected(cluster_a.key) as zk:
        report = run_cycle(zk, cluster_a.key, cluster_a.conf, runner=runner_for(cluster_a.conf, spark))
    assert all(q.status == "ok" for q in report.queues), report.queues
    return report


def _cells_a(cluster_a, table: str) -> set[tuple]:
    with cluster_a.client() as client:
        client.flush(table)
    cells = scan_cells(read_cells(LocalFileSystem(), cluster_a.root, table))
    return {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells}


def _cells_b(real_hbase, table: str) -> set[tuple]:
    connection = real_hbase.happybase_connection()
    try:
        cells = set()
        for row, columns in connection.table(table).scan(include_timestamp=True):
            for column, (value, ts) in columns.items():
                family, qualifier = column.split(b":", 1)
                cells.add((row, family, qualifier, ts, value))
        return cells
    finally:
        connection.close()


def _wait(what: str, check) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + TIMEOUT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out after {TIMEOUT_S}s waiting for {what}"
        time.sleep(2)


def _arrivals_a(cluster_a, table: str) -> Counter:
    """(row, cluster ids) -> how many WAL entries of A hold that row."""
    counts: Counter = Counter()
    for server in cluster_a.servers:
        for entry in wal_entries(cluster_a.root, server):
            if entry.key.table_name == table.encode():
                ids = tuple(str(i) for i in entry.key.cluster_ids)
                for row in {c.row for c in entry.cells}:
                    counts[(row, ids)] += 1
    return counts


def _arrivals_b(real_hbase, table: str) -> Counter:
    """The same for B's WALs, read by HBase's own WAL reader (region event markers left out)."""
    counts: Counter = Counter()
    for read in hbase_read_live(real_hbase).values():
        for entry in read.get("items", []):
            if entry["table"] != table:
                continue
            rows = {c["row"].encode() for c in entry["cells"] if c["family"] != "METAFAMILY"}
            for row in rows:
                counts[(row, tuple(entry["cluster_ids"]))] += 1
    return counts


def test_two_way_a_embedded_b_real_hbase_every_row_arrives_once_and_never_loops(cluster_a, real_hbase, spark):
    table = f"twoway_{uuid.uuid4().hex[:8]}"
    families = [ColumnFamilyDescriptor(f, scope=1) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), cluster_a.root).create(TableDescriptor.of(table, *families))
    real_hbase.admin("create-table", table, "1", "a:1", "b:1")
    hbase_key = ClusterKey.parse(real_hbase.layout().cluster_key)
    with connected(hbase_key) as zk:
        b_id = str(read_cluster_id(zk, ZNodePaths(parent=hbase_key.znode_parent)))
    a_paths = ZNodePaths(cluster_a.conf, parent=cluster_a.key.znode_parent)
    with hbase_peer_into_hbrep(real_hbase, cluster_a.key, a_paths, table):
        # rows written on A, shipped to B by hbrep's cycle
        put = int(CellType.PUT)
        rows_a = [f"a-row{i:04d}".encode() for i in range(ROWS)]
        with cluster_a.client() as client:
            client.batch(table, [Cell(r, b"a", b"q", 1000, put, b"from-a-" + r) for r in rows_a])
        _cycle(cluster_a, spark)
        written_a = {(r, b"a", b"q", 1000, b"from-a-" + r) for r in rows_a}
        assert written_a <= _cells_b(real_hbase, table)

        # rows written on B, shipped to A by HBase's own replication source
        rows_b = [f"b-row{i:04d}".encode() for i in range(ROWS)]
        connection = real_hbase.happybase_connection()
        try:
            with connection.table(table).batch(timestamp=2000, batch_size=50) as batch:
                for r in rows_b:
                    batch.put(r, {b"b:q": b"from-b-" + r})
        finally:
            connection.close()
        written_b = {(r, b"b", b"q", 2000, b"from-b-" + r) for r in rows_b}
        _wait("B's rows on A", lambda: written_b <= _cells_a(cluster_a, table))

        # A's next cycles read B's rows in A's WALs (cluster id B) and must not send them back; B must
        # not send A's rows back either: give both a chance, then count
        reports = [_cycle(cluster_a, spark), _cycle(cluster_a, spark)]
        time.sleep(10)
        both = written_a | written_b
        assert _cells_a(cluster_a, table) == both
        assert _cells_b(real_hbase, table) == both

    a_counts, b_counts = _arrivals_a(cluster_a, table), _arrivals_b(real_hbase, table)
    shipped = sum(q.metrics.get("shippedOps", 0) for r in reports for q in r.queues)
    filtered = sum(q.metrics.get("logEditsFiltered", 0) for r in reports for q in r.queues)
    print(
        f"row arrivals in A's WALs by origin: {Counter(ids for _row, ids in a_counts.elements())}; "
        f"in B's WALs: {Counter(ids for _row, ids in b_counts.elements())}; "
        f"after B's rows arrived A's cycles filtered {filtered} edits and shipped {shipped}"
    )
    assert filtered >= 1 and shipped == 0  # A read B's copies and kept them from B
    # on A: A's rows once as originals, B's rows once as copies from B, nothing else
    assert a_counts == Counter({**{(r, ()): 1 for r in rows_a}, **{(r, (b_id,)): 1 for r in rows_b}})
    # on B: B's rows once as originals, A's rows once as copies from A, nothing else
    assert b_counts == Counter({**{(r, ()): 1 for r in rows_b}, **{(r, (cluster_a.cluster_id,)): 1 for r in rows_a}})
