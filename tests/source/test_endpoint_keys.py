"""The endpoint's configuration keys change what it does (HBaseInterClusterReplicationEndpoint's keys):
``hbase.replication.source.maxthreads`` bounds the parallel lists (one sink call each),
``replication.source.shipedits.timeout`` is each sink call's timeout, and
``hbase.replication.drop.on.deleted.columnfamily`` drops the edits of a family gone on both sides."""

from __future__ import annotations

import random

import pytest

from replication.cluster.errors import NoSuchColumnFamilyOnPeer
from replication.config import Config
from replication.source.endpoint import ReplicationEndpoint, ShipFailed
from replication.source.filters import ShipEntry
from replication.source.sink_manager import ReplicationSinkManager
from replication.wal.model import WALKey

SERVERS = ["127.0.0.1,1,1", "127.0.0.1,2,1", "127.0.0.1,3,1", "127.0.0.1,4,1"]


class RecordingSinks:
    """Client factory: records each client's timeout and each call; fails every call with ``error`` if set."""

    def __init__(self, error: Exception | None = None):
        self.error = error
        self.timeouts: list[float] = []
        self.calls: list[int] = []

    def __call__(self, sink: str, token: str, timeout: float):
        self.timeouts.append(timeout)
        outer = self

        class Client:
            def replicate(self, batch, cluster_id):
                if outer.error is not None:
                    raise outer.error
                outer.calls.append(len(batch))

            def close(self):
                pass

        return Client()


def _endpoint(sinks: RecordingSinks, **conf) -> ReplicationEndpoint:
    quick = {"replication.source.sleepforretries": 1, "hbrep.source.ship.max.attempts": 2}
    config = Config.load(env={}, overrides={**quick, **conf})
    manager = ReplicationSinkManager("2", lambda: list(SERVERS), 1.0, 1, random.Random(3))
    return ReplicationEndpoint("2", manager, "token", config, "local", client_factory=sinks, sleep=lambda s: None)


def _entries(n: int) -> list[ShipEntry]:
    return [ShipEntry(WALKey(f"{i % 8:032x}".encode(), b"t1", i, 1000 + i), 1, b"x") for i in range(n)]


@pytest.mark.parametrize(("maxthreads", "calls"), [(1, 1), (2, 2), (10, 4)])
def test_maxthreads_bounds_the_parallel_lists(maxthreads, calls):
    sinks = RecordingSinks()
    _endpoint(sinks, **{"hbase.replication.source.maxthreads": maxthreads}).replicate(_entries(800))
    assert len(sinks.calls) == calls and sum(sinks.calls) == 800  # 4 sinks: never more lists than sinks


@pytest.mark.parametrize("timeout_ms", [1500, 60000])
def test_shipedits_timeout_is_each_sink_calls_timeout(timeout_ms):
    sinks = RecordingSinks()
    _endpoint(sinks, **{"replication.source.shipedits.timeout": timeout_ms}).replicate(_entries(10))
    assert sinks.timeouts and set(sinks.timeouts) == {timeout_ms / 1000}


def test_drop_on_deleted_columnfamily():
    error = NoSuchColumnFamilyOnPeer("column family t1:f does not exist on the peer", families=[("t1", "f")])
    with pytest.raises(ShipFailed, match="column family t1:f does not exist"):
        _endpoint(RecordingSinks(error)).replicate(_entries(3))  # the default: false, the queue stays stuck
    sinks = RecordingSinks(error)
    endpoint = _endpoint(sinks, **{"hbase.replication.drop.on.deleted.columnfamily": "true"})
    endpoint._table_gone_on_source = lambda table: table == "t1"
    endpoint.replicate(_entries(3))  # dropped: nothing left to ship, success
    assert sinks.calls == []


def _opened(peer_key: str, servers: list[str], sinks: RecordingSinks | object, **conf):
    """The endpoint ship_queue opens for a peer whose ZooKeeper (the session's real one) lists ``servers``
    as its live region servers (a failed call makes the endpoint re-read them there)."""
    from replication.source.manifest import PeerTask
    from replication.source.replication_source import open_peer_endpoint
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey
    from replication.zk.layout import ZNodePaths

    quick = {"replication.source.sleepforretries": 1, "hbrep.source.ship.max.attempts": 50}
    config = Config.load(env={}, overrides={**quick, **conf})
    rs = ZNodePaths(config, parent=ClusterKey.parse(peer_key).znode_parent).rs
    with connected(peer_key) as zk:
        for server in servers:
            zk.ensure_path(f"{rs}/{server}")
    peer = PeerTask("2", peer_key, True, {}, "7c4c4c5e-0000-4000-8000-000000000001", None, servers)
    return open_peer_endpoint(peer, config, "local", client_factory=sinks, sleep=lambda s: None)


@pytest.mark.parametrize(("ratio", "chosen"), [(0.2, 2), (0.5, 5), (1.0, 10)])
def test_ratio_is_the_share_of_the_peers_servers_shipped_to(cluster_key, ratio, chosen):
    servers = [f"127.0.0.1,{port},1" for port in range(1, 11)]
    used: set[str] = set()

    class Sinks(RecordingSinks):
        def __call__(self, sink, token, timeout):
            used.add(sink)
            return super().__call__(sink, token, timeout)

    endpoint, peer_servers = _opened(cluster_key, servers, Sinks(), **{"replication.source.ratio": ratio})
    try:
        for _ in range(60):
            endpoint.replicate(_entries(5))
        assert len(endpoint.sinks.sinks) == chosen and used <= set(endpoint.sinks.sinks)
    finally:
        endpoint.close()
        peer_servers.close()


@pytest.mark.parametrize("threshold", [1, 3])
def test_bad_sink_threshold_is_how_many_failures_drop_a_sink(cluster_key, threshold):
    from replication.cluster.errors import SinkUnavailable

    calls = {"bad": 0}

    class OneBad(RecordingSinks):
        def __call__(self, sink, token, timeout):
            if sink.endswith(",1,1"):

                class Bad:
                    def replicate(self, batch, cluster_id):
                        calls["bad"] += 1
                        raise SinkUnavailable("connection refused")

                    def close(self):
                        pass

                return Bad()
            return super().__call__(sink, token, timeout)

    servers = ["127.0.0.1,1,1", "127.0.0.1,2,1"]
    keys = {"replication.bad.sink.threshold": threshold, "replication.source.ratio": 1.0}  # both servers are sinks
    endpoint, peer_servers = _opened(cluster_key, servers, OneBad(), **keys)
    try:
        for _ in range(200):
            endpoint.replicate(_entries(5))
        # dropped after threshold + 1 failures in a row (ReplicationSinkManager), never chosen again
        assert calls["bad"] == threshold + 1 and endpoint.sinks.sinks == ["127.0.0.1,2,1"]
    finally:
        endpoint.close()
        peer_servers.close()
