"""The reference guide's chained failover, live: a claimer dies before draining a recovered queue."""

from __future__ import annotations

import uuid

import pytest
from support import add_peer, create_table, cycle, queue_snapshot, table_state

from replication.failover import failover_once
from replication.zk.client import connected

pytestmark = pytest.mark.slow


class Pick:
    """An rng whose choice() returns a given server (to decide who claims)."""

    def __init__(self, server: str):
        self.server = server

    def choice(self, servers):
        assert self.server in servers
        return self.server


def test_chained_failover_drains_the_double_named_queue(pair, spark):
    add_peer(pair, "2")
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    first, second, third = pair.source.servers[:3]
    with pair.source.client() as client:
        for i in range(60):
            client.put(table, f"r{i:03d}".encode(), b"f1", b"q", b"v")
    pair.source.kill(first)
    pair.source.wait_until_dead(first)
    with connected(pair.source_key) as zk:
        report = failover_once(zk, pair.source_key, pair.conf, rng=Pick(second))
    assert {s.server: s for s in report.servers}[first].moved == {"2": f"2-{first}"}
    # the claimer dies before any cycle drained the recovered queue
    pair.source.kill(second)
    pair.source.wait_until_dead(second)
    with connected(pair.source_key) as zk:
        report = failover_once(zk, pair.source_key, pair.conf, rng=Pick(third))
    moved = {s.server: s for s in report.servers}[second].moved
    assert moved == {"2": f"2-{second}", f"2-{first}": f"2-{first}-{second}"}
    queues = queue_snapshot(pair).replicators[third]
    assert f"2-{first}-{second}" in queues and f"2-{second}" in queues
    cycle(pair, spark)
    remaining = queue_snapshot(pair).replicators[third]
    assert set(remaining) == {"2"}, f"recovered queues must drain and be deleted: {sorted(remaining)}"
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)
