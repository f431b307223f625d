"""The ``commit`` step: record what the peer acknowledged, one guarded ZooKeeper multi per queue.

Per queue, in one transaction: set each advanced WAL's position, delete each finished WAL, and delete
the queue itself when it is a drained recovered queue. Every WAL operation carries the znode version
the snapshot saw, so a queue that was claimed by failover (its znodes moved) or committed already by a
retried task fails the multi as a whole and is left alone: its owner re-ships from its recorded
position, and applying the same cells again gives the same table. Committing twice is a no-op.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kazoo.client import KazooClient

from replication.source.manifest import QueueResult
from replication.zk import journal
from replication.zk.codec import position_to_bytes
from replication.zk.layout import ZNodePaths

LOG = logging.getLogger(__name__)


@dataclass
class QueueCommit:
    """What the commit did for one queue."""

    queue: str
    peer_id: str
    committed: bool
    positions: dict[str, int] = field(default_factory=dict)
    removed_wals: list[str] = field(default_factory=list)
    queue_deleted: bool = False
    note: str = ""


def commit_queue(zk: KazooClient, paths: ZNodePaths, result: QueueResult) -> QueueCommit:
    """Apply one queue's result in a single version-guarded multi (see module doc).

    A connection loss is retried with a fresh multi (kazoo's retry policy): if the lost attempt had
    been applied, the versions no longer match and the retry fails as a whole, a no-op.
    """
    record = QueueCommit(result.key, result.peer_id, committed=False)
    deletes: list[tuple[str, int]] = []
    updates: list[tuple[str, bytes, int]] = []
    for wal in result.wals:
        path = paths.wal(result.replicator, result.queue_id, wal.name)
        if wal.done:
            deletes.append((path, wal.version))
            record.removed_wals.append(wal.name)
        elif wal.end_position > wal.start_position:
            updates.append((path, position_to_bytes(wal.end_position), wal.version))
            record.positions[wal.name] = wal.end_position
    record.queue_deleted = result.drained
    if not (deletes or updates or result.drained):
        record.committed = True
        record.note = "nothing to record"
        return record

    def build(tx) -> None:
        for path, version in deletes:
            tx.delete(path, version=version)
        for path, data, version in updates:
            tx.set_data(path, data, version=version)
        if result.drained:
            tx.delete(paths.queue(result.replicator, result.queue_id))

    # journal.commit adds the change-journal entry to the same multi (see replication/zk/journal.py)
    outcomes = zk.retry(journal.commit, zk, paths, build, [journal.queue_ref(result.replicator, result.queue_id)])
    failures = [o for o in outcomes if isinstance(o, Exception)]
    if failures:
        real = [f for f in failures if type(f).__name__ != "RolledBackError"]
        record.note = (
            f"queue changed since the snapshot ({type(real[0]).__name__ if real else 'rolled back'}): "
            "left to its current owner"
        )
        record.positions.clear()
        record.removed_wals.clear()
        record.queue_deleted = False
        LOG.warning("Commit of queue %s skipped: %s", result.key, record.note)
        return record
    record.committed = True
    return record


def commit(zk: KazooClient, paths: ZNodePaths, results: list[QueueResult]) -> list[QueueCommit]:
    """Commit every queue result of a cycle (queues that shipped nothing are skipped)."""
    return [commit_queue(zk, paths, r) for r in results if r.status in ("ok", "failed", "stuck")]
