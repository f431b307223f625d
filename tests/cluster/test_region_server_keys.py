"""Region-server keys that decide where a server listens and when it acts, each changed from its default on one
real region server (issue 44): ``hbase.regionserver.port``, ``hbase.regionserver.ipc.address``,
``hbase.ipc.max.request.size`` and ``hbase.hregion.memstore.flush.size``."""

from __future__ import annotations

import time
import uuid

import psutil
import pytest

from replication.cluster.embedded import server_pids, start_cluster
from replication.cluster.errors import ClusterError, SinkError
from replication.cluster.hbase_rpc.sink_client import HBaseSinkClient
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.net import free_port
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey

pytestmark = pytest.mark.slow

MAX_REQUEST = 16 * 1024  # hbase.ipc.max.request.size (default 256 MiB)
FLUSH_SIZE = 8 * 1024  # hbase.hregion.memstore.flush.size (default 128 MiB)
SOURCE = uuid.UUID("12345678-1234-5678-1234-567812345678")


@pytest.fixture(scope="module")
def server(zk_server, tmp_path_factory):
    """One region server with the four keys set; no periodic flush (only the size can trigger one)."""
    port = free_port()
    conf = Config.load(
        env={},
        overrides={
            "hbase.regionserver.port": port,
            "hbase.ipc.max.request.size": MAX_REQUEST,
            "hbase.hregion.memstore.flush.size": FLUSH_SIZE,
            "hbase.regionserver.optionalcacheflushinterval": 0,
            "hbrep.regionserver.chore.interval.ms": 100,
        },
    )
    key = f"127.0.0.1:{zk_server.port}:/hbase-rskeys-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("rskeys")), 1, conf=conf, name="rskeys")
    try:
        for table in ("big", "small"):
            TableRegistry(None, cluster.root).create(TableDescriptor.of(table, ColumnFamilyDescriptor("f", scope=1)))
        yield cluster, port
    finally:
        cluster.stop()


def test_the_region_server_listens_on_the_configured_port(server):
    cluster, port = server
    (name,) = cluster.servers
    host, listed_port, _ = name.split(",")
    assert (host, int(listed_port)) == ("127.0.0.1", port)  # the default (0) takes whatever port is free
    listening = {
        (c.laddr.ip.removeprefix("::ffff:"), c.laddr.port)
        for c in psutil.Process(server_pids(cluster.root)[name]).net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN
    }
    assert ("127.0.0.1", port) in listening
    with cluster.client() as client:
        client.put("small", b"over-the-port", b"f", b"q", b"v")  # served there


def test_the_region_server_binds_the_configured_address_or_stops_naming_it(zk_server, tmp_path):
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: nothing can bind it, so the server cannot start
    conf = Config.load(env={}, overrides={"hbase.regionserver.ipc.address": "192.0.2.1"})
    key = f"127.0.0.1:{zk_server.port}:/hbase-ipcaddr-{uuid.uuid4().hex[:8]}"
    with pytest.raises(ClusterError, match=r"192\.0\.2\.1"):
        start_cluster(key, str(tmp_path / "root"), 1, conf=conf, name="ipcaddr")


def _batch(table: bytes, rows: int, value_size: int) -> list:
    cells = [Cell(b"r%05d" % i, b"f", b"q", 1000 + i, int(CellType.PUT), b"x" * value_size) for i in range(rows)]
    key = WALKey(b"0" * 32, table, 1, 1_700_000_000_000, {b"f": 1}, [SOURCE])
    return [(key, len(cells), encode_cells(cells))]


def test_a_request_over_the_configured_max_request_size_is_refused(server):
    cluster, _ = server
    (hbase_name,) = cluster.zk.get_children(cluster.paths.hbase_rpc_rs)
    with HBaseSinkClient(hbase_name, 10.0) as client:
        client.replicate(_batch(b"small", 10, 100), str(SOURCE))  # ~1.5 KiB: under the bound, applied
    with HBaseSinkClient(hbase_name, 10.0) as client, pytest.raises(SinkError) as refused:
        client.replicate(_batch(b"small", 10, 2 * 1024), str(SOURCE))  # ~20 KiB: over 16 KiB (not 256 MiB)
    assert f"hbase.ipc.max.request.size {MAX_REQUEST}" in str(refused.value)
    with cluster.client() as client:
        client.flush("small")
    cells = scan_cells(read_cells(LocalFileSystem(), cluster.root, "small"))
    assert {c.row for c in cells} >= {b"r%05d" % i for i in range(10)}  # the small request's rows
    assert all(len(c.value) < 2 * 1024 for c in cells)  # none of the refused one's


def test_a_region_flushes_when_its_memstore_reaches_the_configured_size(server):
    cluster, _ = server
    with cluster.client() as client:
        client.put("big", b"under", b"f", b"q", b"v" * 100)
        time.sleep(1.0)  # ten chore rounds: under the flush size, nothing is written to a table file
        assert list(read_cells(LocalFileSystem(), cluster.root, "big")) == []
        for i in range(12):  # 12 KiB more: over the 8 KiB flush size (128 MiB by default)
            client.put("big", b"row%02d" % i, b"f", b"q", b"v" * 1024)
    deadline = time.monotonic() + 30
    while not list(read_cells(LocalFileSystem(), cluster.root, "big")):
        assert time.monotonic() < deadline, "the region never flushed at its memstore flush size"
        time.sleep(0.1)
    flushed = {c.row for c in scan_cells(read_cells(LocalFileSystem(), cluster.root, "big"))}
    assert b"under" in flushed and len(flushed) >= 8  # the row under the bound and the ones that reached it
