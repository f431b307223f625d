"""Retry and split rules of the endpoint, with a scripted sink client (the real gRPC sink is exercised
by the ship integration tests)."""

from __future__ import annotations

import random

import pytest

from replication.cluster.errors import SinkAuthError, SinkUnavailable, TableNotFoundOnPeer
from replication.config import Config
from replication.source.endpoint import ReplicationEndpoint, ShipFailed, split_by_region
from replication.source.filters import ShipEntry
from replication.source.sink_manager import ReplicationSinkManager
from replication.wal.model import WALKey

SERVERS = ["127.0.0.1,1,1", "127.0.0.1,2,1", "127.0.0.1,3,1", "127.0.0.1,4,1"]


def entries(n: int, regions: int = 5) -> list[ShipEntry]:
    return [ShipEntry(WALKey(f"{i % regions:032x}".encode(), b"t1", i, 1000 + i), 1, b"x") for i in range(n)]


class ScriptedSinks:
    """Client factory: each sink fails the first ``failures[sink]`` calls with ``error``."""

    def __init__(self, failures: dict[str, int] | None = None, error: Exception | None = None):
        self.failures = dict(failures or {})
        self.error = error or SinkUnavailable("connection refused")
        self.received: list[tuple[str, list]] = []

    def __call__(self, sink: str, token: str, timeout: float):
        outer = self

        class Client:
            def replicate(self, batch, cluster_id):
                if outer.failures.get(sink, 0) > 0 or outer.failures.get("*", 0) > 0:
                    key = sink if outer.failures.get(sink, 0) > 0 else "*"
                    outer.failures[key] -= 1
                    raise outer.error
                outer.received.append((sink, list(batch)))

            def close(self):
                pass

        return Client()


def endpoint(script: ScriptedSinks, sleeps: list[float], **conf) -> ReplicationEndpoint:
    config = Config.load(
        env={},
        overrides={
            "replication.source.sleepforretries": 100,
            "replication.source.maxretriesmultiplier": 3,
            "hbrep.source.ship.max.attempts": 6,
            **conf,
        },
    )
    manager = ReplicationSinkManager("2", lambda: list(SERVERS), 1.0, 1, random.Random(3))
    return ReplicationEndpoint("2", manager, "token", config, "local-id", client_factory=script, sleep=sleeps.append)


def test_split_keeps_a_region_in_one_list():
    lists = split_by_region(entries(500, regions=7), 3)
    seen: dict[bytes, int] = {}
    for index, chunk in enumerate(lists):
        for entry in chunk:
            assert seen.setdefault(entry.key.encoded_region_name, index) == index
    assert sum(len(c) for c in lists) == 500
    for chunk in lists:  # order within a region is kept
        seqs = [e.key.log_sequence_number for e in chunk]
        assert seqs == sorted(seqs)


def test_every_entry_delivered_once_across_parallel_lists():
    script, sleeps = ScriptedSinks(), []
    endpoint(script, sleeps).replicate(entries(450))
    delivered = sorted(key.log_sequence_number for _, batch in script.received for key, _count, _cells in batch)
    assert delivered == list(range(450))
    assert sleeps == []


def test_failures_back_off_with_growing_multiplier_then_succeed():
    script, sleeps = ScriptedSinks({"*": 3}), []
    ep = endpoint(script, sleeps)
    ep.replicate(entries(10))
    assert sleeps == [0.1, 0.2, 0.3]  # sleepforretries × multiplier, capped at maxretriesmultiplier=3
    assert ep.failed_batches == 3
    assert sum(len(b) for _, b in script.received) == 10


def test_gives_up_after_the_attempt_budget_with_clear_error():
    script, sleeps = ScriptedSinks({"*": 100}), []
    with pytest.raises(ShipFailed, match="peer 2: giving up after 6 attempts: connection refused"):
        endpoint(script, sleeps).replicate(entries(5))
    assert sleeps == [0.1, 0.2, 0.3, 0.3, 0.3]


def test_bad_token_is_not_retried():
    script, sleeps = ScriptedSinks({"*": 100}, SinkAuthError("bad cluster token")), []
    with pytest.raises(ShipFailed, match="rejected this cluster's token"):
        endpoint(script, sleeps).replicate(entries(5))
    assert sleeps == []


def test_missing_table_on_peer_fails_unless_dropped_and_gone_on_source():
    error = TableNotFoundOnPeer("table t1 does not exist on the peer", tables=["t1"])
    with pytest.raises(ShipFailed, match="table t1 does not exist"):
        endpoint(ScriptedSinks({"*": 100}, error), []).replicate(entries(3))
    script = ScriptedSinks({"*": 100}, error)
    ep = endpoint(script, [], **{"hbase.replication.drop.on.deleted.table": "true"})
    ep._table_gone_on_source = lambda table: table == "t1"
    ep.replicate(entries(3))  # dropped: nothing left to ship, success
    assert script.received == []


def test_a_changed_peer_server_list_is_noticed_after_a_failure():
    listing = [["127.0.0.1,1,1"]]
    manager = ReplicationSinkManager("2", lambda: list(listing[0]), 1.0, 10, random.Random(3))
    script, sleeps = ScriptedSinks({"127.0.0.1,1,1": 100}), []
    config = Config.load(env={}, overrides={"replication.source.sleepforretries": 10})
    endpoint = ReplicationEndpoint("2", manager, "t", config, "id", client_factory=script, sleep=sleeps.append)
    manager.choose_sinks()
    listing[0] = ["127.0.0.1,9,9"]  # the old server died, a new one joined
    endpoint.replicate(entries(3))
    assert [sink for sink, _ in script.received] == ["127.0.0.1,9,9"]
    assert len(sleeps) == 1
