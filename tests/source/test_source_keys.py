"""Source keys read where a queue is shipped (``ship_queue``), each changed from its default on real clusters
(issue 44): ``replication.source.nb.batches`` (how many batches the WAL reader keeps ahead of the shipper) and
``replication.source.per.peer.node.bandwidth`` (the bandwidth of a peer that sets none of its own).

One source and one peer cluster (one region server each) for the module; every ship reads the same WAL
entries again (no position is committed), so each key's runs see the same input."""

from __future__ import annotations

import os
import signal
import time
import uuid

import pytest
from support import add_peer, create_table

from replication.cluster.embedded import server_pids, start_cluster
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.source.cycle import snapshot_step
from replication.source.manifest import Manifest, read_text
from replication.source.replication_source import ship_queue
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from tests.conftest import Pair

pytestmark = pytest.mark.slow

ROWS = 12
OWNER = "test-source-keys"


@pytest.fixture(scope="module")
def pair(zk_server, tmp_path_factory):
    conf = Config.load(env={}, overrides={"replication.source.sleepforretries": "50"})
    keys = [f"127.0.0.1:{zk_server.port}:/hbase-srckeys-{n}-{uuid.uuid4().hex[:8]}" for n in ("a", "b")]
    source = start_cluster(keys[0], str(tmp_path_factory.mktemp("a")), 1, conf=conf, name="a")
    try:
        peer = start_cluster(keys[1], str(tmp_path_factory.mktemp("b")), 1, conf=conf, name="b")
    except BaseException:
        source.stop()
        raise
    try:
        pair = Pair(source, peer, ClusterKey.parse(keys[0]), ClusterKey.parse(keys[1]), conf)
        for cluster in (source, peer):
            create_table(cluster, "t", ("f", 1))
        add_peer(pair, "1")
        with source.client() as client:
            for i in range(ROWS):  # one WAL entry each
                client.put("t", b"row%02d" % i, b"f", b"q", b"v" * 200)
        yield pair
    finally:
        peer.stop()
        source.stop()


def _ship(pair, tmp_path, recorded: list[float] | None = None, **keys: str):
    """Snapshot with ``keys`` set (the manifest carries the configuration), then ship its one queue."""
    conf = pair.conf.with_overrides({"replication.source.nb.capacity": "1", **keys})  # one entry per batch
    with connected(pair.source_key) as zk:
        outcome = snapshot_step(zk, pair.source_key, conf, owner=OWNER, work_dir=tmp_path / uuid.uuid4().hex[:6])
    manifest = Manifest.from_json(read_text(outcome.manifest_path))
    (queue,) = [q for q in manifest.queues if q.peer_id == "1"]

    def sleep(seconds: float) -> None:
        if recorded is not None:
            recorded.append(seconds)
        time.sleep(seconds)

    return ship_queue(manifest, queue, sleep=sleep)


def test_nb_batches_is_how_far_the_reader_reads_ahead_of_a_blocked_shipper(pair, tmp_path):
    """The peer's region server is stopped (SIGSTOP): the first batch's call hangs until its timeout, and
    meanwhile the reader fills the read-ahead queue. What it read is in logEditsRead: one batch being shipped,
    ``nb.batches`` queued and one waiting to be queued."""
    (sink,) = pair.peer.servers
    pid = server_pids(pair.peer.root)[sink]
    read = {}
    os.kill(pid, signal.SIGSTOP)
    try:
        for batches in (1, 4):
            result = _ship(
                pair, tmp_path, **{
                    "replication.source.nb.batches": str(batches),
                    "replication.source.shipedits.timeout": "1500",
                    "hbrep.source.ship.max.attempts": "1",
                },
            )  # fmt: skip
            assert result.status == "failed", result.error
            read[batches] = result.metrics["logEditsRead"]
    finally:
        os.kill(pid, signal.SIGCONT)
    assert read[4] - read[1] == 3, read  # three more batches (of one entry) held ahead
    assert read[4] < ROWS  # the reader stopped there: it did not read the whole WAL
    assert _ship(pair, tmp_path).status == "ok"  # the peer serves again


def test_per_peer_node_bandwidth_throttles_a_peer_without_its_own(pair, tmp_path):
    unthrottled: list[float] = []
    result = _ship(pair, tmp_path, unthrottled)
    assert result.status == "ok" and result.metrics["shippedOps"] >= ROWS
    assert unthrottled == []  # 0 (the default): no throttle sleep
    throttled: list[float] = []
    # 2 KB/s: 200 bytes per 100 ms cycle, less than two of these batches (~250 bytes each)
    result = _ship(pair, tmp_path, throttled, **{"replication.source.per.peer.node.bandwidth": "2000"})
    assert result.status == "ok" and result.metrics["shippedOps"] >= ROWS
    assert len(throttled) >= ROWS // 2 and all(0 < s <= 0.1 for s in throttled), throttled
    with pair.peer.client() as client:
        client.flush("t")
    rows = {c.row for c in scan_cells(read_cells(LocalFileSystem(), pair.peer.root, "t"))}
    assert rows == {b"row%02d" % i for i in range(ROWS)}
