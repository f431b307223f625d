"""``hbrep status replication``'s gauges on real region servers, ZooKeeper and a shipped cycle: the guide's
``sizeOfLogQueue`` (the WAL being read excluded), ``ageOfLastShippedOp`` per queue, per peer and globally
(the largest of the sources)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
from support import add_peer, create_table, cycle

from replication.monitoring.status import replication_status, to_prometheus
from replication.wal.model import Cell, CellType
from replication.zk.client import connected

pytestmark = pytest.mark.slow


def test_size_of_log_queue_and_age_of_last_shipped_op(pair, spark):
    add_peer(pair, "1")
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    with pair.source.client() as client:
        client.batch(table, [Cell(f"r{i:03d}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v") for i in range(60)])
    report = cycle(pair, spark)
    assert sum(p.rows_shipped for p in report.peers.values()) == 60
    rolled = pair.source.servers[0]
    with pair.source.client() as client:
        client.roll_wal(rolled)
        client.roll_wal(rolled)
    with connected(pair.source_key) as zk:
        status = replication_status(zk, pair.source_key, pair.conf)
    now = status.now_ms
    queues = {q.replicator: q for q in status.queues if q.peer_id == "1"}
    assert set(queues) == set(pair.source.servers)
    for queue in queues.values():
        # the oldest WAL of the queue is the one being read; only the ones behind it count
        assert queue.sizeOfLogQueue == len(queue.wals) - 1
    assert len(queues[rolled].wals) >= 3 and queues[rolled].sizeOfLogQueue >= 2
    peer = status.peers["1"]
    assert peer.sizeOfLogQueue == sum(q.sizeOfLogQueue for q in queues.values())
    assert status.global_source["source.sizeOfLogQueue"] == peer.sizeOfLogQueue
    ages = [q.ageOfLastShippedOp for q in queues.values() if q.ageOfLastShippedOp is not None]
    assert ages, "no queue shipped"
    shipped_at = [int(q.metrics["lastShippedWriteTime"]) for q in queues.values() if q.ageOfLastShippedOp]
    assert max(ages) == now - min(shipped_at)
    assert peer.ageOfLastShippedOp == max(ages)
    assert status.global_source["source.ageOfLastShippedOp"] == max(ages)
    text = to_prometheus(status)
    assert f'hbrep_peer_ageOfLastShippedOp{{peer_id="1",state="ENABLED"}} {float(max(ages))}' in text
    printed = subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", str(pair.source_key), "status", "replication"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[1].startswith("global: sizeOfLogQueue=") and "ageOfLastShippedOp=" in lines[1]
    assert int(lines[1].split()[1].removeprefix("sizeOfLogQueue=")) == peer.sizeOfLogQueue
    peer_line = next(line for line in lines if line.startswith("peer 1 ENABLED"))
    assert "ageOfLastShippedOp=" in peer_line and "ageOfLastShippedOp=-" not in peer_line
