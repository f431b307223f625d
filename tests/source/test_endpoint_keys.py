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
