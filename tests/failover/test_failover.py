"""Failover of dead region servers' queues and the log cleaner, on real clusters (issue: failover/cleaner)."""

from __future__ import annotations

import os
import random
import threading
import time
import uuid

import pytest
from support import add_peer, create_table, cycle, queue_snapshot, set_peer_state, table_state, write_load

from replication.cleaner import clean_once
from replication.cluster.source_cluster import open_source
from replication.failover import failover_once, find_dead_servers
from replication.wal.model import Cell, CellType
from replication.wal.names import wal_dir, wal_file_name
from replication.zk.client import connect, connected
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def peer_1(pair):
    add_peer(pair, "1")
    return "1"


def failover(pair, rng=None, **overrides):
    conf = pair.conf.with_overrides(overrides) if overrides else pair.conf
    with connected(pair.source_key) as zk:
        return failover_once(zk, pair.source_key, conf, rng=rng)


def _failover_records(pair) -> list[dict]:
    """The failover records (dead server, claimer, claimed_ms) hbrep kept for the source."""
    from replication.fs import get_filesystem
    from replication.monitoring.metrics import MetricsStore

    return MetricsStore(*get_filesystem(pair.source.root)).load().failovers


def test_region_server_killed_during_load_then_failover_ship_equal(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    stop, acked = threading.Event(), []
    writer = threading.Thread(target=write_load, args=(pair.source, table, stop, acked))
    writer.start()
    try:
        while len(acked) < 200:
            time.sleep(0.05)
        victim = pair.source.servers[0]
        pair.source.kill(victim)
        time.sleep(0.5)
    finally:
        stop.set()
        writer.join(timeout=60)
    pair.source.wait_until_dead(victim)
    report = failover(pair)
    outcome = {s.server: s for s in report.servers}[victim]
    assert outcome.action == "claimed" and outcome.claimer in pair.source.live_servers()
    assert outcome.moved == {"1": f"1-{victim}"}
    # the claim did not wait for the log split: it was recorded before the replayed edits' files were written
    (record,) = [r for r in _failover_records(pair) if r["dead_server"] == victim]
    assert outcome.recovery is not None and outcome.recovery.files_written, "the kill left edits to replay"
    assert all(record["claimed_ms"] <= os.stat(path).st_mtime_ns / 1e6 for path in outcome.recovery.files_written)
    cycle(pair, spark)
    snapshot = queue_snapshot(pair)
    assert victim not in snapshot.replicators
    assert all(not q.queue_id.startswith("1-") for q in snapshot.queues()), "drained recovered queue is deleted"
    source_state = table_state(spark, pair.source, table)
    assert {row for row, *_ in source_state} >= set(acked), "every acknowledged row survived the kill"
    assert table_state(spark, pair.peer, table) == source_state


def test_disabled_peer_keeps_its_wals_from_the_cleaner(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    set_peer_state(pair, "1", enabled=False)
    try:
        with pair.source.client() as client:
            client.put(table, b"kept", b"f1", b"q", b"v")
            client.flush(table)
            for server in pair.source.live_servers():
                client.roll_wal(server)
            client.flush(table)  # every edit flushed: the rolled WALs are archived to oldWALs
        queued = queue_snapshot(pair).all_wals()
        conf = pair.conf.with_overrides({"hbase.master.logcleaner.ttl": 0})
        time.sleep(0.05)
        with connected(pair.source_key) as zk:
            report = clean_once(zk, pair.source_key, conf, explain=True)
        deleted = {path.rsplit("/", 1)[-1] for path in report.deleted}
        assert not deleted & queued
        held = [p for p, why in report.kept.items() if why.startswith("held by queue")]
        assert held, report.kept
    finally:
        set_peer_state(pair, "1", enabled=True)
    cycle(pair, spark)
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_failover_and_cleaner_at_once_lose_nothing(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    new_server = pair.source.start_region_server()
    with pair.source.client() as client:
        client.batch(table, [Cell(f"r{i}".encode(), b"f1", b"q", 7000 + i, CellType.PUT, b"v") for i in range(100)])
    pair.source.kill(new_server)
    pair.source.wait_until_dead(new_server)
    conf = pair.conf.with_overrides({"hbase.master.logcleaner.ttl": 0})
    errors: list[BaseException] = []

    def run(target):
        try:
            with connected(pair.source_key) as zk:
                for _ in range(3):
                    target(zk, pair.source_key, conf)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(fn,)) for fn in (failover_once, clean_once)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    report = cycle(pair, spark)
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)


def test_failover_waits_sleep_before_failover_and_agrees_across_runs(pair, peer_1):
    server = pair.source.start_region_server()
    pair.source.kill(server)
    pair.source.wait_until_dead(server)
    first = failover(pair, **{"replication.sleep.before.failover": 60_000})
    waiting = {s.server: s for s in first.servers}[server]
    assert waiting.action == "waiting" and 0 < waiting.wait_ms <= 60_000
    second = failover(pair, **{"replication.sleep.before.failover": 60_000})
    later = {s.server: s for s in second.servers}[server]
    assert later.first_seen_dead_ms == waiting.first_seen_dead_ms  # the mark lives in ZooKeeper
    done = failover(pair, rng=random.Random(1))
    assert {s.server: s for s in done.servers}[server].action in ("claimed", "nothing-to-claim")


def test_a_server_between_its_first_wal_and_its_rs_znode_is_not_dead_until_its_session_ends(pair, peer_1):
    """The state a region server is in while it starts (announced, WAL directory and queue made, no ``rs``
    znode yet), held still: no failover pass takes it for dead; once its session ends, it is dead."""
    server = f"127.0.0.1,1,{int(time.time() * 1000)}"
    directory = wal_dir(pair.source.root, server)
    starting = connect(pair.source_key)
    try:
        LiveServerStorage(starting, pair.source.paths).announce_starting(server)
        os.makedirs(directory)
        ReplicationQueueStorage(starting, pair.source.paths).add_wal(server, peer_1, wal_file_name(server, 1))
        report = failover(pair, **{"replication.sleep.before.failover": 0})
        assert server not in {s.server for s in report.servers}, report
        assert os.path.isdir(directory)  # not "recovered" while it is being written
    finally:
        starting.stop()
        starting.close()
    try:
        with connected(pair.source_key) as zk:
            assert server in find_dead_servers(zk, open_source(zk, pair.source_key, pair.conf))[1]
    finally:
        with connected(pair.source_key) as zk:
            ReplicationQueueStorage(zk, pair.source.paths).delete_queue(server, peer_1)
            ReplicationQueueStorage(zk, pair.source.paths).remove_replicator_if_queue_is_empty(server)
        os.rmdir(directory)


def test_servers_started_while_failover_passes_run_at_sleep_zero_keep_their_wals(pair, peer_1):
    """Real region servers start while failover passes run back to back with no sleep before failover: none is
    ever taken for dead, and each keeps its first WAL in its own WAL directory (a fresh clone's suite once saw
    a pass archive a starting server's open WAL and claim its queue)."""
    stop, reports, errors = threading.Event(), [], []

    def passes() -> None:
        while not stop.is_set():
            try:
                reports.append(failover(pair, **{"replication.sleep.before.failover": 0}))
            except Exception as exc:  # reported below
                errors.append(exc)
                return

    failover(pair, **{"replication.executor.workers": 100})  # whatever earlier tests left dead is handled first
    runner = threading.Thread(target=passes)
    runner.start()
    started = []
    try:
        for _ in range(3):
            started.append(pair.source.start_region_server())
    finally:
        stop.set()
        runner.join(timeout=60)
    try:
        assert not errors and len(reports) >= 3, (errors, len(reports))
        taken = [(s.server, s.action) for r in reports for s in r.servers if s.server in started]
        assert not taken, taken
        for server in started:
            assert os.listdir(wal_dir(pair.source.root, server)), f"{server}'s WAL directory is empty"
    finally:
        for server in started:
            pair.source.kill(server)
        for server in started:
            pair.source.wait_until_dead(server)
        failover(pair, **{"replication.sleep.before.failover": 0, "replication.executor.workers": 100})


def test_executor_workers_bounds_how_many_dead_servers_one_run_handles(pair, peer_1, spark):
    """replication.executor.workers: a run recovers and claims at most that many dead servers; the others wait
    for the next run (already past replication.sleep.before.failover, so with no time left to wait)."""
    failover(pair, **{"replication.executor.workers": 100})  # whatever earlier tests left dead is handled first
    table = f"w_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    added = [pair.source.start_region_server() for _ in range(3)]
    written = {f"row{i:03d}".encode() for i in range(90)}
    with pair.source.client() as client:  # spread over every live server's regions, the three new ones too
        client.batch(table, [Cell(row, b"f1", b"q", 1000, CellType.PUT, row) for row in sorted(written)])
    for server in added:
        pair.source.kill(server)
    for server in added:
        pair.source.wait_until_dead(server)

    def handled(report) -> set[str]:
        outcomes = {s.server: s for s in report.servers if s.server in added}
        assert set(outcomes) <= set(added)
        done = {s for s, o in outcomes.items() if o.action != "waiting"}
        assert all(outcomes[s].action in ("claimed", "nothing-to-claim") for s in done), report
        assert all(o.wait_ms == 0 for s, o in outcomes.items() if s not in done)  # waiting for a worker, not time
        return done

    first = handled(failover(pair, **{"replication.executor.workers": 1}))
    assert len(first) == 1
    second = handled(failover(pair, **{"replication.executor.workers": 2}))
    assert len(second) == 2 and not first & second
    assert first | second == set(added)
    cycle(pair, spark)
    source_state = table_state(spark, pair.source, table)
    assert {row for row, *_ in source_state} == written  # the dead servers' edits were replayed
    assert table_state(spark, pair.peer, table) == source_state  # and their recovered queues shipped
