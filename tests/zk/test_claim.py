from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replication.zk import codec
from replication.zk.claim import ClaimError, ServerStillAlive, claim_queues
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

S1, S2, S3 = "1.1.1.1,60020,123456780", "1.1.1.2,60020,123456790", "1.1.1.3,60020,123456630"
CLI = [sys.executable, "-m", "replication.cli"]
HERE = Path(__file__).resolve().parent


def guide_wal(server: str, ts: int) -> str:
    return f"{server.rsplit(',', 1)[0]}.{ts}"


def tree(zkc, paths) -> dict:
    """The whole queues tree with raw position bytes, read znode by znode."""
    out = {}
    for server in zkc.get_children(paths.queues):
        out[server] = {}
        for queue_id in zkc.get_children(paths.replicator(server)):
            out[server][queue_id] = {
                w: zkc.get(paths.wal(server, queue_id, w))[0] for w in zkc.get_children(paths.queue(server, queue_id))
            }
    return out


def setup_guide(zkc, paths) -> dict:
    ReplicationPeerStorage(zkc, paths).add_peer("2", ReplicationPeerConfig("peer-zk:2181:/hbase"))
    queues = ReplicationQueueStorage(zkc, paths)
    layout = {S1: [1234, 1265], S2: [1214, 1248, 1312], S3: [1280]}
    for server, stamps in layout.items():
        for i, ts in enumerate(stamps):
            queues.add_wal(server, "2", guide_wal(server, ts))
            if i == 0:  # "Contains a position"
                queues.set_wal_position(server, "2", guide_wal(server, ts), ts * 10)
    return layout


def test_reference_guide_failover_example(zkc, paths):
    setup_guide(zkc, paths)
    peers = ReplicationPeerStorage(zkc, paths)
    before = tree(zkc, paths)
    claimed = claim_queues(zkc, paths, S2, S3, peers.peer_exists)
    assert [(q.old_queue_id, q.new_queue_id) for q in claimed] == [("2", f"2-{S2}")]
    assert claimed[0].wals == {guide_wal(S2, 1214): 12140, guide_wal(S2, 1248): 0, guide_wal(S2, 1312): 0}
    assert sorted(zkc.get_children(paths.replicator(S3))) == ["2", f"2-{S2}"]
    assert not zkc.exists(paths.replicator(S2))

    claim_queues(zkc, paths, S3, S1, peers.peer_exists)
    after = tree(zkc, paths)
    assert after == {
        S1: {
            "2": before[S1]["2"],
            f"2-{S3}": before[S3]["2"],
            f"2-{S2}-{S3}": before[S2]["2"],  # position bytes copied unchanged
        }
    }
    assert after[S1][f"2-{S2}-{S3}"][guide_wal(S2, 1214)] == codec.position_to_bytes(12140)
    # a second claim of an already-claimed server finds nothing
    assert claim_queues(zkc, paths, S3, S2, peers.peer_exists) == []


def test_queue_of_removed_peer_is_deleted_not_moved(zkc, paths):
    setup_guide(zkc, paths)
    queues = ReplicationQueueStorage(zkc, paths)
    queues.add_wal(S2, "9", guide_wal(S2, 1214))
    claimed = claim_queues(zkc, paths, S2, S3, lambda peer: peer == "2")
    by_old = {q.old_queue_id: q for q in claimed}
    assert by_old["9"].deleted and by_old["9"].new_queue_id is None
    assert not by_old["2"].deleted
    assert queues.get_all_queues(S3) == ["2", f"2-{S2}"]


def test_live_server_and_self_claims_are_refused(zkc, paths):
    setup_guide(zkc, paths)
    zkc.create(paths.live_server(S2), b"", makepath=True, ephemeral=True)
    with pytest.raises(ServerStillAlive, match=S2):
        claim_queues(zkc, paths, S2, S3, lambda _p: True)
    with pytest.raises(ClaimError, match="its own"):
        claim_queues(zkc, paths, S3, S3, lambda _p: True)


def test_loser_backs_off_while_the_lock_is_held(zkc, paths):
    setup_guide(zkc, paths)
    zkc.create(paths.lock(S2), codec.lock_to_bytes(S1), ephemeral=True)
    assert claim_queues(zkc, paths, S2, S3, lambda _p: True) == []
    assert ReplicationQueueStorage(zkc, paths).get_all_queues(S2) == ["2"]


def test_large_queue_moves_in_chunks(zkc, paths):
    queues = ReplicationQueueStorage(zkc, paths)
    dead = "d,1,1"
    names = [f"d%2C1%2C1.{1000 + n}" for n in range(300)]
    for n, name in enumerate(names):
        queues.add_wal(dead, "2", name)
        queues.set_wal_position(dead, "2", name, n + 1)
    chunks = []
    claimed = claim_queues(
        zkc, paths, dead, "me,1,1", lambda _p: True, max_multi_bytes=8000, after_chunk=lambda q, n: chunks.append(n)
    )
    assert len(chunks) > 3 and chunks[-1] == 300
    assert claimed[0].wals == {name: n + 1 for n, name in enumerate(names)}
    assert queues.snapshot().as_dict() == {"me,1,1": {"2-d,1,1": {name: n + 1 for n, name in enumerate(names)}}}


def _make_dead_server(zkc, paths, dead: str, per_peer: int) -> set[tuple[str, str]]:
    peers = ReplicationPeerStorage(zkc, paths)
    for p in ("1", "2", "3"):
        peers.add_peer(p, ReplicationPeerConfig("peer:2181:/hbase"))
    wals = set()
    for p in ("1", "2", "3"):
        zkc.ensure_path(paths.queue(dead, p))
        requests = [
            zkc.create_async(paths.wal(dead, p, f"d%2C1%2C1.{1000 + n}"), codec.position_to_bytes(n + 1))
            for n in range(per_peer)
        ]
        for r in requests:
            r.get()
        wals |= {(p, f"d%2C1%2C1.{1000 + n}") for n in range(per_peer)}
    return wals


def _placements(zkc, paths) -> list[tuple[str, str, bytes]]:
    """(peer, wal, position bytes) for every WAL znode anywhere, duplicates kept."""
    from replication.zk.queue_info import ReplicationQueueInfo

    found = []
    for _server, queues in tree(zkc, paths).items():
        for queue_id, wals in queues.items():
            if queue_id == "lock":
                continue
            found += [(ReplicationQueueInfo.parse(queue_id).peer_id, w, d) for w, d in wals.items()]
    return found


@pytest.mark.slow
def test_five_racing_claimer_processes(zkc, paths, cluster_key):
    dead = "d,1,1"
    wals = _make_dead_server(zkc, paths, dead, 400)
    procs = [
        subprocess.Popen(
            [*CLI, "--cluster", cluster_key, "failover", "claim", dead, "--by", f"c{i},1,1", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(5)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    winners = [r for r in results if r["won"]]
    assert len(winners) == 1
    placed = _placements(zkc, paths)
    assert len(placed) == len(wals) == 1200
    assert {(p, w) for p, w, _ in placed} == wals
    assert all(d == codec.position_to_bytes(int(w.rsplit(".", 1)[1]) - 999) for _, w, d in placed)
    assert list(tree(zkc, paths)) == [winners[0]["claimer"]]


@pytest.mark.slow
def test_claimer_killed_half_way_then_second_claim_completes(zkc, paths, zk_server):
    dead = "d,1,1"
    wals = _make_dead_server(zkc, paths, dead, 100)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "claim_worker.py"), zk_server.hosts, paths.parent, dead, "c1,1,1", "3000", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parent.parent)},
    )
    moved_lines = 0
    for line in proc.stdout:
        moved_lines += line.startswith("moved")
        if moved_lines == 3:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    # half-way: part moved, part still with the dead server; every WAL in exactly one place
    placed = _placements(zkc, paths)
    assert len(placed) == len(wals) and {(p, w) for p, w, _ in placed} == wals
    assert zkc.get_children(paths.replicator("c1,1,1"))  # something was moved
    assert [q for q in zkc.get_children(paths.replicator(dead)) if q != "lock"]  # something was not
    started = time.monotonic()
    claimed = claim_queues(zkc, paths, dead, "c2,1,1", lambda _p: True, wait=30)
    assert claimed, "the dead claimer's ephemeral lock must expire with its session"
    assert time.monotonic() - started < 30
    placed = _placements(zkc, paths)
    assert len(placed) == len(wals) and {(p, w) for p, w, _ in placed} == wals
    assert all(d == codec.position_to_bytes(int(w.rsplit(".", 1)[1]) - 999) for _, w, d in placed)
    assert not zkc.exists(paths.replicator(dead))
