"""New edits queued for a peer while no ship run holds its lease: the event that starts an idle ship DAG.

HBase's ``ReplicationSourceWALReader`` follows its WAL and ships what is appended at once; hbrep ships in
runs, so an idle cluster's first write would wait for the next scheduled run. :class:`PendingEditsTracker`
looks, per peer, at what the ship snapshot knows:

- the queues of live replicators (a dead server's queues wait for failover, as the snapshot leaves them)
  and their recorded positions, read from ZooKeeper at start, whenever a watch fires (children of the
  queue change journal, to which every hbrep writer of a queue adds an entry: a new WAL at a roll, a
  commit, a claim; and children of the queues root), after a new session, and every ``full_read_s``
  (a real HBase source journals nothing);
- the readable length of each queued WAL, on every :meth:`PendingEditsTracker.poll`: edits appended to an
  open WAL change nothing in ZooKeeper.

A peer has a backlog when shipping would move something (the rule of ``snapshot.queue_has_work``): bytes
of entries past a recorded position (a WAL's header and trailer are none: a fresh WAL at position 0 holds
no edit), a rolled WAL still queued, a recovered queue. ``poll`` reports a peer with a
backlog while its ship lease (``zk/lease.py``) is free, and only once per backlog: the peer is not
reported again until a position it saw moves or its WAL leaves the queue (a ship committed), the
backlog is seen empty, or a queue that had no work when it was reported has work now. A backlog that a
failing ship cannot move is so reported once (the schedule retries it), never at every poll; and it
does not hide new edits in the peer's other queues (found: a recovered queue left unshipped kept an
idle cluster's next write from starting a run).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import KazooState

from replication.cluster.source_cluster import SourceCluster
from replication.fs import FileSystem
from replication.wal.locator import WalLocator
from replication.wal.names import wal_group_id, wal_start_timestamp
from replication.wal.reader import open_wal
from replication.zk.lease import is_free_for
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_snapshot import QueueSnapshot, QueueState
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.shadow_peer import hbrep_ships

LOG = logging.getLogger(__name__)

DEFAULT_FULL_READ_S = 30.0
TRAILER_BYTES = 8  # what monitoring/status.py counts for a WAL's trailer when reading pending bytes
WalKey = tuple[str, str, str]  # (server, queueId, wal)


@dataclass(frozen=True)
class EditsQueued:
    """A peer's backlog found while no ship run held its lease: the queues with work, bytes past positions."""

    peer_id: str
    queues: tuple[str, ...]
    pending_bytes: int
    seen_ms: int

    def as_dict(self) -> dict[str, object]:
        """The event as JSON (the trigger's payload): peer_id, queues, pending_bytes, seen_ms."""
        return {
            "peer_id": self.peer_id,
            "queues": list(self.queues),
            "pending_bytes": self.pending_bytes,
            "seen_ms": self.seen_ms,
        }


@dataclass(frozen=True)
class QueueBacklog:
    """One queue's work: whether shipping would move something, and the bytes past its positions."""

    has_work: bool
    pending_bytes: int


def queue_backlog(locator: WalLocator, state: QueueState) -> QueueBacklog:
    """What shipping ``state`` now would move (``snapshot.queue_has_work``'s rule, the replicator live):
    a recovered queue or a rolled WAL still queued is work; so are entry bytes past a WAL's position (its
    header and trailer are not counted). A WAL that cannot be found or read counts as work (the ship
    reports why)."""
    info = ReplicationQueueInfo.parse(state.queue_id)
    servers = [state.server, *info.dead_region_servers]
    has_work = info.is_recovered
    pending = 0
    groups: dict[str, list[str]] = {}
    for name in sorted(state.wals, key=lambda n: (wal_group_id(n), wal_start_timestamp(n), n)):
        groups.setdefault(wal_group_id(name), []).append(name)
    for names in groups.values():
        has_work = has_work or len(names) > 1
        for name in names:
            position = state.wals[name].position
            try:
                path = locator.find(name, servers)
                past = _entry_bytes_past(locator.fs, path, position) if path is not None else None
            except Exception:  # listed then archived, or unreadable: the ship finds it or says why
                past = None
            if past is None:
                has_work = True
            elif past > 0:
                has_work = True
                pending += past
    return QueueBacklog(has_work, pending)


def _entry_bytes_past(fs: FileSystem, path: str, position: int) -> int:
    """Bytes of entries in the WAL at ``path`` past ``position``: its readable length less the header (when
    ``position`` is 0) and the trailer; read only when the file is longer than ``position``."""
    length = fs.readable_length(path)
    if length <= position:
        return 0
    reader = open_wal(path, fs=fs, start=position)
    try:
        trailer = TRAILER_BYTES if reader.trailer_present else 0
        return max(0, length - trailer - reader.position)
    finally:
        reader.close()


class PendingEditsTracker:
    """Reports peers with new edits queued while their ship lease is free; see the module doc.

    ``changed`` is set by the ZooKeeper watches (kazoo's threads): a caller waiting between polls can
    wait on it to poll at once. ``peer_ids`` limits the peers looked at (all the peers hbrep ships when None).
    """

    def __init__(
        self,
        zk: KazooClient,
        source: SourceCluster,
        peer_ids: list[str] | None = None,
        full_read_s: float = DEFAULT_FULL_READ_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.zk = zk
        self.source = source
        self.peer_ids = peer_ids
        self.full_read_s = full_read_s
        self.clock = clock
        self.changed = threading.Event()
        self._snapshot = QueueSnapshot(rs_cversion=0)
        self._peers: list[str] = []
        self._live: set[str] = set()
        self._read_at: float | None = None
        # per peer, when last reported: the positions seen and the queues that had work
        self._reported: dict[str, tuple[dict[WalKey, int], frozenset[str]]] = {}
        self._lost = False
        self._stopped = False

    def start(self) -> None:
        """Listen to the session and read the queues (setting the watches); blocking."""
        self.zk.add_listener(self._on_state)
        self._read()

    def stop(self) -> None:
        """Stop listening (watches already set fire into an unused event); the caller stops the client."""
        self._stopped = True
        self.zk.remove_listener(self._on_state)

    # -- kazoo callbacks (kazoo's threads) ---------------------------------------------------------
    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self._lost = True
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            self.changed.set()  # a new session has no watches: the next poll reads again and sets them

    def _on_change(self, _event: object) -> None:
        if not self._stopped:
            self.changed.set()

    # -- reading -------------------------------------------------------------------------------------
    def _watch_children(self, path: str) -> None:
        """Set a child watch on ``path`` (or an existence watch while it does not exist)."""
        try:
            self.zk.get_children(path, watch=self._on_change)
        except NoNodeError:
            if self.zk.exists(path, watch=self._on_change) is not None:
                self.changed.set()  # created in between: read again

    def _read(self) -> None:
        """The queues, the live servers and the peers hbrep ships, watches set before reading."""
        paths = self.source.paths
        self.changed.clear()
        self._watch_children(paths.journal)
        self._watch_children(paths.queues)
        self._watch_children(paths.rs)
        self._snapshot = ReplicationQueueStorage(self.zk, paths).snapshot()
        self._live = set(self.zk.get_children(paths.rs)) if self.zk.exists(paths.rs) else set()
        storage = ReplicationPeerStorage(self.zk, paths)
        peers = []
        for peer_id in self.peer_ids if self.peer_ids is not None else storage.list_peer_ids():
            try:
                shipped, _error = hbrep_ships(
                    peer_id, storage.get_peer_config(peer_id), storage.is_peer_enabled(peer_id)
                )
            except Exception:  # removed meanwhile
                continue
            if shipped:
                peers.append(peer_id)
        self._peers = peers
        self._read_at = self.clock()

    # -- one look ------------------------------------------------------------------------------------
    def poll(self, now_ms: int | None = None) -> list[EditsQueued]:
        """One look (blocking): the peers whose backlog is new and whose lease is free, each reported once
        per backlog (module doc). ZooKeeper is read again first when a watch fired, after a new session,
        or ``full_read_s`` after the last read; the WALs' lengths are read every time."""
        if self._read_at is None or self.changed.is_set() or self.clock() - self._read_at >= self.full_read_s:
            self._read()
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        locator = WalLocator(self.source.fs, self.source.root)
        by_peer: dict[str, list[QueueState]] = {}
        for state in self._snapshot.queues():
            if state.server in self._live:
                by_peer.setdefault(ReplicationQueueInfo.parse(state.queue_id).peer_id, []).append(state)
        found = []
        for peer_id in self._peers:
            event = self._look(peer_id, by_peer.get(peer_id, []), locator, now)
            if event is not None:
                found.append(event)
        return found

    def _look(self, peer_id: str, queues: list[QueueState], locator: WalLocator, now: int) -> EditsQueued | None:
        positions = {(q.server, q.queue_id, wal): s.position for q in queues for wal, s in q.wals.items()}
        backlogs = {f"{q.server}/{q.queue_id}": queue_backlog(locator, q) for q in queues}
        working = sorted(name for name, b in backlogs.items() if b.has_work)
        reported = self._reported.get(peer_id)
        if reported is not None:
            seen, had_work = reported
            moved = any(positions.get(k) != v for k, v in seen.items())  # shipped: a position moved, a WAL left
            if not working or moved or not had_work.issuperset(working):  # drained, shipped, or new work
                del self._reported[peer_id]
                reported = None
        if not working or reported is not None:
            return None
        if not is_free_for(self.zk, self.source.paths, peer_id, owner=""):
            return None  # a ship run holds the peer's lease: it ships this
        self._reported[peer_id] = (positions, frozenset(working))
        pending = sum(b.pending_bytes for b in backlogs.values())
        LOG.info("new edits queued for peer %s: %d bytes in %s", peer_id, pending, ", ".join(working))
        return EditsQueued(peer_id, tuple(working), pending, now)
