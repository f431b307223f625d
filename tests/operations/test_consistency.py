"""Consistency tokens on real clusters: region-server processes, real ZooKeeper, the Spark ship job.

Every "consistent" is checked against the peer's rows: the rows written before the token must be
there; and every "pending" against them too where the last edit before the token is not there yet.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from support import add_peer, create_table, cycle, queue_snapshot, set_peer_state, table_state, write_load

from replication.failover import failover_once
from replication.operations.consistency import ConsistencyTokenError, check_token, sweep_expired, take_token
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def peer_1(pair):
    add_peer(pair, "1")
    return "1"


def token(pair, peer_id: str = "1", tables=None, conf=None):
    with connected(pair.source_key) as zk:
        return take_token(zk, pair.source_key, conf or pair.conf, peer_id, tables)


def check(pair, token_id: str, conf=None):
    with connected(pair.source_key) as zk:
        return check_token(zk, pair.source_key, conf or pair.conf, token_id)


def rows_of(spark, cluster, table: str) -> set[bytes]:
    return {row for row, *_ in table_state(spark, cluster, table)}


class Load:
    """A writer thread on ``table`` while the block runs; ``acked`` holds every acknowledged row."""

    def __init__(self, cluster, table: str):
        self.stop, self.acked = threading.Event(), []
        self.thread = threading.Thread(target=write_load, args=(cluster, table, self.stop, self.acked))

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def wait_for(self, rows: int) -> None:
        deadline = time.monotonic() + 60
        while len(self.acked) < rows:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the write load stalled"
            time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=60)


def test_token_under_load_is_pending_until_the_last_edit_before_it_is_on_the_peer(pair, peer_1, spark):
    loaded, last = f"t_{uuid.uuid4().hex[:6]}", f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, loaded, ("f1", 1))
    create_table(pair.source, last, ("f1", 1))  # not on the peer yet: its edits cannot ship
    with Load(pair.source, loaded) as load:
        load.wait_for(200)
        with pair.source.client() as client:
            client.put(last, b"the-last-edit", b"f1", b"q", b"v")
        before = set(load.acked)  # acknowledged before the token is taken
        record = token(pair)
        after_rows = len(load.acked) + 100
        load.wait_for(after_rows)  # and more writes after it
    assert record.wals and record.queues == len(pair.source.servers)
    first = check(pair, record.token)
    assert not first.consistent and sum(p.bytes for p in first.pending) > 0
    assert first.recorded_wals == len(record.wals)

    report = cycle(pair, spark)  # the queues holding the-last-edit fail: the peer has no such table
    assert any(q.status == "failed" and last in (q.error or "") for q in report.queues), report.queues
    create_table(pair.peer, last, ("f1", 1))
    assert rows_of(spark, pair.peer, last) == set()  # the last edit before the token is not on the peer ...
    pending = check(pair, record.token)
    assert not pending.consistent  # ... and the token says so
    assert {p.recorded_queue for p in pending.pending} <= {f"{w.replicator}/{w.queue_id}" for w in record.wals}

    report = cycle(pair, spark)
    assert all(q.status == "ok" for q in report.queues), report.queues
    done = check(pair, record.token)
    assert done.consistent and done.pending == [], done.as_dict()
    assert rows_of(spark, pair.peer, last) == {b"the-last-edit"}
    assert before <= rows_of(spark, pair.peer, loaded)


def test_token_for_some_tables_ignores_edits_of_others(pair, peer_1, spark):
    shipped, blocked = f"t_{uuid.uuid4().hex[:6]}", f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, shipped, ("f1", 1))
    create_table(pair.source, blocked, ("f1", 1))
    with pair.source.client() as client:
        client.batch(shipped, [Cell(f"s{i}".encode(), b"f1", b"q", 1, CellType.PUT, b"v") for i in range(30)])
    cycle(pair, spark)
    assert rows_of(spark, pair.peer, shipped) == {f"s{i}".encode() for i in range(30)}
    with pair.source.client() as client:
        client.batch(blocked, [Cell(f"x{i}".encode(), b"f1", b"q", 1, CellType.PUT, b"v") for i in range(30)])
    only_shipped = token(pair, tables=[shipped])
    everything = token(pair)
    assert only_shipped.tables == [shipped]
    assert check(pair, only_shipped.token).consistent  # nothing of `shipped` is unshipped
    assert not check(pair, everything.token).consistent  # the edits of `blocked` are
    cycle(pair, spark)  # fails: `blocked` is not on the peer
    assert not check(pair, everything.token).consistent
    create_table(pair.peer, blocked, ("f1", 1))
    cycle(pair, spark)
    assert check(pair, everything.token).consistent
    assert rows_of(spark, pair.peer, blocked) == {f"x{i}".encode() for i in range(30)}
    with pytest.raises(ConsistencyTokenError, match="table nosuch does not exist"):
        token(pair, tables=["nosuch"])


def test_token_is_satisfied_after_the_peer_is_disabled_then_enabled(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    rows = {f"d{i:03d}".encode() for i in range(50)}
    set_peer_state(pair, "1", enabled=False)
    try:
        with pair.source.client() as client:
            client.batch(table, [Cell(r, b"f1", b"q", 1, CellType.PUT, r) for r in sorted(rows)])
        record = token(pair)
        cycle(pair, spark)  # a disabled peer ships nothing
        assert not check(pair, record.token).consistent
        assert rows_of(spark, pair.peer, table) == set()
    finally:
        set_peer_state(pair, "1", enabled=True)
    cycle(pair, spark)
    assert check(pair, record.token).consistent
    assert rows_of(spark, pair.peer, table) == rows


def test_unknown_malformed_and_expired_tokens_are_errors_and_expired_records_go(pair, peer_1):
    with pytest.raises(ConsistencyTokenError, match="malformed consistency token 'nope'"):
        check(pair, "nope")
    with pytest.raises(ConsistencyTokenError, match="unknown consistency token ct-9999999999999-0123456789abcdef"):
        check(pair, "ct-9999999999999-0123456789abcdef")
    with pytest.raises(ConsistencyTokenError, match="peer '9' does not exist"):
        token(pair, "9")
    short = pair.conf.with_overrides({"hbrep.consistency.token.ttl.ms": "1"})
    expired = token(pair, conf=short)
    paths = ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)
    with connected(pair.source_key) as zk:
        assert zk.exists(paths.consistency_token(expired.token))
        time.sleep(0.01)
        with pytest.raises(ConsistencyTokenError, match=f"consistency token {expired.token} expired at"):
            check_token(zk, pair.source_key, pair.conf, expired.token)
        assert not zk.exists(paths.consistency_token(expired.token)), "a check removes the expired record"
        again = token(pair, conf=short)
        time.sleep(0.01)
        kept = token(pair)  # taking a token sweeps the expired records
        names = set(zk.get_children(paths.consistency_tokens))
        assert again.token not in names and kept.token in names
        assert sweep_expired(zk, paths) == 0


def test_token_follows_a_queue_claimed_by_failover(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    cycle(pair, spark)  # start from shipped queues
    with Load(pair.source, table) as load:
        load.wait_for(300)
        before = set(load.acked)
        record = token(pair)
        load.wait_for(len(load.acked) + 40)
    recorded = {w.replicator for w in record.wals}
    victim = sorted(recorded)[0]
    pair.source.kill(victim)  # SIGKILL: no trailer, its queue waits for a claimer
    pair.source.wait_until_dead(victim)
    with connected(pair.source_key) as zk:
        outcome = {s.server: s for s in failover_once(zk, pair.source_key, pair.conf).servers}[victim]
    assert outcome.action == "claimed" and outcome.moved == {"1": f"1-{victim}"}
    pending = check(pair, record.token)
    assert not pending.consistent
    followed = [p for p in pending.pending if p.recorded_queue == f"{victim}/1"]
    assert followed and all(p.queue == f"{outcome.claimer}/1-{victim}" for p in followed), pending.as_dict()

    cycle(pair, spark)
    assert all(not q.queue_id.startswith("1-") for q in queue_snapshot(pair).queues()), "recovered queue drained"
    assert check(pair, record.token).consistent
    assert before <= rows_of(spark, pair.peer, table)


def test_a_peer_removed_after_the_token_is_an_error_not_consistent(pair, peer_1):
    # Last in the module: adding and removing peer 2 changes every replicator's queues.
    add_peer(pair, "2")
    record = token(pair, "2")
    paths = ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)
    with connected(pair.source_key) as zk:
        ReplicationPeerStorage(zk, paths).remove_peer("2")
    with pytest.raises(ConsistencyTokenError, match="peer '2' was removed after the token was taken"):
        check(pair, record.token)
    add_peer(pair, "2")  # the same id again is another peer: its queues restarted from nothing
    with pytest.raises(ConsistencyTokenError, match="peer '2' was removed after the token was taken"):
        check(pair, record.token)
    with connected(pair.source_key) as zk:
        ReplicationPeerStorage(zk, paths).remove_peer("2")
