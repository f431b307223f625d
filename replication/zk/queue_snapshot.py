"""Queue snapshots: the tree every replicator -> queue -> WAL -> (position, version), and its cache.

The model (:class:`QueueSnapshot`, :class:`QueueState`, :class:`WALState`) is what
``ReplicationQueueStorage.snapshot`` reads in full. :func:`incremental_snapshot` gives the same tree
re-reading only the queues the change journal names (journal.py), from a cache file.

The cache (``<root>/.hbrep/cache/queue-snapshot.json`` on the cluster's filesystem, written with
``write_atomic``) holds the previous :class:`QueueSnapshot`, the highest journal sequence seen
(``last_seq``) and the queues root's cversion read just before that journal listing.

One snapshot:
1. ONE batched read: the queues root's stat, the journal's children, then the journal root's data
   (the trim mark). In that order: a trim that lands after the listing shows as a mark past what
   we saw (a needless full read), never as a silent hole.
2. Full read (and a fresh cache) when: no cache, an unreadable one, one for another tree (parent or
   creation zxids differ), the cache is older than ``full_interval_ms`` (bounds what a writer that
   does not journal, e.g. an operator with zkCli, can hide), a trim mark past ``last_seq`` (a gap),
   or a queues-root cversion that the new entries' ``rs <delta>`` lines do not add up to (a
   replicator created/removed by a non-journaling writer).
3. Otherwise: read the new entries' data, re-list the replicators they name with ``<server>/`` and
   re-read the queues they name; everything else comes from the cache. If the queues root's
   cversion moved meanwhile (a claim in flight) the round is repeated, as the full snapshot does.
4. Save the cache and trim the journal (only the ship cycle trims; other readers pass trim=False).

ZooKeeper requests then grow with the queues that changed: a cycle where 1% of 10,000 queues
changed reads ~100 queues, not 10,000 (bench/zk_snapshot.py measures it with the server's counters).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.config import Config
from replication.fs import FileSystem
from replication.zk import journal
from replication.zk.acl import zk_access
from replication.zk.errors import checked
from replication.zk.layout import ZNodePaths, is_replicator
from replication.zk.multi_read import Read, multi_read

log = logging.getLogger(__name__)

FORMAT = 2
DEFAULT_FULL_INTERVAL_MS = 600_000
CACHE_PATH = (".hbrep", "cache", "queue-snapshot.json")


class WALState(NamedTuple):
    """One WAL of a queue: its position and the znode version (for guarded updates).

    A NamedTuple, not a dataclass: snapshots hold one per WAL (100k+), and the cache file
    (below) serializes and rebuilds them without per-object Python code.
    """

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


class QueueReader(Protocol):
    """What an incremental snapshot reads through (``ReplicationQueueStorage`` is one)."""

    zk: KazooClient
    paths: ZNodePaths

    def snapshot(self) -> QueueSnapshot:
        """The whole tree, read in full."""
        ...

    def rs_cversion(self) -> int | None:
        """The queues root's cversion (None when there is no queues root)."""
        ...

    def list_replicators(self, servers: list[str]) -> dict[str, list[str] | None]:
        """The queue ids of each server (None for a replicator that is gone)."""
        ...

    def read_queues(self, pairs: list[tuple[str, str]], with_data: bool = True) -> list[QueueState]:
        """These queues with their WALs (queues that are gone left out)."""
        ...


@dataclass
class CacheState:
    """What a cache file holds (see module doc)."""

    parent: str
    rs_czxid: int
    journal_czxid: int
    last_seq: int
    rs_cversion: int
    full_ms: int
    snapshot: QueueSnapshot

    def to_bytes(self) -> bytes:
        """JSON: the header fields plus {server: {queue: [version, cversion, [[wal, [pos, ver]], ...]]}}."""
        tree = {  # WALState is a tuple: json writes [name, [position, version]] pairs with no Python loop
            server: {q.queue_id: [q.version, q.cversion, list(q.wals.items())] for q in queues.values()}
            for server, queues in self.snapshot.replicators.items()
        }
        doc = {
            "format": FORMAT,
            "parent": self.parent,
            "rs_czxid": self.rs_czxid,
            "journal_czxid": self.journal_czxid,
            "last_seq": self.last_seq,
            "rs_cversion": self.rs_cversion,
            "full_ms": self.full_ms,
            "replicators": tree,
        }
        return json.dumps(doc, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> CacheState:
        """Parse a cache file; ValueError/KeyError/TypeError on anything malformed."""
        doc = json.loads(data)
        if doc.get("format") != FORMAT:
            raise ValueError(f"cache format {doc.get('format')!r}")
        snap = QueueSnapshot(rs_cversion=int(doc["rs_cversion"]))
        for server, queues in doc["replicators"].items():
            states = snap.replicators.setdefault(server, {})
            for queue_id, (version, cversion, wals) in queues.items():
                state = QueueState(server, queue_id, int(version), int(cversion))
                state.wals = {name: WALState(*pv) for name, pv in wals}
                if not all(type(x) is int for pv in state.wals.values() for x in pv):
                    raise ValueError(f"non-integer position in cached queue {server}/{queue_id}")
                states[queue_id] = state
        return cls(
            parent=str(doc["parent"]),
            rs_czxid=int(doc["rs_czxid"]),
            journal_czxid=int(doc["journal_czxid"]),
            last_seq=int(doc["last_seq"]),
            rs_cversion=int(doc["rs_cversion"]),
            full_ms=int(doc["full_ms"]),
            snapshot=snap,
        )


class SnapshotCache:
    """The cache file of one cluster on its filesystem (``<root>/.hbrep/cache/queue-snapshot.json``)."""

    def __init__(self, fs: FileSystem, path: str):
        self.fs = fs
        self.path = path

    @classmethod
    def for_root(cls, fs: FileSystem, root: str) -> SnapshotCache:
        """The cache of the cluster whose filesystem root is ``root``."""
        return cls(fs, fs.join(root, *CACHE_PATH))

    def load(self) -> tuple[CacheState | None, str]:
        """The cached state, or (None, why) when missing or unreadable (never raises)."""
        try:
            if not self.fs.exists(self.path):
                return None, "no cache"
            return CacheState.from_bytes(self.fs.read_range(self.path, 0)), ""
        except Exception as exc:  # a corrupt cache only costs a full read
            log.warning("queue snapshot cache %s unreadable (%s); reading every queue", self.path, exc)
            return None, f"corrupt cache ({type(exc).__name__})"

    def save(self, state: CacheState) -> None:
        """Replace the cache file atomically."""
        self.fs.write_atomic(self.path, state.to_bytes())


@dataclass
class SnapshotResult:
    """A snapshot and how it was made: ``mode`` full/incremental, the reason, and what was read."""

    snapshot: QueueSnapshot
    mode: str
    reason: str
    queues_read: int
    new_entries: int
    trimmed: int = 0


def incremental_snapshot(
    storage: QueueReader,
    cache: SnapshotCache,
    *,
    full_interval_ms: int = DEFAULT_FULL_INTERVAL_MS,
    journal_keep: int = journal.DEFAULT_KEEP,
    trim: bool = True,
    now_ms: int | None = None,
) -> SnapshotResult:
    """The same tree :meth:`ReplicationQueueStorage.snapshot` returns, reading only changed queues.

    Falls back to a full read whenever the cache cannot be trusted (module doc); saves the new
    cache; trims the journal when ``trim``. Raises what a full snapshot raises (NoAuth, QueueStorageError).
    """
    zk, paths = storage.zk, storage.paths
    now = int(time.time() * 1000) if now_ms is None else now_ms
    with zk_access(paths.queues):
        for _ in range(20):
            head = _read_head(storage)
            if head is None:
                return SnapshotResult(QueueSnapshot(rs_cversion=-1), "full", "no queues root", 0, 0)
            rs_stat, names, journal_stat, mark = head
            listed = sorted((s, n) for n in names if (s := journal.entry_seq(n)) is not None)
            top = listed[-1][0] if listed else -1
            cached, why = cache.load()
            reason = why or _distrust(cached, paths.parent, rs_stat, journal_stat, mark, now, full_interval_ms)
            if not reason:
                assert cached is not None
                fresh = [(s, n) for s, n in listed if s > cached.last_seq]
                entries = _read_entries(storage, fresh)
                if entries is None:
                    reason = "journal entries trimmed while reading them"
                elif cached.rs_cversion + sum(e.rs_delta for e in entries) != rs_stat.cversion:
                    reason = "queues root changed without a journal entry"
                else:
                    snap, queues_read = _apply(storage, cached.snapshot, entries)
                    if storage.rs_cversion() != rs_stat.cversion:
                        continue  # a claim moved queues while we read: read again
                    snap.rs_cversion = rs_stat.cversion
                    state = CacheState(
                        paths.parent, rs_stat.czxid, journal_stat.czxid, top, rs_stat.cversion, cached.full_ms, snap
                    )
                    if entries or top != cached.last_seq or rs_stat.cversion != cached.rs_cversion:
                        _save(cache, state)  # unchanged otherwise: no need to rewrite the file
                    trimmed = journal.trim(zk, paths, names, journal_keep) if trim else 0
                    return SnapshotResult(snap, "incremental", "", queues_read, len(entries), trimmed)
            log.info("queue snapshot: full read (%s)", reason)
            snap = storage.snapshot()
            if snap.rs_cversion != rs_stat.cversion:
                continue  # the tree moved between the journal listing and the full read: list again
            state = CacheState(paths.parent, rs_stat.czxid, journal_stat.czxid, top, rs_stat.cversion, now, snap)
            _save(cache, state)
            trimmed = journal.trim(zk, paths, names, journal_keep) if trim else 0
            queues_read = sum(len(q) for q in snap.replicators.values())
            return SnapshotResult(snap, "full", reason, queues_read, len(listed), trimmed)
    log.info("queue snapshot: the tree kept moving; a plain full read")
    snap = storage.snapshot()
    return SnapshotResult(snap, "full", "queues root kept changing", sum(len(q) for q in snap.replicators.values()), 0)


def _save(cache: SnapshotCache, state: CacheState) -> None:
    """Save the cache; a failure costs only a full read next time, so it is logged, not raised."""
    try:
        cache.save(state)
    except Exception as exc:
        log.warning(
            "could not write the queue snapshot cache %s (%s); the next snapshot reads everything", cache.path, exc
        )


def _read_head(storage: QueueReader):
    """(rs stat, journal entry names, journal stat, trim mark) in one multiRead; None without queues root."""
    zk, paths = storage.zk, storage.paths
    root = journal.journal_root(paths)
    for _ in range(2):
        rs, names, jdata = multi_read(
            zk, [Read("data", paths.queues), Read("children", root, 64_000), Read("data", root)]
        )
        if isinstance(rs, NoNodeError):
            return None
        if isinstance(names, NoNodeError) or isinstance(jdata, NoNodeError):
            journal.ensure_root(zk, paths)
            continue
        rs_stat = checked(rs, paths.queues)[1]
        data, journal_stat = checked(jdata, root)
        return rs_stat, checked(names, root), journal_stat, journal.trimmed_through(data)
    return None


def _distrust(cached, parent, rs_stat, journal_stat, mark: int, now: int, full_interval_ms: int) -> str:
    """Why the cache cannot be used ('' when it can)."""
    if cached.parent != parent or cached.rs_czxid != rs_stat.czxid or cached.journal_czxid != journal_stat.czxid:
        return "cache is of another ZooKeeper tree"
    if now - cached.full_ms >= full_interval_ms:
        return f"last full read over {full_interval_ms} ms ago"
    if mark > cached.last_seq:
        return f"journal trimmed past the cached sequence ({mark} > {cached.last_seq})"
    return ""


def _read_entries(storage: QueueReader, fresh: list[tuple[int, str]]) -> list[journal.Entry] | None:
    datas = multi_read(storage.zk, [Read("data", storage.paths.journal_entry(name), 256) for _, name in fresh])
    entries = []
    for (seq, name), result in zip(fresh, datas, strict=True):
        if isinstance(result, NoNodeError):
            return None  # trimmed between the listing and now: cannot know what it named
        entries.append(journal.decode(seq, checked(result, storage.paths.journal_entry(name))[0]))
    return entries


def _apply(storage: QueueReader, cached: QueueSnapshot, entries: list[journal.Entry]) -> tuple[QueueSnapshot, int]:
    """The cached tree with every named replicator re-listed and every named queue re-read."""
    snap = QueueSnapshot(
        rs_cversion=cached.rs_cversion, replicators={s: dict(qs) for s, qs in cached.replicators.items()}
    )
    servers: set[str] = set()
    queues: set[tuple[str, str]] = set()
    for entry in entries:
        for ref in entry.refs:
            server, _, queue_id = ref.partition("/")
            if not is_replicator(server):
                continue
            if queue_id:
                queues.add((server, queue_id))
            else:
                servers.add(server)
    if servers:
        for server, queue_ids in storage.list_replicators(sorted(servers)).items():
            if queue_ids is None:
                snap.replicators.pop(server, None)
                queues = {(s, q) for s, q in queues if s != server}
                continue
            known = snap.replicators.setdefault(server, {})
            for gone in set(known) - set(queue_ids):
                del known[gone]
            queues |= {(server, q) for q in queue_ids if q not in known}
    pairs = sorted(queues)
    found = {(q.server, q.queue_id): q for q in storage.read_queues(pairs)}
    for server, queue_id in pairs:
        state = found.get((server, queue_id))
        if state is None:
            snap.replicators.get(server, {}).pop(queue_id, None)
        else:
            snap.replicators.setdefault(server, {})[queue_id] = state
    return snap, len(pairs)


FULL_INTERVAL_KEY = "hbrep.replication.snapshot.full.interval.ms"
JOURNAL_KEEP_KEY = "hbrep.replication.journal.keep"


def cycle_snapshot(
    storage: QueueReader, fs: FileSystem, root: str, conf: Config, *, journaled: bool = True
) -> SnapshotResult:
    """The ship cycle's snapshot: the cluster's cache under ``root``, the journal trimmed.

    ``hbrep.replication.snapshot.full.interval.ms`` (default 600000) bounds how long the cache is
    trusted without a full read; ``hbrep.replication.journal.keep`` (default 5000) how many journal
    entries survive a trim (trimming starts at twice that).

    ``journaled=False`` (a real HBase source: HBase's region servers add WALs to their queues without
    a journal entry, and a new child of a queue moves no cversion the cache checks) reads the whole
    tree every time, as HBase's own ReplicationQueueStorage readers do, and writes no cache.
    """
    if not journaled:
        snap = storage.snapshot()
        queues_read = sum(len(q) for q in snap.replicators.values())
        return SnapshotResult(snap, "full", "the source's region servers do not journal (real HBase)", queues_read, 0)
    return incremental_snapshot(
        storage,
        SnapshotCache.for_root(fs, root),
        full_interval_ms=conf.get_int(FULL_INTERVAL_KEY, DEFAULT_FULL_INTERVAL_MS),
        journal_keep=conf.get_int(JOURNAL_KEEP_KEY, journal.DEFAULT_KEEP),
    )
