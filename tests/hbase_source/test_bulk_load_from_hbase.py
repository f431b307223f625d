"""Bulk-load replication from a real HBase 2.6 source through hbrep's shadow peer into a real HBase peer.

The source runs with ``hbase.replication.bulkload.enabled=true`` and ``hbase.replication.cluster.id``
set (its own HBase, started by this module); the folder's real HBase is the peer, its replication
configuration directory holding the (empty) folder of that cluster id, as HBase's
DefaultSourceFSConfigurationProvider expects. HFiles made by HBase's own writer (hbrep's HFileTool) are
loaded into the source by HBase's BulkLoadHFilesTool beside ordinary puts; hbrep's ship cycles then
send the bulk-load marker with the source's directories, the peer's ReplicationSink copies the store
file and loads it (100,000 bulk-loaded rows: row-key sets compared by key-only scans, cells by HBase's
VerifyReplication). A ship the peer refuses leaves the hfile-refs; an acknowledged one removes them; a
re-read of the same WAL (its queue position put back) loads no store file twice. The folder's hbrep
cluster as the peer, of the shadow peer and of HBase's own replication: its sink reads the store files
with hbrep's HFile reader and writes their cells.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from interop.helpers import cycle_on, hbase_peer_into_hbrep
from source_helpers import cells, mutate, run_cli

from replication.config import Config
from replication.devstack.hbase import RealHBase
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.hfile import read_hfile
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.hfile_refs import HFileRefsStorage
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow

REPLICATION_CLUSTER_ID = "hbrep-bulk-source"
BULK_ROWS = 3000  # the hbrep-peer and native tests
BIG_BULK_ROWS = 100_000  # the real HBase peer's: one HFile per family, loaded once
PUT_ROWS = 20
CONF = Config.load(
    env={},
    overrides={
        "hbase.replication.cluster.id": REPLICATION_CLUSTER_ID,
        "replication.source.sleepforretries": "100",
        "hbrep.source.ship.max.attempts": "2",
    },
)
HFILE_TOOL = "io.hbrep.interop.HFileTool"
BULK_LOAD_TOOL = "org.apache.hadoop.hbase.tool.BulkLoadHFilesTool"


@pytest.fixture(scope="module")
def bulk_source(zk_server, tmp_path_factory) -> Iterator[RealHBase]:
    """A real HBase (master, one region server, Thrift) with bulk-load replication on."""
    cluster = RealHBase(tmp_path_factory.mktemp("hbase-bulk-source"))
    site = {"hbase.replication.bulkload.enabled": "true", "hbase.replication.cluster.id": REPLICATION_CLUSTER_ID}
    cluster.start(f"127.0.0.1:{zk_server.port}:/hbase-bulk-{uuid.uuid4().hex[:8]}", regionservers=1, extra_site=site)
    try:
        yield cluster
    finally:
        cluster.stop()


def _refs(key: str, peer: str) -> set[str]:
    cluster = ClusterKey.parse(key)
    with connected(cluster) as zk:
        return set(HFileRefsStorage(zk, ZNodePaths(CONF, parent=cluster.znode_parent), peer).list())


def _rewind_queue(key: str, peer: str) -> int:
    """Put every WAL of the peer's queues back to position 0 (a ship that must be done again); how many.
    HBase writes no data for position 0 (set_wal_position writes nothing then), so the znode is emptied."""
    cluster = ClusterKey.parse(key)
    with connected(cluster) as zk:
        paths = ZNodePaths(CONF, parent=cluster.znode_parent)
        storage = ReplicationQueueStorage(zk, paths)
        rewound = 0
        for server in storage.get_list_of_replicators():
            for queue in storage.get_all_queues(server):
                if queue.split("-")[0] != peer:
                    continue
                for wal in storage.get_wals_in_queue(server, queue):
                    zk.set(paths.wal(server, queue, wal), b"")
                    rewound += 1
        return rewound


def _bulk_loaded_files(hbase: RealHBase, table: str, family: str) -> list[str]:
    """The store files of ``family`` a bulk load put in the table's regions (``<name>_SeqId_<n>_``)."""
    return sorted(p.name for p in (hbase.rootdir / "data" / "default" / table).glob(f"*/{family}/*_SeqId_*"))


def _row_keys(hbase: RealHBase, table: str) -> set[bytes]:
    """The row keys of ``table`` holding a cell of family a: a key-only scan (HBase's FirstKeyOnlyFilter and
    KeyOnlyFilter, through its Thrift server), no values sent."""
    connection = hbase.happybase_connection()
    try:
        scan = connection.table(table).scan(columns=[b"a"], filter=b"FirstKeyOnlyFilter() AND KeyOnlyFilter()",
                                            batch_size=5000)  # fmt: skip
        return {row for row, _ in scan}
    finally:
        connection.close()


def _sample_a(cluster: str, table: str) -> set[str]:
    """Family a's cells (raw) of the first 500 rows (bulk-loaded ones) and of the put rows."""
    first = cells(cluster, table, scan_args=["--columns", "a", "--limit", "500"])
    puts = cells(cluster, table, scan_args=["--columns", "a", "--start-row", "put-"])
    return first | puts


def test_a_bulk_load_reaches_a_real_hbase_peer_once(bulk_source, source_hbase, spark, tmp_path: Path):
    source, peer_hbase = bulk_source, source_hbase
    key, peer_key = source.layout().cluster_key, peer_hbase.layout().cluster_key
    peer, table = f"b{uuid.uuid4().hex[:6]}", f"bulk_{uuid.uuid4().hex[:8]}"
    # the peer's sink reads the source's file system configuration from <conf dir>/<replication cluster id>/
    (peer_hbase.conf_dir / REPLICATION_CLUSTER_ID).mkdir(exist_ok=True)
    source.admin("create-table", table, "3", "a:1", "b:0")
    source.admin("roll")  # a new peer's queue starts at the current WAL: none of the other test's edits in it
    run_cli("add_peer", peer, peer_key, "--shadow", "--rootdir", source.rootdir_uri, cluster=key)
    try:
        mutate(source, table, [
            {"op": "multi_put", "row": f"put-{i:03d}", "cells": [
                {"family": "a", "qualifier": "x", "value": f"ax{i}"},
                {"family": "b", "qualifier": "y", "value": f"by{i}"},
            ]} for i in range(PUT_ROWS)
        ])  # fmt: skip
        hfiles = tmp_path / "hfiles"
        written = source.run_tool(HFILE_TOOL, ["write", hfiles.as_uri(), "a,b", str(BIG_BULK_ROWS), "bulk", "5000"],
                                  parse_json=True)  # fmt: skip
        assert written == {"files": 2, "cells": 2 * BIG_BULK_ROWS}
        source.run_tool(BULK_LOAD_TOOL, [hfiles.as_uri(), table], heap_mb=384)
        loaded_a, loaded_b = _bulk_loaded_files(source, table, "a"), _bulk_loaded_files(source, table, "b")
        assert len(loaded_a) == 1 and len(loaded_b) == 1, (loaded_a, loaded_b)
        queued = _refs(key, peer)
        print(f"hfile-refs of peer {peer} after the bulk load: {sorted(queued)}")
        assert set(loaded_a) <= queued

        # the peer has no such table yet: it refuses the batch, and the references stay
        refused = cycle_on(key, CONF, spark)
        assert [q.status for q in refused.queues] == ["failed"], refused.queues
        assert _refs(key, peer) == queued

        # scope 0 on the peer: what its sink writes is not replicated on (the package's later peers of this
        # HBase replicate every table of scope 1 from its current WAL)
        peer_hbase.admin("create-table", table, "3", "a:0", "b:0")
        shipped = cycle_on(key, CONF, spark)
        assert [q.status for q in shipped.queues] == ["ok"], shipped.queues
        metrics = shipped.queues[0].metrics
        assert metrics.get("shippedHFiles") == 1, metrics
        # acknowledged: family a's store file left the queue; family b (scope 0) never ships and its
        # reference stays, as HBase's own source leaves it
        assert _refs(key, peer) == queued - set(loaded_a)
        on_peer_files = _bulk_loaded_files(peer_hbase, table, "a")
        assert len(on_peer_files) == 1 and not _bulk_loaded_files(peer_hbase, table, "b")

        started = time.monotonic()
        source_keys = _row_keys(source, table)
        assert len(source_keys) == BIG_BULK_ROWS + PUT_ROWS
        assert _row_keys(peer_hbase, table) == source_keys
        source_sample = _sample_a(key, table)
        assert len({json.loads(c)["row"] for c in source_sample}) == 500 + PUT_ROWS
        assert _sample_a(peer_key, table) == source_sample
        print(f"key-only scans of both sides and sampled cells: {time.monotonic() - started:.1f}s")

        # the same WAL shipped again: the bulk-load marker no longer names a pending file, nothing is loaded twice
        assert _rewind_queue(key, peer) >= 1
        again = cycle_on(key, CONF, spark)
        assert [q.status for q in again.queues] == ["ok"], again.queues
        assert "shippedHFiles" not in again.queues[0].metrics, again.queues[0].metrics
        assert _bulk_loaded_files(peer_hbase, table, "a") == on_peer_files
        assert _row_keys(peer_hbase, table) == source_keys
        assert _sample_a(peer_key, table) == source_sample

        # HBase's own comparison of every row's cells (family a) on both sides
        started = time.monotonic()
        counters = source.verify_replication(peer, table, families=["a"])
        print(f"VerifyReplication of {BIG_BULK_ROWS + PUT_ROWS} rows: {time.monotonic() - started:.1f}s, {counters}")
        assert counters.get("GOODROWS") == BIG_BULK_ROWS + PUT_ROWS and counters.get("BADROWS", 0) == 0, counters
    finally:
        run_cli("remove_peer", peer, cluster=key)


def test_a_bulk_load_reaches_an_hbrep_cluster_peer(bulk_source, hbrep_cluster, spark, tmp_path: Path):
    """An hbrep cluster as the peer: its sink reads the store files (hbrep's HFile reader) from the source's
    file system and writes their cells; the references go once it acknowledged."""
    source = bulk_source
    key, peer_key = source.layout().cluster_key, str(hbrep_cluster.key)
    peer, table = f"h{uuid.uuid4().hex[:6]}", f"bulk_{uuid.uuid4().hex[:8]}"
    source.admin("create-table", table, "3", "a:1", "b:0")
    families = [ColumnFamilyDescriptor(f, scope=1, max_versions=3) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), hbrep_cluster.root).create(TableDescriptor.of(table, *families))
    source.admin("roll")  # a new peer's queue starts at the current WAL: none of the other test's edits in it
    run_cli("add_peer", peer, peer_key, "--shadow", "--rootdir", source.rootdir_uri, cluster=key)
    try:
        mutate(source, table, [{"op": "put", "row": f"put-{i:03d}", "family": "a", "qualifier": "x", "value": f"{i}"}
                               for i in range(PUT_ROWS)])  # fmt: skip
        hfiles = tmp_path / "hfiles"
        source.run_tool(HFILE_TOOL, ["write", hfiles.as_uri(), "a,b", str(BULK_ROWS), "tohbrep", "6000"])
        source.run_tool(BULK_LOAD_TOOL, [hfiles.as_uri(), table], heap_mb=384)
        loaded_a = _bulk_loaded_files(source, table, "a")
        # hbrep's HFile reader against HBase's own writer: every cell the tool wrote, in order
        region_dir = next((source.rootdir / "data" / "default" / table).glob("*/a")).parent
        read = read_hfile((region_dir / "a" / loaded_a[0]).read_bytes(), loaded_a[0])
        assert [(c.row, c.value) for c in read] == [
            (b"tohbrep-%06d" % i, b"tohbrep-a-%d" % i) for i in range(BULK_ROWS)
        ]
        assert {(c.family, c.qualifier, c.timestamp) for c in read} == {(b"a", b"q", 6000)}
        assert set(loaded_a) <= _refs(key, peer)

        shipped = cycle_on(key, CONF, spark)
        assert [q.status for q in shipped.queues] == ["ok"], [q.error for q in shipped.queues]
        assert shipped.queues[0].metrics.get("shippedHFiles") == 1, shipped.queues[0].metrics
        assert not set(loaded_a) & _refs(key, peer)
        source_a = {c for c in cells(key, table, raw=False) if json.loads(c)["family"] == "a"}
        on_hbrep = cells(peer_key, table, raw=False)
        assert on_hbrep == source_a
        assert len({json.loads(c)["row"] for c in on_hbrep}) == BULK_ROWS + PUT_ROWS
    finally:
        run_cli("remove_peer", peer, cluster=key)


def test_hbases_own_replication_brings_a_bulk_load_into_hbrep(bulk_source, hbrep_cluster, tmp_path: Path):
    """HBase's own source (an ENABLED native peer to hbrep's HBase RPC listener) ships the bulk-load marker
    with the source's directories; hbrep's sink reads the store file and writes its cells."""
    source = bulk_source
    key, table = source.layout().cluster_key, f"native_{uuid.uuid4().hex[:8]}"
    source.admin("create-table", table, "3", "a:1")
    families = [ColumnFamilyDescriptor("a", scope=1, max_versions=3)]
    TableRegistry(LocalFileSystem(), hbrep_cluster.root).create(TableDescriptor.of(table, *families))
    with hbase_peer_into_hbrep(source, hbrep_cluster.key, hbrep_cluster.paths, table):
        hfiles = tmp_path / "hfiles"
        source.run_tool(HFILE_TOOL, ["write", hfiles.as_uri(), "a", str(BULK_ROWS), "native", "7000"])
        source.run_tool(BULK_LOAD_TOOL, [hfiles.as_uri(), table], heap_mb=384)
        expected = cells(key, table, raw=False)
        assert len(expected) == BULK_ROWS
        deadline = time.monotonic() + 180
        while cells(str(hbrep_cluster.key), table, raw=False) != expected:
            assert time.monotonic() < deadline, "HBase's bulk load did not arrive in hbrep within 180 s"
            time.sleep(2)
