"""Replicated through and lag targets, per peer and per table, on real ZooKeeper and embedded clusters:
the time stops at the first unshipped edit of each table, moves with the clock when nothing is pending
(the heartbeat), and a lag target is missed while an edit older than it waits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest
from support import add_peer, create_table, cycle

from replication.monitoring.lag_targets import LagTargets, get_lag_targets, missed_targets
from replication.monitoring.replicated_through import record, replicated_through
from replication.monitoring.status import replication_status
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths

pytestmark = pytest.mark.slow


def now_ms() -> int:
    return int(time.time() * 1000)


def through(pair, peer_id: str):
    with connected(pair.source_key) as zk:
        return replicated_through(zk, pair.source_key, pair.conf, peer_id)


def hbrep(pair, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line as users run it."""
    return subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", str(pair.source_key), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_replicated_through_per_table_stops_at_the_first_unshipped_edit_and_moves_when_idle(pair, spark):
    busy, idle = f"busy_{uuid.uuid4().hex[:6]}", f"idle_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, busy, ("f", 1))
        create_table(cluster, idle, ("f", 1))
    add_peer(pair, "rt")
    cycle(pair, spark)  # whatever was queued before: shipped
    before_writes = now_ms()
    with pair.source.client() as client:
        for i in range(30):
            client.put(busy, b"r%03d" % i, b"f", b"q", b"v")
    after_writes = now_ms()
    time.sleep(1.5)

    pending = through(pair, "rt")
    assert pending.tables[busy] < after_writes
    assert pending.tables[busy] >= before_writes - 1  # the first unshipped edit of busy, less 1 ms
    assert pending.tables[idle] > after_writes  # nothing of idle pending: read time less the margin
    assert pending.through_ms == min(pending.tables.values()) == pending.tables[busy]
    assert pending.pending_queues

    cycle(pair, spark)
    shipped = through(pair, "rt")
    assert shipped.tables[busy] > after_writes and not shipped.pending_queues
    time.sleep(1.5)
    later = through(pair, "rt")
    assert later.through_ms - shipped.through_ms >= 1000, "with nothing written the time still moves"

    with connected(pair.source_key) as zk:
        paths = ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)
        assert record(zk, paths, pending) is None  # the peer's first record replaces nothing
        previous = record(zk, paths, later)
        assert previous is not None and previous.tables[busy] == pending.tables[busy]

    out = hbrep(pair, "replicated_through", "rt", "--json")
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)["tables"]) >= {busy, idle}


def test_a_lag_target_is_missed_while_an_older_edit_waits(pair, spark):
    table = f"target_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    add_peer(pair, "lt")
    cycle(pair, spark)
    assert hbrep(pair, "set_lag_target", "lt", table, "1000").returncode == 0
    assert hbrep(pair, "set_lag_target", "lt", "60000").returncode == 0
    with pair.source.client() as client:
        client.put(table, b"late", b"f", b"q", b"v")
    time.sleep(2.5)  # older than the table's 1 s target, not than the peer's minute

    with connected(pair.source_key) as zk:
        paths = ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)
        targets = get_lag_targets(zk, paths, "lt")
        assert targets == LagTargets(60000, {table: 1000})
        missed = missed_targets(replicated_through(zk, pair.source_key, pair.conf, "lt"), targets, now_ms())
        status = replication_status(zk, pair.source_key, pair.conf)
    assert [(m.table, m.target_ms) for m in missed] == [(table, 1000)]
    row = status.peers["lt"].tables[table]
    assert row.target_missed and row.lag_ms > 1000 and row.lag_target_ms == 1000
    assert [(m.table, m.target_ms) for m in status.peers["lt"].missed_lag_targets] == [(table, 1000)]
    text = hbrep(pair, "status", "replication").stdout
    assert f"table {table}:" in text and "TARGET MISSED" in text

    cycle(pair, spark)  # shipped: the target holds again
    with connected(pair.source_key) as zk:
        assert not replication_status(zk, pair.source_key, pair.conf).peers["lt"].tables[table].target_missed
    assert hbrep(pair, "set_lag_target", "lt", table, "0").returncode == 0  # 0 clears
    with connected(pair.source_key) as zk:
        assert get_lag_targets(zk, paths, "lt").tables == {}


def test_bad_lag_targets_are_refused_with_one_line(pair):
    bad = hbrep(pair, "set_lag_target", "nosuchpeer", "100")
    assert bad.returncode != 0 and bad.stderr.strip() == "hbrep: error: peer nosuchpeer does not exist"
    add_peer(pair, "bl")
    cases = (
        (("bl", "soon"), "is not a whole number"),
        (("bl", "--", "-5"), "positive number"),
        (("bl", "100"), "could never be met"),  # not above the 200 ms margin
    )
    for args, words in cases:
        out = hbrep(pair, "set_lag_target", *args)
        assert out.returncode != 0 and words in out.stderr, out.stderr
