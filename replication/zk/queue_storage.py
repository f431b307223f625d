"""Replication queues in ZooKeeper (``ZKReplicationQueueStorage``, spec §3.1, §3.2, §3.6).

``<parent>/replication/rs/<server>/<queueId>/<wal>``, the WAL znode's data being the position.
Bulk reads (:meth:`ReplicationQueueStorage.snapshot`, :meth:`get_all_wals`) are pipelined: many
``*_async`` requests are in flight at once (a bounded window), so 100k znodes are read in a few round
trips' time, and every response is one znode's data or one node's children, far below ``jute.maxbuffer``
(a single queue would need ~15k WALs before its child list nears 1 MB).
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, NotEmptyError

from replication.errors import HbrepError
from replication.zk import codec
from replication.zk.acl import acl_for, zk_access
from replication.zk.layout import CVERSION_PREFIX, LOCK, ZNodePaths

log = logging.getLogger(__name__)

PIPELINE_WINDOW = 2000  # requests in flight at once


class QueueStorageError(HbrepError):
    """A queue operation could not be done (the message names the znode)."""


def wal_sort_key(wal: str) -> tuple[int, str]:
    """Order WALs as HBase does: by the start timestamp after the last '.', then by name."""
    tail = wal.rsplit(".", 1)[-1]
    return (int(tail), wal) if tail.isdigit() else (0, wal)


def pipelined(calls: Iterable[Callable[[], Any]], window: int = PIPELINE_WINDOW) -> list[Any]:
    """Run async ZooKeeper calls with up to ``window`` in flight; results (or exceptions) in order."""
    results: list[Any] = []
    pending: deque[Any] = deque()

    def drain(keep: int) -> None:
        while len(pending) > keep:
            request = pending.popleft()
            try:
                results.append(request.get())
            except Exception as exc:
                results.append(exc)

    for call in calls:
        pending.append(call())
        if len(pending) >= window:
            drain(window // 2)
    drain(0)
    return results


def is_queue_id(name: str) -> bool:
    """False for the children of a replicator that are not queues (the claim ``lock``)."""
    return name != LOCK


def is_replicator(name: str) -> bool:
    """False for the transient ``cversion_*`` children of the queues root."""
    return not name.startswith(CVERSION_PREFIX)


@dataclass(frozen=True)
class WALState:
    """One WAL of a queue: its position and the znode version (for guarded updates)."""

    position: int
    version: int


@dataclass
class QueueState:
    """One queue: its znode version/cversion and its WALs (ordered oldest first)."""

    server: str
    queue_id: str
    version: int
    cversion: int
    wals: dict[str, WALState] = field(default_factory=dict)


@dataclass
class QueueSnapshot:
    """Every replicator → queue → WAL → (position, version), and the cversion of the queues root."""

    rs_cversion: int
    replicators: dict[str, dict[str, QueueState]] = field(default_factory=dict)

    def queues(self) -> Iterator[QueueState]:
        """Every queue of every replicator, replicators and queue ids sorted."""
        for server in sorted(self.replicators):
            for queue_id in sorted(self.replicators[server]):
                yield self.replicators[server][queue_id]

    def all_wals(self) -> set[str]:
        """Names of every WAL in any queue."""
        return {wal for queue in self.queues() for wal in queue.wals}

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: {server: {queue_id: {wal: position}}}."""
        return {
            server: {q: {w: s.position for w, s in queue.wals.items()} for q, queue in queues.items()}
            for server, queues in self.replicators.items()
        }


class ReplicationQueueStorage:
    """The queues of every replicator of one cluster."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths
        self._acl = acl_for(zk)

    # -- single queue --------------------------------------------------------------------------
    def add_wal(self, server: str, queue_id: str, wal: str) -> None:
        """Create the WAL znode (empty data = position 0) and its parents; no-op if it exists."""
        path = self.paths.wal(server, queue_id, wal)
        with zk_access(path), contextlib.suppress(NodeExistsError):
            self.zk.create(path, b"", acl=self._acl, makepath=True)

    def set_wal_position(self, server: str, queue_id: str, wal: str, position: int) -> None:
        """Write ``PBUF`` + ReplicationHLogPosition (only when position > 0, as HBase does).

        Raises QueueStorageError naming the znode when the WAL is not in the queue.
        """
        if position <= 0:
            return
        path = self.paths.wal(server, queue_id, wal)
        with zk_access(path):
            try:
                self.zk.set(path, codec.position_to_bytes(position))
            except NoNodeError:
                raise QueueStorageError(f"cannot set position {position}: no WAL znode {path}") from None

    def get_wal_position(self, server: str, queue_id: str, wal: str) -> int:
        """The recorded position (0 for an empty znode); QueueStorageError when the WAL is not queued."""
        path = self.paths.wal(server, queue_id, wal)
        with zk_access(path):
            try:
                data, _ = self.zk.get(path)
            except NoNodeError:
                raise QueueStorageError(f"no WAL znode {path}") from None
        return codec.parse_position(data, path)

    def get_wals_in_queue(self, server: str, queue_id: str) -> list[str]:
        """The queue's WAL names, oldest first ([] when the queue does not exist)."""
        with zk_access(self.paths.queue(server, queue_id)):
            try:
                return sorted(self.zk.get_children(self.paths.queue(server, queue_id)), key=wal_sort_key)
            except NoNodeError:
                return []

    def get_all_queues(self, server: str) -> list[str]:
        """The queue ids of one replicator, sorted (the claim lock is not a queue)."""
        with zk_access(self.paths.replicator(server)):
            try:
                return sorted(filter(is_queue_id, self.zk.get_children(self.paths.replicator(server))))
            except NoNodeError:
                return []

    def get_list_of_replicators(self) -> list[str]:
        """Every server with a node under the queues root, sorted."""
        with zk_access(self.paths.queues):
            try:
                return sorted(filter(is_replicator, self.zk.get_children(self.paths.queues)))
            except NoNodeError:
                return []

    def remove_queue(self, server: str, queue_id: str) -> None:
        """Delete the queue and its WALs (recursive; no error when it is already gone)."""
        with zk_access(self.paths.queue(server, queue_id)), contextlib.suppress(NoNodeError):
            self.zk.delete(self.paths.queue(server, queue_id), recursive=True)

    def remove_wal(self, server: str, queue_id: str, wal: str) -> None:
        """Delete one WAL znode (NoNode ignored, as ``removeWAL``)."""
        with zk_access(self.paths.queue(server, queue_id)), contextlib.suppress(NoNodeError):
            self.zk.delete(self.paths.wal(server, queue_id, wal))

    def remove_wals_before(self, server: str, queue_id: str, wal: str, inclusive: bool) -> list[str]:
        """Delete the queue's WALs older than ``wal`` (and ``wal`` itself when inclusive); returns them."""
        limit = wal_sort_key(wal)
        doomed = [
            w for w in self.get_wals_in_queue(server, queue_id) if wal_sort_key(w) < limit or (inclusive and w == wal)
        ]
        with zk_access(self.paths.queue(server, queue_id)):
            for result in pipelined(
                lambda w=w: self.zk.delete_async(self.paths.wal(server, queue_id, w)) for w in doomed
            ):
                if isinstance(result, Exception) and not isinstance(result, NoNodeError):
                    raise QueueStorageError(f"removing WALs of {self.paths.queue(server, queue_id)}: {result!r}")
        return doomed

    def remove_replicator_if_queue_is_empty(self, server: str) -> bool:
        """Delete ``rs/<server>`` when it has no children; True when it is gone."""
        with zk_access(self.paths.replicator(server)):
            try:
                self.zk.delete(self.paths.replicator(server))
            except NoNodeError:
                return True
            except NotEmptyError:
                return False
        return True

    # -- whole tree ----------------------------------------------------------------------------
    def get_all_wals(self, max_retries: int = 100) -> set[str]:
        """Every queued WAL name, consistent against claims: retried while the rs cversion moves (§3.6)."""
        with zk_access(self.paths.queues):
            for _ in range(max_retries):
                before = self._rs_cversion()
                if before is None:
                    return set()
                wals = {w for queue in self._list_tree(with_data=False)[1] for w in queue.wals}
                if self._rs_cversion() == before:
                    return wals
                log.info("queues root cversion changed while listing WALs; retrying")
        raise QueueStorageError(f"{self.paths.queues} kept changing over {max_retries} listings of every WAL")

    def snapshot(self) -> QueueSnapshot:
        """Every replicator → queue → WAL → (position, version), read with pipelined async calls.

        Consistent against claims in flight: repeated while the queues root's cversion moves.
        """
        with zk_access(self.paths.queues):
            for _ in range(100):
                before = self._rs_cversion()
                if before is None:
                    return QueueSnapshot(rs_cversion=-1)
                servers, queues = self._list_tree(with_data=True)
                snap = QueueSnapshot(rs_cversion=before, replicators={server: {} for server in servers})
                for queue in queues:
                    snap.replicators.setdefault(queue.server, {})[queue.queue_id] = queue
                if self._rs_cversion() == before:
                    return snap
        raise QueueStorageError(f"{self.paths.queues} kept changing during 100 snapshots")

    def _rs_cversion(self) -> int | None:
        stat = self.zk.exists(self.paths.queues)
        return None if stat is None else stat.cversion

    def _list_tree(self, with_data: bool) -> tuple[list[str], list[QueueState]]:
        zk, paths = self.zk, self.paths
        try:
            servers = sorted(filter(is_replicator, zk.get_children(paths.queues)))
        except NoNodeError:
            return [], []
        listed = pipelined(lambda s=s: zk.get_children_async(paths.replicator(s)) for s in servers)
        pairs = [
            (server, queue_id)
            for server, children in zip(servers, listed, strict=True)
            if not isinstance(children, NoNodeError)
            for queue_id in sorted(filter(is_queue_id, _ok(children, paths.replicator(server))))
        ]
        queue_lists = pipelined(lambda p=p: zk.get_children_async(paths.queue(*p), include_data=True) for p in pairs)
        queues: list[QueueState] = []
        for (server, queue_id), result in zip(pairs, queue_lists, strict=True):
            if isinstance(result, NoNodeError):
                continue  # claimed or removed meanwhile; the cversion check repeats the listing
            wals, stat = _ok(result, paths.queue(server, queue_id))
            queue = QueueState(server, queue_id, stat.version, stat.cversion)
            for wal in sorted(wals, key=wal_sort_key):
                queue.wals[wal] = WALState(0, -1)
            queues.append(queue)
        if with_data:
            targets = [(q, w) for q in queues for w in q.wals]
            datas = pipelined(lambda t=t: zk.get_async(paths.wal(t[0].server, t[0].queue_id, t[1])) for t in targets)
            for (queue, wal), result in zip(targets, datas, strict=True):
                path = paths.wal(queue.server, queue.queue_id, wal)
                if isinstance(result, NoNodeError):
                    del queue.wals[wal]  # removed meanwhile (finished WAL)
                    continue
                data, stat = _ok(result, path)
                queue.wals[wal] = WALState(codec.parse_position(data, path), stat.version)
        return servers, queues


def _ok(result: Any, path: str) -> Any:
    if isinstance(result, Exception):
        if type(result).__name__ == "NoAuthError":
            raise result
        raise QueueStorageError(f"reading {path}: {type(result).__name__}")
    return result
