"""ReplicationTracker against a real ZooKeeper: region servers are kazoo sessions owning their ``rs`` znodes,
a death is the session's end, and the tracker's own session is expired the way ZooKeeper expires one."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from replication.zk.claim import claim_queues
from replication.zk.client import connect
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.dead_server_storage import DeadServerStorage
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.replication_tracker import RegionServersRemoved, ReplicationTracker

S1, S2, S3 = "127.0.0.1,16020,1000", "127.0.0.1,16021,1001", "127.0.0.1,16022,1002"


class Servers:
    """Region servers as ZooKeeper sessions: ``start`` registers ``rs/<name>``, ``kill`` ends its session."""

    def __init__(self, cluster_key: str, paths):
        self.cluster_key, self.paths = cluster_key, paths
        self.sessions: dict[str, KazooClient] = {}

    def start(self, name: str) -> None:
        client = connect(self.cluster_key)
        LiveServerStorage(client, self.paths).ensure_roots()
        LiveServerStorage(client, self.paths).register(name)
        self.sessions[name] = client

    def kill(self, name: str) -> None:
        client = self.sessions.pop(name)
        client.stop()  # closes the session: ZooKeeper deletes its ephemeral znode at once
        client.close()

    def close(self) -> None:
        for name in list(self.sessions):
            self.kill(name)


@pytest.fixture
def servers(cluster_key, paths, zkc) -> Iterator[Servers]:
    s = Servers(cluster_key, paths)
    try:
        yield s
    finally:
        s.close()


TRACKERS: list[ReplicationTracker] = []


@pytest.fixture
def watcher(cluster_key, zkc, servers) -> Iterator[KazooClient]:
    """The tracker's client; every tracker is stopped before the servers and the cluster's znodes go."""
    client = connect(cluster_key, reconnect_for=None)
    try:
        yield client
    finally:
        while TRACKERS:
            TRACKERS.pop().stop()
        client.stop()
        client.close()


def _events(tracker_zk, paths) -> tuple[ReplicationTracker, queue.Queue[RegionServersRemoved]]:
    got: queue.Queue[RegionServersRemoved] = queue.Queue()
    tracker = ReplicationTracker(tracker_zk, paths, got.put)
    TRACKERS.append(tracker)
    return tracker, got


def _next(got: queue.Queue[RegionServersRemoved], timeout: float = 20.0) -> RegionServersRemoved:
    return got.get(timeout=timeout)


def test_a_removed_rs_znode_is_reported_with_the_live_servers_left(servers, watcher, zkc, paths):
    servers.start(S1)
    servers.start(S2)
    tracker, got = _events(watcher, paths)
    tracker.start()
    assert tracker.live_servers == sorted([S1, S2])
    assert got.empty(), "nothing is dead at start: no event"
    servers.kill(S1)
    event = _next(got)
    assert (event.servers, event.reason, event.live) == ((S1,), "watch", (S2,))
    # when it died, for failover's sleep and the status: the mark, at the time the removal was seen
    assert DeadServerStorage(zkc, paths).marks() == {S1: event.seen_ms}
    servers.start(S3)  # a server joining is no event
    servers.kill(S2)
    assert _next(got).servers == (S2,)
    tracker.stop()
    assert got.empty()


def test_a_server_dead_before_the_tracker_started_is_reported_while_it_holds_queues(servers, watcher, zkc, paths):
    """A restarted watcher missed the death: a replicator without a live znode is reported, once."""
    queues = ReplicationQueueStorage(zkc, paths)
    queues.add_wal(S1, "1", "127.0.0.1%2C16020%2C1000.1000")
    servers.start(S2)
    tracker, got = _events(watcher, paths)
    tracker.start()
    event = _next(got)
    assert (event.servers, event.reason) == ((S1,), "orphan-queues")
    queues.add_wal(S2, "1", "127.0.0.1%2C16021%2C1001.1001")  # the replicators change: S1 is not reported again
    time.sleep(1.0)
    assert got.empty()


def test_a_death_while_the_trackers_session_expired_is_found_by_reading_again(servers, watcher, cluster_key, paths):
    """The tracker's session expires (its watches go with it) and S1 dies before the new session exists:
    no watch can see that death, the comparison of the servers known before with those read after does."""
    servers.start(S1)
    servers.start(S2)
    tracker, got = _events(watcher, paths)
    tracker.start()
    killed = threading.Event()

    def kill_while_lost(state: str) -> None:
        if state == KazooState.LOST and not killed.is_set():
            servers.kill(S1)  # before kazoo opens the new session: the old session's watch is gone
            killed.set()

    watcher.add_listener(kill_while_lost)
    session_id, password = watcher.client_id
    clone = KazooClient(hosts=cluster_key.rsplit(":", 1)[0], client_id=(session_id, password))
    clone.start(timeout=15)
    clone.stop()  # closing the clone ends the session the tracker had
    clone.close()
    event = _next(got)
    assert killed.is_set()
    assert (event.servers, event.reason, event.live) == ((S1,), "session", (S2,))
    assert watcher.client_id[0] != session_id, "a new session"
    servers.kill(S2)  # the watches are set again on the new session
    assert _next(got).servers == (S2,)


def test_a_server_back_on_the_same_host_and_port_with_a_new_start_code_is_a_death_and_a_join(servers, watcher, paths):
    old, new = "127.0.0.1,16020,1000", "127.0.0.1,16020,2000"
    servers.start(old)
    tracker, got = _events(watcher, paths)
    tracker.start()
    servers.kill(old)
    servers.start(new)
    assert _next(got).servers == (old,)
    time.sleep(1.0)
    assert got.empty(), "the new start code is a new server, not a death"
    assert tracker.live_servers == [new]


def test_two_reports_of_one_death_make_one_claim(servers, watcher, zkc, paths, cluster_key):
    """Each report starts a failover; both race for the dead server's claim lock and one moves the queues."""
    ReplicationPeerStorage(zkc, paths).add_peer("1", ReplicationPeerConfig("127.0.0.1:2181:/peer"))
    queues = ReplicationQueueStorage(zkc, paths)
    wals = [f"127.0.0.1%2C16020%2C1000.{ts}" for ts in (1000, 1001, 1002)]
    for wal in wals:
        queues.add_wal(S1, "1", wal)
    servers.start(S1)
    servers.start(S2)
    servers.start(S3)
    got: queue.Queue[RegionServersRemoved] = queue.Queue()
    first = ReplicationTracker(watcher, paths, got.put)
    TRACKERS.append(first)
    second_zk = connect(cluster_key, reconnect_for=None)
    second = ReplicationTracker(second_zk, paths, got.put)
    try:
        first.start()
        second.start()
        servers.kill(S1)
        reports = [_next(got), _next(got)]
        assert [r.servers for r in reports] == [(S1,), (S1,)]
        results: dict[str, list] = {}
        clients = {S2: connect(cluster_key), S3: connect(cluster_key)}
        peers = ReplicationPeerStorage(zkc, paths)

        def claim(claimer: str) -> None:
            results[claimer] = claim_queues(clients[claimer], paths, S1, claimer, peers.peer_exists, wait=5.0)

        threads = [threading.Thread(target=claim, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for client in clients.values():
            client.stop()
            client.close()
    finally:
        second.stop()
        second_zk.stop()
        second_zk.close()
    winners = [c for c, claimed in results.items() if claimed]
    assert len(winners) == 1, results
    (moved,) = results[winners[0]]
    assert sorted(moved.wals) == sorted(wals)
    assert not zkc.exists(paths.replicator(S1))
    assert queues.get_all_queues(winners[0]) == [f"1-{S1}"]
    loser = ({S2, S3} - set(winners)).pop()
    assert not zkc.exists(paths.replicator(loser)), "the loser made no queues"
