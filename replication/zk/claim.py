"""Claiming a dead region server's queues: the reference guide's ``lock`` protocol (spec §3.4, §3.5).

1. Claimers race to create ``rs/<dead>/lock`` with ``PBUF`` + ReplicationLock{lock_owner = the claimer's
   server name} as data (HBase 1.x stored the claimer's rs-znode path; the guide and our operators think
   in server names, and :func:`replication.zk.codec.parse_lock` reads either). ``NodeExists`` means
   another claimer is at work: the loser backs off (returns ``[]``, or waits up to ``wait`` seconds for
   the lock to go and tries again). ``NoNode`` means the dead server's node is already gone: nothing to do.
2. The winner moves the queues one at a time to ``rs/<claimer>/<queueId>-<dead>``. A queue is moved in
   ONE multi (check the lock; create the new queue; create each WAL znode with its position bytes copied
   unchanged; delete the old WAL znodes and the old queue; create+delete ``rs/cversion_<newQueueId>`` to
   bump the queues root's cversion so ``get_all_wals`` retries, as HBase 2.x does; add a journal entry
   naming both queues, see journal.py). A queue whose multi
   would exceed ``max_multi_bytes`` (far below ``jute.maxbuffer``, ~1 MB) is moved in chunks, each chunk
   one multi that creates a set of WALs at the destination and deletes the same WALs at the source.
   A queue whose peer no longer exists is deleted, not moved.
3. Finally one multi deletes the lock and ``rs/<dead>``.

Crash safety. Every multi moves WAL znodes atomically, so at every instant each WAL is in exactly one
queue, with its position bytes. A claimer killed between two chunks leaves part of a queue at the old
place and the rest in its own ``<queueId>-<dead>``; the next claimer moves the remainder (merging into
the destination when it reuses the same claimer name). Nothing is lost and nothing is duplicated.

Dead lock owners. The lock is an EPHEMERAL znode: it dies with the claimer's ZooKeeper session, so a
claimer that crashed blocks failover for at most its session timeout, never forever. (Taking over a
lock by looking for the owner's ``rs/<owner>`` znode would not work for operator-run claims, whose
claimer name is not a live region server.) A claimer whose session expired and reconnected (a zombie)
stops: before each multi it checks that the lock's ephemeral owner is its current session, and each
multi checks the lock's version; even if both checks were fooled, the per-WAL atomic moves above keep
every WAL in exactly one queue.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, NotEmptyError, RolledBackError, RuntimeInconsistency
from kazoo.protocol.serialization import CheckVersion, Create, Delete, Transaction
from kazoo.protocol.states import EventType

from replication.errors import HbrepError
from replication.zk import codec, journal
from replication.zk.acl import acl_for, zk_access
from replication.zk.layout import ZNodePaths, is_queue_id
from replication.zk.multi_read import Read, multi_read
from replication.zk.queue_info import ReplicationQueueInfo, recovered_queue_id
from replication.zk.queue_storage import ReplicationQueueStorage, wal_sort_key

log = logging.getLogger(__name__)

DEFAULT_MAX_MULTI_BYTES = 512 * 1024  # half of jute.maxbuffer (0xfffff), with generous per-op estimates
_OP_OVERHEAD = 64  # request header, ACL and length fields of one op, generously
MULTIS_IN_FLIGHT = 4  # chunk multis sent before the first answer is awaited
_SEQUENTIAL = 2  # CreateMode.PERSISTENT_SEQUENTIAL flags


class ClaimError(HbrepError):
    """A claim could not proceed (the message names the dead server and the znode)."""


class ServerStillAlive(ClaimError):
    """The server whose queues were to be claimed still has its live znode."""


class ClaimLockLost(ClaimError):
    """The claimer lost its lock (its session expired) half-way; the next claimer finishes the move."""


@dataclass
class ClaimedQueue:
    """One queue of the dead server: moved to ``new_queue_id`` (WAL → position), or deleted."""

    old_queue_id: str
    new_queue_id: str | None
    peer_id: str
    wals: dict[str, int] = field(default_factory=dict)
    deleted: bool = False


def lock_owner(zk: KazooClient, paths: ZNodePaths, dead_server: str) -> str | None:
    """Who holds the claim lock of ``dead_server`` (None when nobody)."""
    try:
        data, _ = zk.get(paths.lock(dead_server))
    except NoNodeError:
        return None
    return codec.parse_lock(data, paths.lock(dead_server))


def claim_queues(
    zk: KazooClient,
    paths: ZNodePaths,
    dead_server: str,
    claimer: str,
    peer_exists: Callable[[str], bool],
    *,
    wait: float = 0.0,
    check_alive: bool = True,
    max_multi_bytes: int = DEFAULT_MAX_MULTI_BYTES,
    after_chunk: Callable[[str, int], None] | None = None,
) -> list[ClaimedQueue]:
    """Move every queue of ``dead_server`` to ``claimer`` under the lock; [] when another claimer has it.

    ``peer_exists(peer_id)`` decides between moving and deleting a queue. ``after_chunk(queue_id,
    moved_so_far)`` is called after each committed multi (progress, tests). Raises ServerStillAlive
    when ``rs/<dead_server>`` exists (unless ``check_alive`` is False), ClaimLockLost when the lock
    vanished half-way.
    """
    if dead_server == claimer:
        raise ClaimError(f"server {claimer} cannot claim its own queues")
    with zk_access(paths.queues):
        if check_alive and zk.exists(paths.live_server(dead_server)):
            raise ServerStillAlive(f"server {dead_server} is alive ({paths.live_server(dead_server)} exists)")
        lock = _acquire(zk, paths, dead_server, claimer, wait)
        if lock is None:
            return []
        return _Claim(zk, paths, dead_server, claimer, peer_exists, lock, max_multi_bytes, after_chunk).run()


def _acquire(zk: KazooClient, paths: ZNodePaths, dead: str, claimer: str, wait: float) -> int | None:
    """Create the ephemeral lock; its version, or None when the claim is someone else's (or done)."""
    deadline = time.monotonic() + wait
    acl = acl_for(zk)
    while True:
        if not zk.exists(paths.replicator(dead)):
            return None
        try:
            _, stat = zk.create(
                paths.lock(dead), codec.lock_to_bytes(claimer), acl=acl, ephemeral=True, include_data=True
            )
            # only the winner gets a replicator node, so losers leave no empty rs/<claimer> behind
            if not zk.exists(paths.replicator(claimer)):
                journal.commit(
                    zk,
                    paths,
                    lambda tx: tx.create(paths.replicator(claimer), b"", acl=acl),
                    [journal.replicator_ref(claimer)],
                    rs_delta=1,
                )  # NodeExists (a concurrent creation) is fine: the node is there either way
            return stat.version
        except NoNodeError:
            return None  # rs/<dead> went away: another claimer finished
        except NodeExistsError:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                log.info("queues of %s are being claimed by %s; backing off", dead, lock_owner(zk, paths, dead))
                return None
            gone = zk.handler.event_object()

            def on_change(event, gone=gone) -> None:
                if event.type == EventType.DELETED:
                    gone.set()

            if zk.exists(paths.lock(dead), watch=on_change):
                gone.wait(min(remaining, 1.0))


class _Claim:
    def __init__(self, zk, paths, dead, claimer, peer_exists, lock_version, max_bytes, after_chunk):
        self.zk: KazooClient = zk
        self.paths: ZNodePaths = paths
        self.dead: str = dead
        self.claimer: str = claimer
        self.peer_exists = peer_exists
        self.lock_version: int = lock_version
        self.max_bytes: int = max_bytes
        self.after_chunk = after_chunk
        self.acl = acl_for(zk)
        self.session_id = zk.client_id[0] if zk.client_id else None

    def run(self) -> list[ClaimedQueue]:
        claimed: list[ClaimedQueue] = []
        try:
            journal.ensure_root(self.zk, self.paths)
            for _ in range(100):
                queue_ids = self._queue_ids()
                if not queue_ids:
                    if self._finish():
                        return claimed
                    continue
                for queue_id in queue_ids:
                    claimed.append(self._claim_one(queue_id))
            raise ClaimError(f"queues of {self.dead} kept appearing while claiming them")
        except BaseException:
            self._release()
            raise

    def _queue_ids(self) -> list[str]:
        try:
            return sorted(filter(is_queue_id, self.zk.get_children(self.paths.replicator(self.dead))))
        except NoNodeError:
            return []

    def _check_lock(self) -> None:
        stat = self.zk.exists(self.paths.lock(self.dead))
        if stat is None or stat.ephemeralOwner != self.session_id or stat.version != self.lock_version:
            raise ClaimLockLost(f"lost the claim lock {self.paths.lock(self.dead)}; another claimer will finish")

    def _claim_one(self, queue_id: str) -> ClaimedQueue:
        info = ReplicationQueueInfo.parse(queue_id)
        old_queue = self.paths.queue(self.dead, queue_id)
        if not self.peer_exists(info.peer_id):
            log.info("peer %s of queue %s no longer exists: deleting the queue", info.peer_id, old_queue)
            wals = self._read_wals(queue_id)
            self._check_lock()
            ReplicationQueueStorage(self.zk, self.paths).delete_queue(self.dead, queue_id)
            return ClaimedQueue(queue_id, None, info.peer_id, {w: codec.parse_position(d) for w, d in wals}, True)
        new_id = recovered_queue_id(queue_id, self.dead)
        result = ClaimedQueue(queue_id, new_id, info.peer_id)
        for _attempt in range(20):
            wals = self._read_wals(queue_id)
            if self._move(queue_id, new_id, wals, result):
                return result
        raise ClaimError(f"could not move {old_queue}: it kept changing")

    def _read_wals(self, queue_id: str) -> list[tuple[str, bytes]]:
        try:
            names = sorted(self.zk.get_children(self.paths.queue(self.dead, queue_id)), key=wal_sort_key)
        except NoNodeError:
            return []
        datas = multi_read(self.zk, [Read("data", self.paths.wal(self.dead, queue_id, w)) for w in names])
        out = []
        for name, result in zip(names, datas, strict=True):
            if isinstance(result, NoNodeError):
                continue
            if isinstance(result, Exception):
                raise result
            out.append((name, result[0]))
        return out

    def _move(self, queue_id: str, new_id: str, wals: list[tuple[str, bytes]], result: ClaimedQueue) -> bool:
        """Move the WALs in as few multis as fit; False when the queue changed under us (re-read).

        Up to MULTIS_IN_FLIGHT chunk multis are pipelined: each is atomic on its own and moves a
        disjoint set of WALs, so a failed chunk (the queue changed) leaves its WALs at the source while
        later chunks may still move theirs; every WAL is still in exactly one queue, and the caller
        re-reads what is left. The ops are built as kazoo request tuples directly (kazoo's
        TransactionRequest validates and logs each op, a third of the claim's time at 10,000 WALs).
        """
        paths, dead, me = self.paths, self.dead, self.claimer
        new_queue = paths.queue(me, new_id)
        need_queue = self.zk.exists(new_queue) is None
        chunks: list[list[tuple[str, bytes]]] = [[]]
        size = 0
        for name, data in wals:
            cost = len(paths.wal(me, new_id, name)) + len(paths.wal(dead, queue_id, name))
            cost += len(data) + 2 * _OP_OVERHEAD
            if chunks[-1] and size + cost > self.max_bytes:
                chunks.append([])
                size = 0
            chunks[-1].append((name, data))
            size += cost
        root = self.zk.chroot or ""
        lock_path = root + paths.lock(dead)
        marker = root + paths.cversion_marker(new_id)
        entry = journal.encode([journal.queue_ref(dead, queue_id), journal.queue_ref(me, new_id)], rs_delta=2)
        in_flight: list[tuple[list[tuple[str, bytes]], bool, Any]] = []
        ok = True
        self._check_lock()
        for index, chunk in enumerate(chunks):
            last = index == len(chunks) - 1
            ops: list[Any] = [CheckVersion(lock_path, self.lock_version)]
            creates_queue = need_queue and index == 0
            if creates_queue:
                ops.append(Create(root + new_queue, b"", self.acl, 0))
            for name, data in chunk:
                ops.append(Create(root + paths.wal(me, new_id, name), data, self.acl, 0))
                ops.append(Delete(root + paths.wal(dead, queue_id, name), -1))
            if last:
                ops.append(Delete(root + paths.queue(dead, queue_id), -1))
            ops.append(Create(marker, b"", self.acl, 0))
            ops.append(Delete(marker, -1))
            ops.append(Create(root + journal.entry_prefix(paths), entry, self.acl, _SEQUENTIAL))
            async_result = self.zk.handler.async_result()
            self.zk._call(Transaction(ops), async_result)
            in_flight.append((chunk, creates_queue, async_result))
            if len(in_flight) >= MULTIS_IN_FLIGHT:
                ok = self._settle(in_flight.pop(0), queue_id, new_queue, result) and ok
        while in_flight:
            ok = self._settle(in_flight.pop(0), queue_id, new_queue, result) and ok
        if not ok:
            return False
        if not wals:  # an empty queue: HBase deletes it
            outcome = journal.commit(
                self.zk,
                paths,
                lambda tx: tx.delete(paths.queue(dead, queue_id)),
                [journal.queue_ref(dead, queue_id)],
            )
            errors = [r for r in outcome if isinstance(r, Exception)]
            if errors and isinstance(errors[0], NotEmptyError):
                return False
        return True

    def _settle(self, sent: tuple[list[tuple[str, bytes]], bool, Any], queue_id: str, new_queue: str, result) -> bool:
        """Account for one chunk multi's outcome; False when it failed because the queue changed."""
        chunk, creates_queue, async_result = sent
        outcome = async_result.get()
        failures = [
            r
            for r in outcome
            if isinstance(r, Exception) and not isinstance(r, (RolledBackError, RuntimeInconsistency))
        ]
        if failures:
            if isinstance(outcome[0], Exception) and not isinstance(outcome[0], RolledBackError):
                raise ClaimLockLost(f"lost the claim lock {self.paths.lock(self.dead)}; another claimer will finish")
            if isinstance(failures[0], NoNodeError) and isinstance(outcome[-1], NoNodeError) and len(failures) == 1:
                journal.ensure_root(self.zk, self.paths)  # only the journal root was missing
            elif isinstance(failures[0], NodeExistsError) and not creates_queue:
                raise ClaimError(
                    f"cannot move {self.paths.queue(self.dead, queue_id)}: a WAL of it already exists in {new_queue}"
                )
            log.info("queue %s changed while moving it (%r); re-reading", queue_id, failures[0])
            return False
        for name, data in chunk:
            result.wals[name] = codec.parse_position(data, new_queue)
        if self.after_chunk is not None:
            self.after_chunk(queue_id, len(result.wals))
        return True

    def _finish(self) -> bool:
        """Delete the lock and rs/<dead> in one multi; False when a queue appeared meanwhile."""
        lock, replicator = self.paths.lock(self.dead), self.paths.replicator(self.dead)
        outcome = journal.commit(
            self.zk,
            self.paths,
            lambda tx: (tx.delete(lock, self.lock_version), tx.delete(replicator)),
            [journal.replicator_ref(self.dead)],
            rs_delta=1,
        )
        if not any(isinstance(r, Exception) for r in outcome):
            return True
        if any(isinstance(r, NotEmptyError) for r in outcome):
            return False
        raise ClaimLockLost(f"lost the claim lock {self.paths.lock(self.dead)} before finishing")

    def _release(self) -> None:
        # best effort: the ephemeral lock dies with the session anyway
        with contextlib.suppress(Exception):
            self.zk.delete(self.paths.lock(self.dead), self.lock_version)
