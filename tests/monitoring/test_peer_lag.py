"""The ship window's lag at its end (``peer_replication_lag``) on real region servers, ZooKeeper and WAL files:
it reads only the given peers' queues and opens only their WALs, and gives the ``replicationLag`` the full
status gives those peers on the same state."""

from __future__ import annotations

import time
import uuid

import pytest
from support import add_peer, create_table

import replication.monitoring.status as status_module
from replication.monitoring.status import peer_replication_lag, replication_status
from replication.zk.client import connected
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow


@pytest.fixture
def reads(monkeypatch):
    """The queues read (server, queue id) and the WALs opened, by the real code on the real files."""
    seen: dict[str, list] = {"queues": [], "wals": []}
    read_queues, open_wal = ReplicationQueueStorage.read_queues, status_module.open_wal

    def counted_read_queues(self, pairs, with_data=True):
        seen["queues"].extend(pairs)
        return read_queues(self, pairs, with_data)

    def counted_open_wal(path, **kwargs):
        seen["wals"].append(path)
        return open_wal(path, **kwargs)

    monkeypatch.setattr(ReplicationQueueStorage, "read_queues", counted_read_queues)
    monkeypatch.setattr(status_module, "open_wal", counted_open_wal)
    return seen


def test_peer_lag_reads_only_its_own_queues_and_agrees_with_the_status(pair, reads):
    add_peer(pair, "near")
    add_peer(pair, "far")
    table = f"t_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, table, ("f", 1))
    with pair.source.client() as client:
        for i in range(30):
            client.put(table, b"r%03d" % i, b"f", b"q", b"v")
    time.sleep(0.5)
    now = int(time.time() * 1000)
    with connected(pair.source_key) as zk:
        lags = peer_replication_lag(zk, pair.source_key, pair.conf, ["near"], now_ms=now)
        own_queues, own_wals = list(reads["queues"]), list(reads["wals"])
        reads["queues"].clear(), reads["wals"].clear()
        status = replication_status(zk, pair.source_key, pair.conf, now_ms=now)
        every_peer = peer_replication_lag(zk, pair.source_key, pair.conf, now_ms=now)

    near = status.queues_of(["near"])
    assert len(near) == len(pair.source.servers) and len(status.queues_of(["far"])) == len(near)
    assert lags == {"near": status.peers["near"].replicationLag}
    assert lags["near"] > 0, "the puts are not shipped: the peer lags"
    assert every_peer == {pid: peer.replicationLag for pid, peer in status.peers.items()}
    # only near's queues were read, and only the WALs of near's queues opened
    assert sorted(own_queues) == sorted((q.replicator, q.queue_id) for q in near)
    assert {ReplicationQueueInfo.parse(queue_id).peer_id for _, queue_id in own_queues} == {"near"}
    assert 0 < len(own_wals) <= sum(len(q.wals) for q in near)
    # the full status reads every peer's queues and opens their WALs too (far's queue the same WALs)
    assert {ReplicationQueueInfo.parse(queue_id).peer_id for _, queue_id in reads["queues"]} == {"near", "far"}
    assert len(reads["wals"]) > len(own_wals)
