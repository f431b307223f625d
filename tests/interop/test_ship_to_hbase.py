"""hbrep ships to a real HBase peer over HBase's own RPC (AdminService.ReplicateWALEntry).

An embedded hbrep source cluster has a peer whose cluster key is the session's real HBase. A ship
cycle (snapshot → Spark ship job → commit) must put exactly the source's cells into HBase (read back
through happybase, every version), keep the source cluster id in the peer's WAL keys (read by HBase's
own WAL reader), and lose nothing when a peer region server is SIGKILLed in the middle of a ship.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from interop.helpers import hbase_read_live, hbase_table_cells

from replication.cluster.embedded import start_cluster
from replication.config import Config
from replication.devstack.jvm import port_accepts
from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import CycleReport, run_cycle
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.spark_views import scan
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow

PEER = "hb"
VERSIONS = 3
SOURCE_CONF = {
    "replication.source.sleepforretries": "200",
    "replication.source.maxretriesmultiplier": "10",
    "hbrep.source.ship.max.attempts": "8",
    "replication.sleep.before.failover": "0",
}


@pytest.fixture(scope="module")
def source(zk_server, real_hbase, tmp_path_factory):
    """An embedded hbrep cluster (2 region servers) with peer ``hb`` = the real HBase (auto-detected)."""
    conf = Config.load(env={}, overrides=SOURCE_CONF)
    key = f"127.0.0.1:{zk_server.port}:/hbrep-src-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("src")), 2, conf=conf, name="src")
    try:
        with connected(ClusterKey.parse(key)) as zk:
            paths = ZNodePaths(conf, parent=ClusterKey.parse(key).znode_parent)
            ReplicationPeerStorage(zk, paths).add_peer(
                PEER, ReplicationPeerConfig(cluster_key=real_hbase.layout().cluster_key), enabled=True
            )
            cluster.cluster_id = str(read_cluster_id(zk, paths))
        cluster.conf, cluster.key = conf, ClusterKey.parse(key)
        yield cluster
    finally:
        cluster.stop()


def _create_both(source, real_hbase, table: str) -> None:
    """The table on both sides: families a, b (scope 1) and c (scope 0: never shipped), 3 versions."""
    fs, root = get_filesystem(source.root)
    families = [ColumnFamilyDescriptor(f, scope=s, max_versions=VERSIONS) for f, s in (("a", 1), ("b", 1), ("c", 0))]
    TableRegistry(fs, root).create(TableDescriptor.of(table, *families))
    real_hbase.admin("create-table", table, str(VERSIONS), "a:1", "b:1", "c:1")


def _cycle(source, spark, conf: Config | None = None) -> CycleReport:
    """One ship cycle of the source (snapshot, the ship job in the test's Spark session, commit)."""
    with connected(source.key) as zk:
        conf = conf or source.conf
        return run_cycle(zk, source.key, conf, runner=runner_for(conf, spark))


def _source_cells(spark, source, table: str) -> set[tuple]:
    """What a scan of every version of families a and b returns on the hbrep source (deletes applied)."""
    with source.client() as client:
        client.flush(table)
    rows = scan(spark, source.root, table, versions=VERSIONS, families=["a", "b"]).collect()
    return {(bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, bytes(r.value)) for r in rows}


def _workload(table: str, rows: int) -> list[list[Cell]]:
    """Batches of puts over a, b and c (three versions of one column), then deletes of each kind."""
    put, d = int(CellType.PUT), CellType
    batches = [
        [Cell(f"row{i:05d}".encode(), f, b"q", 1000 + i, put, f"{f.decode()}{i}".encode()) for f in (b"a", b"b", b"c")]
        for i in range(rows)
    ]
    batches.append([Cell(b"ver", b"a", b"q", ts, put, f"v{ts}".encode()) for ts in (1, 2, 3, 4)])
    batches.append([Cell(b"wide", f, q, 7, put, b"w") for f in (b"a", b"b") for q in (b"x", b"y", b"z")])
    batches.append([Cell(b"ver", b"a", b"q", 3, int(d.DELETE), b"")])  # one version
    batches.append([Cell(b"wide", b"a", b"x", 9, int(d.DELETE_COLUMN), b"")])  # all versions <= 9
    batches.append([Cell(b"wide", b"b", b"", 9, int(d.DELETE_FAMILY), b"")])  # the family, <= 9
    batches.append([Cell(b"row00001", b"a", b"", 1001, int(d.DELETE_FAMILY_VERSION), b"")])  # family at ts
    batches.append([Cell(b"row00002", b"", b"", 2**63 - 1, int(d.DELETE_FAMILY), b"")])  # the whole row
    return batches


def _write(source, table: str, batches: list[list[Cell]]) -> None:
    with source.client() as client:
        for batch in batches:
            client.batch(table, batch)


def test_a_ship_cycle_puts_exactly_the_source_cells_into_real_hbase(source, real_hbase, spark):
    table = f"ship_{uuid.uuid4().hex[:8]}"
    _create_both(source, real_hbase, table)
    _write(source, table, _workload(table, 300))
    report = _cycle(source, spark)
    assert report.spark_job and report.queues, report.queues
    assert all(q.status == "ok" for q in report.queues), report.queues
    expected = _source_cells(spark, source, table)
    # every kind of delete took effect on the source (so equality below says they were shipped too)
    assert not {
        c for c in expected if c[0] == b"row00002" or c[:2] == (b"wide", b"b") or c[:3] == (b"wide", b"a", b"x")
    }
    assert (b"ver", b"a", b"q", 3, b"v3") not in expected and (b"ver", b"a", b"q", 4, b"v4") in expected
    assert (b"row00001", b"a", b"q", 1001, b"a1") not in expected and (b"row00001", b"b", b"q", 1001, b"b1") in expected
    assert hbase_table_cells(real_hbase, table) == expected
    assert not any(family == b"c" for _row, family, *_ in hbase_table_cells(real_hbase, table))

    # HBase's own WAL reader: every entry HBase wrote for the table carries the hbrep source's id
    reads = hbase_read_live(real_hbase)
    entries = [
        e
        for read in reads.values()
        for e in read.get("items", [])
        if e["table"] == table and any(c["family"] != "METAFAMILY" for c in e["cells"])  # not region markers
    ]
    assert {c["row"].encode() for e in entries for c in e["cells"]} >= {cell[0] for cell in expected}
    assert {tuple(e["cluster_ids"]) for e in entries} == {(source.cluster_id,)}


def test_a_peer_region_server_sigkilled_mid_ship_loses_nothing(source, real_hbase, spark):
    table = f"kill_{uuid.uuid4().hex[:8]}"
    _create_both(source, real_hbase, table)
    rows = 4000
    cells = [cell for batch in _workload(table, rows) for cell in batch]
    _write(source, table, [cells[start : start + 60] for start in range(0, len(cells), 60)])  # ~200 WAL entries
    # both HBase region servers are sinks, in small throttled batches, so the ship takes several seconds
    conf = Config.load(
        env={},
        overrides={
            **SOURCE_CONF,
            "replication.source.ratio": "1.0",
            "replication.source.nb.capacity": "10",
            "replication.source.per.peer.node.bandwidth": str(20_000),
            "hbrep.source.bandwidth.split": "true",  # the two queues share it: the pace this test was tuned at
        },
    )
    reports: list[CycleReport] = []
    shipping = threading.Thread(target=lambda: reports.append(_cycle(source, spark, conf)))
    shipping.start()
    victim = real_hbase.regionserver(2)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and shipping.is_alive() and not _some_rows(real_hbase, table):
            time.sleep(0.2)
        assert shipping.is_alive(), f"the ship finished before any row was seen: {reports}"
        shipped_at_kill = len(_hbase_rows(real_hbase, table))
        victim.kill()
        assert 0 < shipped_at_kill < rows, f"not mid-ship: {shipped_at_kill} of {rows} rows were on HBase"
        shipping.join(timeout=600)
        assert not shipping.is_alive()
        deadline = time.monotonic() + 600
        while not all(q.status == "ok" for q in reports[-1].queues) and time.monotonic() < deadline:
            reports.append(_cycle(source, spark, conf))
        assert all(q.status == "ok" for q in reports[-1].queues), reports[-1].queues
    finally:
        _restart(real_hbase, victim, 2)
    failed = sum(q.metrics.get("failedBatches", 0) for r in reports for q in r.queues)
    print(f"rows on HBase before the kill: {shipped_at_kill}/{rows}; failed batches {failed}; cycles {len(reports)}")
    assert failed >= 1 or any(q.status == "failed" for r in reports for q in r.queues), "the kill was never seen"
    assert hbase_table_cells(real_hbase, table) == _source_cells(spark, source, table)


def _hbase_rows(real_hbase, table: str) -> list[bytes]:
    connection = real_hbase.happybase_connection()
    try:
        return [row for row, _ in connection.table(table).scan(filter=b"KeyOnlyFilter()")]
    finally:
        connection.close()


def _some_rows(real_hbase, table: str) -> bool:
    connection = real_hbase.happybase_connection()
    try:
        return any(True for _ in connection.table(table).scan(limit=1))
    finally:
        connection.close()


def _restart(real_hbase, victim, index: int) -> None:
    """Start the killed region server again so later tests find the cluster whole."""
    if victim.running():
        return
    port = real_hbase.layout().regionserver_ports[index - 1]
    victim.start(lambda: port_accepts(port), timeout=180)
    real_hbase.wait_ready(time.monotonic() + 180)
