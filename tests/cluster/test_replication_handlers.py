"""``hbase.regionserver.replication.handler.count``: how many ReplicateWALEntry requests one region server
applies at once (HBase's replication handlers). A request whose rows belong to a stopped (SIGSTOP) owner
holds its handler until the forward times out (``replication.sink.client.ops.timeout``); with one handler a
second request to the same server waits for it, with two it is applied at once. Real region servers."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import pytest

from replication.cluster.embedded import server_pids, start_cluster
from replication.cluster.info import cluster_token
from replication.cluster.region_routing import owner_of
from replication.cluster.sink_client import SinkClient
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey

pytestmark = pytest.mark.slow

SOURCE = uuid.UUID("12345678-1234-5678-1234-567812345678")
FORWARD_TIMEOUT_MS = 6000


def _entries(rows: list[bytes]) -> list[tuple[WALKey, int, bytes]]:
    cells = [Cell(row, b"f", b"q", 1000, int(CellType.PUT), b"v") for row in rows]
    return [(WALKey(b"0" * 32, b"t", 7, 1_700_000_000_000, {b"f": 1}, [SOURCE]), len(cells), encode_cells(cells))]


def _second_request_wait_s(cluster_key: str, root: str, handlers: int) -> float:
    """Seconds a request to server A took while another request to A waited on a stopped owner B."""
    conf = Config.load(env={}, overrides={
        "hbase.regionserver.replication.handler.count": handlers,
        "replication.sink.client.ops.timeout": FORWARD_TIMEOUT_MS,
        "zookeeper.session.timeout": 30000,  # B stays listed (so owns its rows) while it is stopped
    })  # fmt: skip
    cluster = start_cluster(cluster_key, root, 2, conf=conf, name=f"h{handlers}")
    stopped = None
    try:
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        a, b = sorted(cluster.servers)
        rows = [b"row%04d" % i for i in range(400)]
        of_b = [r for r in rows if owner_of(r, [a, b]) == b][:20]
        of_a = [r for r in rows if owner_of(r, [a, b]) == a][:20]
        token = cluster_token(LocalFileSystem(), cluster.root)
        with SinkClient(a, token) as warm:  # both servers' connections made before B stops
            warm.replicate(_entries(of_a[:1] + of_b[:1]), str(SOURCE))
        stopped = server_pids(cluster.root)[b]
        os.kill(stopped, signal.SIGSTOP)
        first = threading.Thread(target=lambda: SinkClient(a, token).replicate(_entries(of_b), str(SOURCE)))
        first.start()
        time.sleep(1.0)  # the first request now holds a handler of A, waiting on B
        started = time.monotonic()
        with SinkClient(a, token) as client:
            client.replicate(_entries(of_a), str(SOURCE))
        waited = time.monotonic() - started
        os.kill(stopped, signal.SIGCONT)
        stopped = None
        first.join(timeout=120)
        return waited
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        cluster.stop()


def test_one_handler_serializes_replication_requests_and_two_do_not(zk_server, tmp_path):
    parent = f"127.0.0.1:{zk_server.port}:/hbase-handlers-{uuid.uuid4().hex[:8]}"
    one = _second_request_wait_s(parent + "a", str(tmp_path / "a"), handlers=1)
    two = _second_request_wait_s(parent + "b", str(tmp_path / "b"), handlers=2)
    assert one > 3.0, f"with one handler the second request did not wait for the first ({one:.1f}s)"
    assert two < 3.0, f"with two handlers the second request waited ({two:.1f}s)"
