"""PendingEditsTracker against a real ZooKeeper and a real embedded cluster: writes through the region server's
write path grow its WAL (nothing changes in ZooKeeper), a roll queues a new WAL (the journal watch fires),
a ship run is the peer's lease in ZooKeeper, and a commit is the positions written as the ship commits them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from support import create_table

from replication.cluster.embedded import EmbeddedCluster, start_cluster
from replication.cluster.source_cluster import SourceCluster, open_source
from replication.config import Config
from replication.source.pending_edits import PendingEditsTracker
from replication.wal.locator import WalLocator
from replication.wal.names import wal_start_timestamp
from replication.zk.client import connect
from replication.zk.cluster_key import ClusterKey
from replication.zk.lease import ShipLease
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow


@dataclass
class Idle:
    cluster: EmbeddedCluster
    source: SourceCluster
    tracker: PendingEditsTracker

    def write(self, row: bytes) -> None:
        with self.cluster.client() as client:
            client.put("t", row, b"f", b"q", b"v")

    def commit_all(self) -> None:
        """Every queued WAL of peer 1 shipped to its end, as the ship's commit leaves it: the newest WAL's
        position at its end, the finished (rolled) ones dropped."""
        zk, paths = self.cluster.zk, self.cluster.paths
        storage = ReplicationQueueStorage(zk, paths)
        locator = WalLocator(self.source.fs, self.source.root)
        for state in storage.snapshot().queues():
            *finished, newest = sorted(state.wals, key=wal_start_timestamp)
            path = locator.find(newest, [state.server])
            assert path is not None, newest
            storage.set_wal_position(state.server, state.queue_id, newest, self.source.fs.readable_length(path))
            if finished:
                storage.delete_wals(state.server, state.queue_id, finished)

    def poll_until_quiet(self) -> None:
        """Poll until a look reports nothing and no watch fired since (the commit's changes were read, and the
        watches are set again)."""
        for _ in range(20):
            time.sleep(0.3)
            if not self.tracker.poll() and not self.tracker.changed.is_set():
                return
        raise AssertionError("the tracker kept reporting")


@pytest.fixture(scope="module")
def idle(zk_server, tmp_path_factory) -> Iterator[Idle]:
    """One region server with peer 1's queue, and a tracker on its own session; everything stopped after."""
    conf = Config.load(env={}, overrides={})
    key = f"127.0.0.1:{zk_server.port}:/hbase-edits-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("edits")), 1, conf=conf, name="edits")
    watcher = connect(key)
    try:
        create_table(cluster, "t", ("f", 1))
        peer_key = f"127.0.0.1:{zk_server.port}:/hbase-nowhere-{uuid.uuid4().hex[:6]}"
        ReplicationPeerStorage(cluster.zk, cluster.paths).add_peer("1", ReplicationPeerConfig(cluster_key=peer_key))
        (server,) = cluster.live_servers()
        storage = ReplicationQueueStorage(cluster.zk, cluster.paths)
        deadline = time.monotonic() + 30
        while "1" not in storage.get_all_queues(server):
            assert time.monotonic() < deadline, "the region server never queued its WAL for peer 1"
            time.sleep(0.1)
        source = open_source(watcher, ClusterKey.parse(key), conf)
        tracker = PendingEditsTracker(watcher, source)
        tracker.start()
        state = Idle(cluster, source, tracker)
        state.commit_all()
        state.poll_until_quiet()
        yield state
        tracker.stop()
    finally:
        watcher.stop()
        watcher.close()
        cluster.stop()


def test_one_write_to_an_idle_peer_is_reported_once_until_a_commit_moves_its_position(idle):
    idle.write(b"r1")
    (event,) = idle.tracker.poll()
    (server,) = idle.cluster.live_servers()
    assert (event.peer_id, event.queues) == ("1", (f"{server}/1",))
    assert event.pending_bytes > 0
    idle.write(b"r2")  # more edits on the same backlog: no second report, whatever the number of looks
    assert [idle.tracker.poll() for _ in range(5)] == [[]] * 5
    idle.commit_all()
    idle.poll_until_quiet()  # shipped to the end: nothing pending, and the peer is armed again
    idle.write(b"r3")
    (again,) = idle.tracker.poll()
    assert again.peer_id == "1" and again.seen_ms >= event.seen_ms
    idle.commit_all()
    idle.poll_until_quiet()


def test_a_run_holding_the_peers_lease_ships_the_edits_itself_and_none_is_reported_meanwhile(idle):
    lease = ShipLease(idle.cluster.zk, idle.cluster.paths, "1", owner="run-1")
    assert lease.acquire()
    try:
        idle.write(b"r4")
        assert [idle.tracker.poll() for _ in range(3)] == [[]] * 3
    finally:
        assert lease.release()
    (event,) = idle.tracker.poll()  # the run ended without shipping them: the backlog is reported now
    assert event.peer_id == "1" and event.pending_bytes > 0
    idle.commit_all()
    idle.poll_until_quiet()


def test_a_rolled_wal_fires_the_watch_and_is_reported(idle):
    (server,) = idle.cluster.live_servers()
    assert not idle.tracker.changed.is_set()
    with idle.cluster.client() as client:
        new_wal = client.roll_wal(server)
    assert idle.tracker.changed.wait(10), "no ZooKeeper watch fired for the new WAL"
    (event,) = idle.tracker.poll()  # the rolled WAL still queued is work (the ship drops it), the new one too
    assert event.queues == (f"{server}/1",)
    assert new_wal in ReplicationQueueStorage(idle.cluster.zk, idle.cluster.paths).get_wals_in_queue(server, "1")
    # the ship's commit: the rolled WAL shipped and dropped; the new WAL, registered at position 0, holds only
    # its header: no backlog
    storage = ReplicationQueueStorage(idle.cluster.zk, idle.cluster.paths)
    storage.delete_wals(server, "1", [w for w in storage.get_wals_in_queue(server, "1") if w != new_wal])
    idle.poll_until_quiet()
    assert storage.get_wals_in_queue(server, "1") == [new_wal]
    assert storage.get_wal_position(server, "1", new_wal) == 0
    idle.write(b"r-after-roll")  # its first edit is
    (event,) = idle.tracker.poll()
    assert event.pending_bytes > 0
    idle.commit_all()
    idle.poll_until_quiet()


def test_a_backlog_no_ship_moves_is_reported_once_and_hides_no_new_write_in_another_queue(idle):
    """A recovered queue whose WAL cannot be found (a ship fails on it and moves nothing) is reported once;
    a write to the live queue, idle when that report was made, is a new backlog: reported once more."""
    (server,) = idle.cluster.live_servers()
    storage = ReplicationQueueStorage(idle.cluster.zk, idle.cluster.paths)
    dead = "127.0.0.1,1,1"
    recovered = f"1-{dead}"
    storage.add_wal(server, recovered, f"{dead.replace(',', '%2C')}.1700000000000")
    try:
        assert idle.tracker.changed.wait(10), "no ZooKeeper watch fired for the recovered queue"
        (stuck,) = idle.tracker.poll()
        assert stuck.queues == (f"{server}/{recovered}",), stuck
        assert [idle.tracker.poll() for _ in range(3)] == [[]] * 3  # stuck: no event storm
        idle.write(b"r-beside-a-stuck-queue")
        (fresh,) = idle.tracker.poll()
        assert fresh.queues == (f"{server}/1", f"{server}/{recovered}"), fresh
        assert fresh.pending_bytes > 0
        idle.write(b"r-more")  # the same backlog again: no third report
        assert [idle.tracker.poll() for _ in range(3)] == [[]] * 3
    finally:
        storage.remove_queue(server, recovered)
    idle.commit_all()
    idle.poll_until_quiet()


def test_a_disabled_peer_is_not_reported(idle):
    storage = ReplicationPeerStorage(idle.cluster.zk, idle.cluster.paths)
    storage.set_peer_state("1", False)
    try:
        tracker = PendingEditsTracker(idle.tracker.zk, idle.source)
        tracker.start()
        try:
            idle.write(b"r5")
            assert tracker.poll() == []
            storage.set_peer_state("1", True)
            tracker.changed.set()  # a peer's state is read again at the next full read
            (event,) = tracker.poll()
            assert event.peer_id == "1"
        finally:
            tracker.stop()
    finally:
        storage.set_peer_state("1", True)
