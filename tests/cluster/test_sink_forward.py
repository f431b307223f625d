"""The sink's owner hop: the owners' shares are forwarded while the receiving server writes its own,
and a share whose owner does not answer is written by the receiving server."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest

from replication.cluster.region_routing import owner_of
from replication.cluster.sink_client import build_request
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey

pytestmark = pytest.mark.slow

SOURCE = uuid.UUID("12345678-1234-5678-1234-567812345678")
ROWS = 60


@pytest.fixture
def pair_of_servers(cluster_key, tmp_path, cluster_conf):
    """One region-server process and one in-process HRegionServer (whose sink the test drives)."""
    from replication.cluster.embedded import start_cluster
    from replication.cluster.regionserver import HRegionServer

    cluster = start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=cluster_conf, name="test")
    rs = HRegionServer(cluster_key, cluster_conf)
    try:
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        rs.start()
        deadline = time.monotonic() + 10
        while len(rs.live_servers) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(rs.live_servers) == 2, rs.live_servers
        yield cluster, rs
    finally:
        rs.stop(flush=False)
        cluster.stop()


def _request():
    cells = [Cell(b"row%03d" % i, b"f", b"q", 1000 + i, int(CellType.PUT), b"v%d" % i) for i in range(ROWS)]
    key = WALKey(b"0" * 32, b"t", 7, 1_700_000_000_000, {b"f": 1}, [SOURCE])
    return build_request([(key, len(cells), encode_cells(cells))], str(SOURCE))


def _owned_by_each(rs) -> set[str]:
    return {owner_of(b"row%03d" % i, rs.live_servers) for i in range(ROWS)}


def test_owner_share_is_forwarded_while_the_local_share_is_written(pair_of_servers):
    cluster, rs = pair_of_servers
    assert _owned_by_each(rs) == set(rs.live_servers)  # both servers own some of the rows
    sink = rs.replication_sink()
    client = sink.client()
    local_started = threading.Event()
    forward_waited: list[bool] = []
    real_mutate, real_forward = rs.mutate, client.mutate_encoded_on

    def local_mutate(*args, **kwargs):
        local_started.set()
        return real_mutate(*args, **kwargs)

    def forward(*args, **kwargs):
        # sequential code forwarded first and wrote locally after: this wait would time out
        forward_waited.append(local_started.wait(5.0))
        return real_forward(*args, **kwargs)

    rs.mutate, client.mutate_encoded_on = local_mutate, forward
    sink.replicate_request(_request())
    assert forward_waited == [True]
    with cluster.client() as admin:
        admin.flush("t")
    cells = scan_cells(read_cells(LocalFileSystem(), cluster.root, "t"))
    assert sorted(c.row for c in cells) == [b"row%03d" % i for i in range(ROWS)]


def test_share_of_an_owner_that_does_not_answer_is_written_here(pair_of_servers, caplog):
    cluster, rs = pair_of_servers
    other = next(s for s in rs.live_servers if s != rs.server_name)
    cluster.kill(other)  # SIGKILL: still listed until its ZooKeeper session expires
    assert other in rs.live_servers
    with caplog.at_level(logging.WARNING, logger="replication.cluster.sink"):
        rs.replication_sink().replicate_request(_request())
    assert any(other in r.getMessage() and "locally" in r.getMessage() for r in caplog.records)
    rs.flush_all()
    cells = scan_cells(read_cells(LocalFileSystem(), cluster.root, "t"))
    assert sorted(c.row for c in cells) == [b"row%03d" % i for i in range(ROWS)]
