"""ZooKeeper requests per snapshot: full read vs incremental (change journal), for 100 / 1,000 / 10,000
queues with 1% of the queues changed since the previous snapshot. Requests are counted by the server
(``mntr``: zk_packets_received), znode reads by the client (multi_read.STATS)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

NAME = "zk_snapshot"
TITLE = "ZooKeeper requests per cycle: full vs incremental queue snapshot (replication/zk)"
PEERS = ("1", "2")
WALS_PER_QUEUE = 3


def _mntr(port: int) -> dict[str, int]:
    from replication.devstack.zookeeper import four_letter_word

    out = {}
    for line in four_letter_word("127.0.0.1", port, "mntr").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _build_tree(zk, paths, queues: int) -> list[tuple[str, str]]:
    """``queues`` queues (2 peers per replicator, 3 WALs each), created in multis of ~1,000 ops."""
    from replication.zk import codec

    zk.ensure_path(paths.queues)
    pairs = []
    ops: list[tuple[str, bytes]] = []
    for i in range(queues // len(PEERS)):
        server = f"rs{i:05d},16020,1"
        ops.append((paths.replicator(server), b""))
        for peer in PEERS:
            pairs.append((server, peer))
            ops.append((paths.queue(server, peer), b""))
            for n in range(WALS_PER_QUEUE):
                wal = f"rs{i:05d}%2C16020%2C1.{1700000000000 + n}"
                ops.append((paths.wal(server, peer, wal), codec.position_to_bytes(100 + n)))
    pending = []
    for start in range(0, len(ops), 1000):
        tx = zk.transaction()
        for path, data in ops[start : start + 1000]:
            tx.create(path, data)
        pending.append(tx.commit_async())
    for request in pending:
        failed = [r for r in request.get() if isinstance(r, Exception)]
        if failed:
            raise RuntimeError(f"creating the tree failed: {failed[0]!r}")
    return pairs


def _measure(port: int, action) -> tuple[float, int, int, object]:
    from replication.zk import multi_read

    before, ops_before = _mntr(port), multi_read.STATS["ops"]
    started = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - started
    after = _mntr(port)
    return (
        elapsed,
        after["zk_packets_received"] - before["zk_packets_received"],
        multi_read.STATS["ops"] - ops_before,
        result,
    )


def run(quick: bool) -> dict:
    """Full vs incremental snapshot requests and time; ratios incremental/full."""
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.fs import get_filesystem
    from replication.net import free_port
    from replication.zk.client import connect
    from replication.zk.layout import ZNodePaths
    from replication.zk.queue_snapshot import SnapshotCache, incremental_snapshot
    from replication.zk.queue_storage import ReplicationQueueStorage

    figures: dict[str, float | int] = {}
    ratios: dict[str, float] = {}
    sizes = [100, 1_000] if quick else [100, 1_000, 10_000]
    with tempfile.TemporaryDirectory() as tmp:
        server = ZooKeeperServer(Path(tmp) / "zk", free_port())
        server.start()
        try:
            zk = connect(f"127.0.0.1:{server.port}:/hbase")
            try:
                idle = _measure(server.port, lambda: None)[1]  # what mntr itself and pings add
                for size in sizes:
                    paths = ZNodePaths(parent=f"/snap-{size}")
                    pairs = _build_tree(zk, paths, size)
                    storage = ReplicationQueueStorage(zk, paths)
                    fs, root = get_filesystem(str(Path(tmp) / f"root-{size}"))
                    cache = SnapshotCache.for_root(fs, root)
                    seeded = incremental_snapshot(storage, cache)  # first cycle: full read, cache written
                    assert seeded.mode == "full"
                    changed = pairs[:: max(1, len(pairs) // max(1, size // 100))][: max(1, size // 100)]
                    for n, (replicator, queue_id) in enumerate(changed):
                        wal = storage.get_wals_in_queue(replicator, queue_id)[-1]
                        storage.set_wal_position(replicator, queue_id, wal, 10_000 + n)
                    full_s, full_req, full_ops, full = _measure(server.port, storage.snapshot)
                    inc_s, inc_req, inc_ops, inc = _measure(
                        server.port, lambda s=storage, c=cache: incremental_snapshot(s, c)
                    )
                    assert inc.mode == "incremental", inc.reason
                    assert inc.queues_read == len(changed)
                    assert inc.snapshot.as_dict() == full.as_dict()
                    label = f"{len(pairs):,} queues, {len(changed)} changed"
                    figures[f"{label}: full snapshot, ZooKeeper requests"] = full_req - idle
                    figures[f"{label}: incremental snapshot, ZooKeeper requests"] = inc_req - idle
                    figures[f"{label}: full snapshot, znodes read"] = full_ops
                    figures[f"{label}: incremental snapshot, znodes read"] = inc_ops
                    figures[f"{label}: full snapshot (s)"] = full_s
                    figures[f"{label}: incremental snapshot (s)"] = inc_s
                    ratios[f"{label}: incremental/full znodes read"] = inc_ops / full_ops
                    ratios[f"{label}: incremental/full time"] = inc_s / full_s
                    print(
                        f"[zk_snapshot] {label}: full {full_req - idle} req {full_ops} znodes {full_s:.3f}s; "
                        f"incremental {inc_req - idle} req {inc_ops} znodes {inc_s:.3f}s",
                        flush=True,
                    )
                    zk.delete(paths.parent, recursive=True)
            finally:
                zk.stop()
                zk.close()
        finally:
            server.stop()
    notes = [
        "Each size: 2 peers per replicator, 3 WALs per queue; 1% of the queues get a new position (journaled, "
        "as every hbrep writer does) after a first full snapshot wrote the cache. ZooKeeper requests = "
        "zk_packets_received delta from the server's mntr, minus the idle delta of one mntr pair. "
        "Both modes read with multiRead batches (up to 2,000 ops each), so the full read's request count "
        "is already ~N/700; the znodes read show the work proportional to what changed: the incremental "
        "read touches the journal head (3 ops), the new entries and the changed queues only.",
    ]
    return {
        "title": TITLE,
        "command": "make bench (bench/zk_snapshot.py)",
        "figures": figures,
        "ratios": ratios,
        "notes": notes,
    }
