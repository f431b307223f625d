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
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage

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
    """Apply one queue's result in a single version-guarded multi (see module doc and
    :meth:`ReplicationQueueStorage.set_wal_positions`, which builds it)."""
    record = QueueCommit(result.key, result.peer_id, committed=False)
    finished: dict[str, int] = {}
    positions: dict[str, tuple[int, int]] = {}
    for wal in result.wals:
        if wal.done:
            finished[wal.name] = wal.version
            record.removed_wals.append(wal.name)
        elif wal.end_position > wal.start_position:
            positions[wal.name] = (wal.end_position, wal.version)
            record.positions[wal.name] = wal.end_position
    record.queue_deleted = result.drained
    if not (finished or positions or result.drained):
        record.committed = True
        record.note = "nothing to record"
        return record
    storage = ReplicationQueueStorage(zk, paths)
    refused = storage.set_wal_positions(
        result.replicator,
        result.queue_id,
        positions,
        finished,
        result.drained,
        last_seq_ids=result.last_seq_ids,
        peer_id=result.peer_id,
    )
    if refused is not None:
        record.note = f"queue changed since the snapshot ({refused}): left to its current owner"
        record.positions.clear()
        record.removed_wals.clear()
        record.queue_deleted = False
        LOG.warning("Commit of queue %s skipped: %s", result.key, record.note)
        return record
    record.committed = True
    return record


def commit(zk: KazooClient, paths: ZNodePaths, results: list[QueueResult]) -> list[QueueCommit]:
    """Commit every queue result of a cycle (queues that shipped nothing are skipped)."""
    return [commit_queue(zk, paths, r) for r in results if r.status in ("ok", "waiting", "failed", "stuck")]
