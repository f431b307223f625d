"""Replication queues in ZooKeeper (``ZKReplicationQueueStorage``, spec §3.1, §3.2, §3.6).

``<parent>/replication/rs/<server>/<queueId>/<wal>``, the WAL znode's data being the position.
Bulk reads (:meth:`ReplicationQueueStorage.snapshot`, :meth:`get_all_wals`) use ZooKeeper's
``multiRead`` (multi_read.py): up to 2,000 reads per request, a few requests in flight, one level of
the tree at a time, so 100k znodes take ~50 requests and no response nears ``jute.maxbuffer`` (a
single queue would need ~15k WALs before its child list nears 1 MB).

Every change is one multi that also writes a change-journal entry (journal.py), so snapshots can be
incremental (queue_snapshot.py). HBase has no journal; its znodes and values are unchanged by it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import (
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
)

from replication.zk import codec, journal
from replication.zk.acl import acl_for, zk_access
from replication.zk.errors import QueueStorageError, checked
from replication.zk.layout import ZNodePaths, is_queue_id, is_replicator
from replication.zk.multi_read import Read, multi_read
from replication.zk.queue_snapshot import QueueSnapshot, QueueState, WALState

log = logging.getLogger(__name__)

_DELETES_PER_MULTI = 1000  # ~150 bytes per delete op: ~150 KB per multi, far below jute.maxbuffer


def wal_sort_key(wal: str) -> tuple[int, str]:
    """Order WALs as HBase does: by the start timestamp after the last '.', then by name."""
    tail = wal.rsplit(".", 1)[-1]
    return (int(tail), wal) if tail.isdigit() else (0, wal)


class ReplicationQueueStorage:
    """The queues of every replicator of one cluster."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths
        self._acl = acl_for(zk)

    # -- single queue --------------------------------------------------------------------------
    # Every change below is one multi that also adds a journal entry naming the queue (journal.py).
    def add_wal(self, server: str, queue_id: str, wal: str) -> None:
        """Create the WAL znode (empty data = position 0) and its parents; no-op if it exists.

        Parents are created inside the same multi as the WAL and its journal entry (first try the
        WAL alone; on NoNode add the queue; then the replicator), so no change escapes the journal.
        """
        paths = self.paths
        path = paths.wal(server, queue_id, wal)
        ref = journal.queue_ref(server, queue_id)
        with zk_access(path):
            for _ in range(10):
                for missing in (0, 1, 2):
                    creates = [paths.replicator(server), paths.queue(server, queue_id), path][2 - missing :]
                    refs = [ref, journal.replicator_ref(server)] if missing else [ref]
                    outcome = journal.commit(
                        self.zk,
                        paths,
                        lambda tx, creates=creates: [tx.create(p, b"", acl=self._acl) for p in creates],
                        refs,
                        rs_delta=1 if missing == 2 else 0,
                    )
                    error = _first_error(outcome)
                    if error is None:
                        return
                    if isinstance(error, NodeExistsError):
                        if outcome[-1] is error:
                            return  # the WAL is already queued
                        break  # a parent appeared meanwhile: start again from the WAL alone
                    if not isinstance(error, NoNodeError):
                        _raise(error, path)
                else:  # even the queues root is missing (a fresh cluster)
                    self.zk.ensure_path(paths.queues, acl=self._acl)
            raise QueueStorageError(f"cannot add WAL znode {path}: its parents kept changing")

    def set_wal_position(self, server: str, queue_id: str, wal: str, position: int) -> None:
        """Write ``PBUF`` + ReplicationHLogPosition (only when position > 0, as HBase does).

        Raises QueueStorageError naming the znode when the WAL is not in the queue.
        """
        if position <= 0:
            return
        path = self.paths.wal(server, queue_id, wal)
        with zk_access(path):
            data = codec.position_to_bytes(position)
            outcome = journal.commit(
                self.zk, self.paths, lambda tx: tx.set_data(path, data), [journal.queue_ref(server, queue_id)]
            )
            error = _first_error(outcome)
            if isinstance(error, NoNodeError):
                raise QueueStorageError(f"cannot set position {position}: no WAL znode {path}")
            if error is not None:
                _raise(error, path)

    def set_wal_positions(
        self,
        server: str,
        queue_id: str,
        positions: Mapping[str, tuple[int, int]],
        finished: Mapping[str, int],
        remove_queue: bool = False,
        *,
        last_seq_ids: Mapping[str, int] | None = None,
        peer_id: str = "",
    ) -> str | None:
        """Record one queue's progress in ONE multi guarded by the znode versions a snapshot saw.

        ``positions``: WAL -> (new position, version seen); ``finished``: WAL -> version seen, deleted;
        ``remove_queue``: the queue itself is deleted too (a drained recovered queue). The multi also
        carries the journal entry naming the queue. Returns None when applied, else why ZooKeeper
        refused it (a version moved: the queue was claimed by failover or committed already), in
        which case nothing was written. As ``ZKReplicationQueueStorage.setWALPosition``, which builds
        its own multi of the position and the serial peers' last pushed sequence ids.

        A connection loss is retried with a fresh multi (kazoo's retry policy): if the lost attempt had
        been applied, the versions no longer match and the retry fails as a whole, a no-op.
        """
        paths = self.paths
        seq_ops = self._last_seq_id_ops(last_seq_ids or {}, peer_id)

        def build(tx: TransactionRequest) -> None:
            for wal, version in finished.items():
                tx.delete(paths.wal(server, queue_id, wal), version=version)
            for wal, (position, version) in positions.items():
                tx.set_data(paths.wal(server, queue_id, wal), codec.position_to_bytes(position), version=version)
            if remove_queue:
                tx.delete(paths.queue(server, queue_id))
            for path, data, exists in seq_ops:
                if exists:
                    tx.set_data(path, data)
                else:
                    tx.create(path, data)

        outcome = self.zk.retry(journal.commit, self.zk, paths, build, [journal.queue_ref(server, queue_id)])
        failures = [o for o in outcome if isinstance(o, Exception)]
        if not failures:
            return None
        real = [f for f in failures if type(f).__name__ != "RolledBackError"]
        return type(real[0]).__name__ if real else "rolled back"

    def _last_seq_id_ops(self, last_seq_ids: Mapping[str, int], peer_id: str) -> list[tuple[str, bytes, bool]]:
        """(znode, data, exists) of each region's last pushed sequence id for ``peer_id``, parents made
        (ZKReplicationQueueStorage.addLastSeqIdsToOps: set when the znode exists, else create)."""
        ops = []
        for region, seq in sorted(last_seq_ids.items()):
            path = self.paths.last_pushed_sequence_id(region, peer_id)
            self.zk.ensure_path(path.rsplit("/", 1)[0])
            ops.append((path, codec.position_to_bytes(seq), self.zk.exists(path) is not None))
        return ops

    def get_last_sequence_id(self, region: str, peer_id: str) -> int | None:
        """The last pushed sequence id of ``region`` for ``peer_id`` (None when none is recorded)."""
        path = self.paths.last_pushed_sequence_id(region, peer_id)
        with zk_access(path):
            try:
                data, _ = self.zk.get(path)
            except NoNodeError:
                return None
        return codec.parse_position(data, path)

    def get_last_sequence_ids(self, regions: list[str], peer_id: str) -> dict[str, int]:
        """The last pushed sequence ids of those ``regions`` for ``peer_id`` that have one, read with the
        requests in flight together (one round trip's wait for many regions)."""
        pending = [(region, self.zk.get_async(self.paths.last_pushed_sequence_id(region, peer_id)))
                   for region in regions]  # fmt: skip
        out: dict[str, int] = {}
        for region, request in pending:
            path = self.paths.last_pushed_sequence_id(region, peer_id)
            with zk_access(path):
                try:
                    data, _ = request.get()
                except NoNodeError:
                    continue
            out[region] = codec.parse_position(data, path)
        return out

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
        """Delete the queue and its WALs (journaled chunks; no error when it is already gone)."""
        with zk_access(self.paths.queue(server, queue_id)):
            self.delete_queue(server, queue_id)

    def remove_wal(self, server: str, queue_id: str, wal: str) -> None:
        """Delete one WAL znode (NoNode ignored, as ``removeWAL``)."""
        path = self.paths.wal(server, queue_id, wal)
        with zk_access(path):
            outcome = journal.commit(
                self.zk, self.paths, lambda tx: tx.delete(path), [journal.queue_ref(server, queue_id)]
            )
            error = _first_error(outcome)
            if error is not None and not isinstance(error, NoNodeError):
                _raise(error, path)

    def remove_wals_before(self, server: str, queue_id: str, wal: str, inclusive: bool) -> list[str]:
        """Delete the queue's WALs older than ``wal`` (and ``wal`` itself when inclusive); returns them."""
        limit = wal_sort_key(wal)
        doomed = [
            w for w in self.get_wals_in_queue(server, queue_id) if wal_sort_key(w) < limit or (inclusive and w == wal)
        ]
        with zk_access(self.paths.queue(server, queue_id)):
            self.delete_wals(server, queue_id, doomed)
        return doomed

    def remove_replicator_if_queue_is_empty(self, server: str) -> bool:
        """Delete ``rs/<server>`` when it has no children; True when it is gone."""
        path = self.paths.replicator(server)
        with zk_access(path):
            outcome = journal.commit(
                self.zk, self.paths, lambda tx: tx.delete(path), [journal.replicator_ref(server)], rs_delta=1
            )
        error = _first_error(outcome)
        if error is None or isinstance(error, NoNodeError):
            return True
        if isinstance(error, NotEmptyError):
            return False
        _raise(error, path)
        return False

    # -- bulk deletes (journaled chunks far below jute.maxbuffer) ------------------------------
    def delete_queue(self, server: str, queue_id: str) -> list[str]:
        """Delete a queue and its WALs, each multi journaled; returns the WALs deleted ([] when gone).

        WALs go in chunks far below ``jute.maxbuffer``, then the empty queue node; a WAL added meanwhile
        (NotEmpty) is deleted in another round.
        """
        zk, paths = self.zk, self.paths
        queue_path = paths.queue(server, queue_id)
        removed: list[str] = []
        for _ in range(20):
            try:
                wals = zk.get_children(queue_path)
            except NoNodeError:
                return removed
            self.delete_wals(server, queue_id, wals)
            removed.extend(wals)
            outcome = journal.commit(zk, paths, lambda tx: tx.delete(queue_path), [journal.queue_ref(server, queue_id)])
            error = _first_error(outcome)
            if error is None or isinstance(error, NoNodeError):
                return removed
            if not isinstance(error, NotEmptyError):
                _raise(error, queue_path)
        raise QueueStorageError(f"cannot delete {queue_path}: WALs kept appearing")

    def delete_wals(self, server: str, queue_id: str, wals: list[str]) -> None:
        """Delete these WAL znodes in journaled multis (a WAL already gone is re-tried without it)."""
        zk, paths = self.zk, self.paths
        ref = [journal.queue_ref(server, queue_id)]
        remaining = list(wals)
        for _ in range(20):
            if not remaining:
                return
            failed: list[str] = []
            for start in range(0, len(remaining), _DELETES_PER_MULTI):
                chunk = remaining[start : start + _DELETES_PER_MULTI]
                outcome = journal.commit(
                    zk, paths, lambda tx, chunk=chunk: [tx.delete(paths.wal(server, queue_id, w)) for w in chunk], ref
                )
                error = _first_error(outcome)
                if error is None:
                    continue
                if not isinstance(error, NoNodeError):
                    _raise(error, paths.queue(server, queue_id))
                failed.extend(chunk)
            if not failed:
                return
            # some WAL of those chunks was gone already: keep only those still present
            present = (
                set(zk.get_children(paths.queue(server, queue_id)))
                if zk.exists(paths.queue(server, queue_id))
                else set()
            )
            remaining = [w for w in failed if w in present]
        raise QueueStorageError(f"removing WALs of {paths.queue(server, queue_id)}: they kept changing")

    # -- whole tree ----------------------------------------------------------------------------
    def get_all_wals(self, max_retries: int = 100) -> set[str]:
        """Every queued WAL name, consistent against claims: retried while the rs cversion moves (§3.6)."""
        with zk_access(self.paths.queues):
            for _ in range(max_retries):
                before = self.rs_cversion()
                if before is None:
                    return set()
                wals = {w for queue in self._list_tree(with_data=False)[1] for w in queue.wals}
                if self.rs_cversion() == before:
                    return wals
                log.info("queues root cversion changed while listing WALs; retrying")
        raise QueueStorageError(f"{self.paths.queues} kept changing over {max_retries} listings of every WAL")

    def snapshot(self) -> QueueSnapshot:
        """Every replicator → queue → WAL → (position, version), read with batched ``multiRead``s.

        Consistent against claims in flight: repeated while the queues root's cversion moves.
        :func:`replication.zk.queue_snapshot.incremental_snapshot` gives the same tree reading only
        the queues named by newer journal entries.
        """
        with zk_access(self.paths.queues):
            for _ in range(100):
                before = self.rs_cversion()
                if before is None:
                    return QueueSnapshot(rs_cversion=-1)
                servers, queues = self._list_tree(with_data=True)
                snap = QueueSnapshot(rs_cversion=before, replicators={server: {} for server in servers})
                for queue in queues:
                    snap.replicators.setdefault(queue.server, {})[queue.queue_id] = queue
                if self.rs_cversion() == before:
                    return snap
        raise QueueStorageError(f"{self.paths.queues} kept changing during 100 snapshots")

    def rs_cversion(self) -> int | None:
        """The queues root's cversion (None when there is no queues root): it moves with every claim."""
        stat = self.zk.exists(self.paths.queues)
        return None if stat is None else stat.cversion

    def _list_tree(self, with_data: bool) -> tuple[list[str], list[QueueState]]:
        try:
            servers = sorted(filter(is_replicator, self.zk.get_children(self.paths.queues)))
        except NoNodeError:
            return [], []
        listed = self.list_replicators(servers)
        pairs = [(s, q) for s in servers for q in listed.get(s) or ()]
        return servers, self.read_queues(pairs, with_data=with_data)

    def list_replicators(self, servers: list[str]) -> dict[str, list[str] | None]:
        """The queue ids of each server in one batch of reads (None for a replicator that is gone)."""
        paths = self.paths
        listed = multi_read(self.zk, [Read("children", paths.replicator(s), 64) for s in servers])
        out: dict[str, list[str] | None] = {}
        for server, children in zip(servers, listed, strict=True):
            if isinstance(children, NoNodeError):
                out[server] = None
            else:
                out[server] = sorted(filter(is_queue_id, checked(children, paths.replicator(server))))
        return out

    def read_queues(self, pairs: list[tuple[str, str]], with_data: bool = True) -> list[QueueState]:
        """Read these queues (their stat, WAL names and, ``with_data``, every position) in batched reads.

        Queues that are gone are left out. The queue's own stat comes from a getData on the queue
        znode (multiRead allows getChildren but not getChildren2). Every WAL's data is read: a
        getChildren carries names only, never the children's stats, so there is no way to skip the
        WALs whose dataLength is 0 (position 0) without asking for each of them anyway.
        """
        zk, paths = self.zk, self.paths
        ops = []
        for server, queue_id in pairs:
            queue_path = paths.queue(server, queue_id)
            ops.append(Read("data", queue_path))
            ops.append(Read("children", queue_path, 512))
        results = multi_read(zk, ops)
        queues: list[QueueState] = []
        for index, (server, queue_id) in enumerate(pairs):
            head, children = results[2 * index], results[2 * index + 1]
            if isinstance(head, NoNodeError) or isinstance(children, NoNodeError):
                continue  # claimed or removed meanwhile; the cversion check repeats the listing
            queue_path = paths.queue(server, queue_id)
            _, stat = checked(head, queue_path)
            queue = QueueState(server, queue_id, stat.version, stat.cversion)
            for wal in sorted(checked(children, queue_path), key=wal_sort_key):
                queue.wals[wal] = WALState(0, -1)
            queues.append(queue)
        if with_data:
            targets = [(q, w, paths.wal(q.server, q.queue_id, w)) for q in queues for w in q.wals]
            datas = multi_read(zk, [Read("data", t[2]) for t in targets])
            for (queue, wal, path), result in zip(targets, datas, strict=True):
                if isinstance(result, NoNodeError):
                    del queue.wals[wal]  # removed meanwhile (finished WAL)
                    continue
                data, stat = checked(result, path)
                queue.wals[wal] = WALState(codec.parse_position(data, path), stat.version)
        return queues


def _first_error(outcome: list[Any]) -> Exception | None:
    """The first real failure in a multi's outcome (RolledBack/RuntimeInconsistency are its echoes)."""
    for result in outcome:
        if isinstance(result, Exception) and not isinstance(result, (RolledBackError, RuntimeInconsistency)):
            return result
    return None


def _raise(error: Exception, path: str) -> None:
    if isinstance(error, NoAuthError):
        raise error
    raise QueueStorageError(f"ZooKeeper refused a change of {path}: {type(error).__name__}")
