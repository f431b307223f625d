"""A real HBase cluster replicates natively into an hbrep cluster: HBase's own ReplicationSource and
HBaseInterClusterReplicationEndpoint are the client, hbrep's region servers' HBase RPC listeners the sink.

The hbrep cluster is added as a peer of the session's real HBase through HBase's Admin API, with the
cluster key hbrep registers for HBase (``<parent>/hbrep-hbase-rpc``: hbaseid + rs/<host,hbaseRpcPort,
startcode>). Rows written into HBase through happybase (Thrift) must all arrive: the exact set of cells
(every version, deletes applied) on the hbrep side equals what HBase itself holds and what was written,
and hbrep's WAL keys of those edits carry HBase's cluster id (HBase's hbaseid), so they never go back.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from cluster.helpers import wal_entries

from replication.cluster.embedded import start_cluster
from replication.cluster.hbase_registry import hbase_cluster_key
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.zk.client import connected
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths

pytestmark = pytest.mark.slow

VERSIONS = 3
ARRIVAL_TIMEOUT_S = 180


@pytest.fixture(scope="module")
def hbrep_sink(zk_server, tmp_path_factory):
    """An embedded hbrep cluster (2 region servers, HBase RPC listeners on by default)."""
    key = f"127.0.0.1:{zk_server.port}:/hbrep-dst-{uuid.uuid4().hex[:8]}"
    conf = Config.load(env={})
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("dst")), 2, conf=conf, name="dst")
    try:
        cluster.key = ClusterKey.parse(key)
        yield cluster
    finally:
        cluster.stop()


def _create_both(hbrep_sink, real_hbase, table: str) -> None:
    families = [ColumnFamilyDescriptor(f, scope=1, max_versions=VERSIONS) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), hbrep_sink.root).create(TableDescriptor.of(table, *families))
    real_hbase.admin("create-table", table, str(VERSIONS), "a:1", "b:1")


def _hbase_cells(real_hbase, table: str) -> set[tuple]:
    """Every version of every column of ``table`` on the real HBase, through happybase."""
    connection = real_hbase.happybase_connection()
    try:
        htable = connection.table(table)
        cells = set()
        for row, columns in htable.scan():
            for column in columns:
                family, qualifier = column.split(b":", 1)
                for value, ts in htable.cells(row, column, versions=VERSIONS + 2, include_timestamp=True):
                    cells.add((row, family, qualifier, ts, value))
        return cells
    finally:
        connection.close()


def _hbrep_cells(hbrep_sink, table: str) -> set[tuple]:
    """What the hbrep cluster holds for ``table`` (flushed, every version kept by the descriptor)."""
    with hbrep_sink.client() as client:
        client.flush(table)
    cells = scan_cells(read_cells(LocalFileSystem(), hbrep_sink.root, table), versions=VERSIONS)
    return {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells}


def _write_through_thrift(real_hbase, table: str, rows: int) -> set[tuple]:
    """Puts (three versions of a:q, one of b:q and b:r per row) through happybase, then deletes of whole
    columns (happybase's delete); returns the cells that must remain."""
    connection = real_hbase.happybase_connection()
    written: set[tuple] = set()
    try:
        htable = connection.table(table)
        for ts in (10, 20, 30):
            with htable.batch(timestamp=ts, batch_size=100) as batch:
                for i in range(rows):
                    row = f"row{i:05d}".encode()
                    batch.put(row, {b"a:q": b"a%d-%d" % (i, ts)})
                    written.add((row, b"a", b"q", ts, b"a%d-%d" % (i, ts)))
        with htable.batch(timestamp=40, batch_size=100) as batch:
            for i in range(rows):
                row = f"row{i:05d}".encode()
                batch.put(row, {b"b:q": b"b%d" % i, b"b:r": b"r%d" % i})
                written |= {(row, b"b", b"q", 40, b"b%d" % i), (row, b"b", b"r", 40, b"r%d" % i)}
        for i in range(0, rows, 10):  # every 10th row loses b:r (all versions)
            row = f"row{i:05d}".encode()
            htable.delete(row, columns=[b"b:r"])
            written.discard((row, b"b", b"r", 40, b"r%d" % i))
    finally:
        connection.close()
    return written


def test_real_hbase_replicates_every_row_into_hbrep_with_its_cluster_id_kept(hbrep_sink, real_hbase):
    table = f"native_{uuid.uuid4().hex[:8]}"
    peer = f"hbrep{uuid.uuid4().hex[:6]}"
    _create_both(hbrep_sink, real_hbase, table)
    peer_key = hbase_cluster_key(hbrep_sink.key, hbrep_sink.paths)
    real_hbase.admin(
        "add-peer",
        json.dumps({"id": peer, "cluster_key": peer_key, "replicate_all": False, "table_cfs": {table: []}}),
    )
    try:
        expected = _write_through_thrift(real_hbase, table, 500)
        assert _hbase_cells(real_hbase, table) == expected
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
        arrived = _hbrep_cells(hbrep_sink, table)
        while arrived != expected and time.monotonic() < deadline:
            time.sleep(2)
            arrived = _hbrep_cells(hbrep_sink, table)
        missing, extra = expected - arrived, arrived - expected
        print(f"cells written {len(expected)}, on hbrep {len(arrived)}, missing {len(missing)}, extra {len(extra)}")
        assert arrived == expected, (sorted(missing)[:5], sorted(extra)[:5])
    finally:
        real_hbase.admin("remove-peer", peer)

    # every edit hbrep's sink wrote for the table carries HBase's own cluster id (its hbaseid), and only it
    hbase_key = ClusterKey.parse(real_hbase.layout().cluster_key)
    with connected(hbase_key) as zk:
        hbase_id = read_cluster_id(zk, ZNodePaths(parent=hbase_key.znode_parent))
    entries = [
        e for s in hbrep_sink.servers for e in wal_entries(hbrep_sink.root, s) if e.key.table_name == table.encode()
    ]
    assert entries, "no WAL entry of the table on the hbrep side"
    assert {tuple(e.key.cluster_ids) for e in entries} == {(hbase_id,)}
    assert {c.row for e in entries for c in e.cells} == {row for row, *_ in expected}


def _hbase_log_mentions(real_hbase, *needles: str) -> bool:
    return any(
        all(needle in line for needle in needles)
        for log in real_hbase.log_files()
        for line in log.read_text(errors="replace").splitlines()
    )


def test_a_table_missing_on_hbrep_is_a_table_not_found_for_hbase_which_retries_until_it_exists(hbrep_sink, real_hbase):
    table = f"late_{uuid.uuid4().hex[:8]}"
    peer = f"hbrep{uuid.uuid4().hex[:6]}"
    real_hbase.admin("create-table", table, str(VERSIONS), "a:1", "b:1")  # on HBase only, for now
    peer_key = hbase_cluster_key(hbrep_sink.key, hbrep_sink.paths)
    real_hbase.admin(
        "add-peer",
        json.dumps({"id": peer, "cluster_key": peer_key, "replicate_all": False, "table_cfs": {table: []}}),
    )
    try:
        expected = _write_through_thrift(real_hbase, table, 50)
        # HBase's endpoint gets hbrep's answer as a RemoteException of TableNotFoundException and logs it
        said = f"RemoteWithExtrasException: org.apache.hadoop.hbase.TableNotFoundException: table {table} "
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
        while time.monotonic() < deadline and not _hbase_log_mentions(real_hbase, said):
            time.sleep(1)
        assert _hbase_log_mentions(real_hbase, said)
        assert not TableRegistry(LocalFileSystem(), hbrep_sink.root).exists(table)
        # once the table exists on hbrep, HBase's retries deliver every cell
        families = [ColumnFamilyDescriptor(f, scope=1, max_versions=VERSIONS) for f in ("a", "b")]
        TableRegistry(LocalFileSystem(), hbrep_sink.root).create(TableDescriptor.of(table, *families))
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
        arrived = _hbrep_cells(hbrep_sink, table)
        while arrived != expected and time.monotonic() < deadline:
            time.sleep(2)
            arrived = _hbrep_cells(hbrep_sink, table)
        print(f"cells written {len(expected)}, on hbrep after the table was created {len(arrived)}")
        assert arrived == expected, (sorted(expected - arrived)[:5], sorted(arrived - expected)[:5])
    finally:
        real_hbase.admin("remove-peer", peer)
