"""Watching region servers die, as HBase's ``ReplicationTrackerZKImpl`` does: ``regionServerRemoved`` events.

HBase's region servers watch ``<parent>/rs`` (``OtherRegionServerWatcher``) and claim the queues of a server
whose ephemeral znode went away. :class:`ReplicationTracker` keeps that watch with kazoo (threaded) and calls
``listener`` with a :class:`RegionServersRemoved` each time servers are found gone:

- a child of ``<parent>/rs`` removed while the watch was set (the server's session expired or it stopped);
- after the session was lost and a new one made (kazoo drops every watch with the old session): the live
  servers are read again and compared with the ones known before, so a death during the outage still
  gives an event;
- on start and after a new session: replicators (servers with queues) that have no live znode, i.e. dead
  servers whose queues nobody has claimed yet, so a tracker started after a death (a restarted watcher)
  reports them too, once per tracker. Not on other changes of ``<parent>/replication/rs``: a starting
  server registers its queues before its ``rs`` znode (HBase's order), and would read as dead there.

Each server found removed gets its dead-server mark (:class:`DeadServerStorage`) at the time it was seen, if
it has none yet: failover counts ``replication.sleep.before.failover`` from there, and the status shows it as
when the server died.

The listener runs on kazoo's threads: it must not block (hand the event over, e.g. to an event loop).
Reporting a server twice is harmless: claiming takes the claim lock (:mod:`replication.zk.claim`), so two
events for one death make one claim.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import KazooState

from replication.zk.dead_server_storage import DeadServerStorage
from replication.zk.layout import ZNodePaths

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class RegionServersRemoved:
    """Servers found dead by one look at ZooKeeper, and why (``watch``, ``session``, ``orphan-queues``)."""

    servers: tuple[str, ...]
    reason: str
    seen_ms: int
    live: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        """The event as JSON (the trigger's payload): servers, reason, seen_ms, live."""
        return {"servers": list(self.servers), "reason": self.reason, "seen_ms": self.seen_ms, "live": list(self.live)}


class ReplicationTracker:
    """Watches one cluster's live region servers and replicators; see the module doc."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths, listener: Callable[[RegionServersRemoved], None]):
        self.zk = zk
        self.paths = paths
        self.listener = listener
        self._lock = threading.Lock()
        self._known_live: set[str] | None = None
        self._reported_orphans: set[str] = set()
        self._stopped = False
        self._lost = False

    def start(self) -> None:
        """Read both lists, set the watches and report dead servers that still hold queues (blocking)."""
        self.zk.add_listener(self._on_state)
        self._refresh("start")

    def stop(self) -> None:
        """Stop reporting (watches already set fire into nothing); the caller stops the client."""
        self._stopped = True
        self.zk.remove_listener(self._on_state)

    @property
    def live_servers(self) -> list[str]:
        """The live servers as last read."""
        with self._lock:
            return sorted(self._known_live or ())

    # -- kazoo callbacks (kazoo's threads) ---------------------------------------------------------
    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self._lost = True
        elif state == KazooState.CONNECTED and self._lost and not self._stopped:
            self._lost = False
            # a new session: every watch is gone; read again off the callback thread (listeners must not block)
            self.zk.handler.spawn(self._refresh, "session")

    def _on_live_changed(self, _event: object) -> None:
        if not self._stopped:
            self._refresh("watch")

    # -- one look -----------------------------------------------------------------------------------
    def _children(self, path: str, watch: Callable[[object], None]) -> set[str]:
        while True:
            try:
                return set(self.zk.get_children(path, watch=watch))
            except NoNodeError:
                # watch the parent's creation instead, so the first server's arrival re-arms the watch
                if self.zk.exists(path, watch=watch) is not None:
                    continue
                return set()

    def _refresh(self, reason: str) -> None:
        try:
            live = self._children(self.paths.rs, self._on_live_changed)
            missed = reason != "watch"  # at start or after a new session: deaths may have gone unseen
            replicators = (
                set(self.zk.get_children(self.paths.queues)) if missed and self.zk.exists(self.paths.queues) else set()
            )
        except Exception as exc:  # a connection loss mid-read: the session listener reads again
            LOG.warning("region server tracker could not read %s: %s", self.paths.rs, exc)
            return
        with self._lock:
            removed = (self._known_live - live) if self._known_live is not None else set()
            self._known_live = live
            orphans = {s for s in replicators - live if s not in self._reported_orphans and _is_server(s)}
            self._reported_orphans |= orphans | removed
        dead = sorted(removed | orphans)
        if dead and not self._stopped:
            why = reason if removed else "orphan-queues"
            seen_ms = int(time.time() * 1000)
            LOG.info("region server(s) removed (%s): %s", why, ", ".join(dead))
            self._mark(sorted(removed), seen_ms)
            self.listener(RegionServersRemoved(tuple(dead), why, seen_ms, tuple(sorted(live))))

    def _mark(self, servers: list[str], seen_ms: int) -> None:
        """The dead-server marks of servers seen removed (kept when a failover run marked them first)."""
        if not servers:
            return
        storage = DeadServerStorage(self.zk, self.paths)
        try:
            storage.ensure_root()
            for server in servers:
                storage.mark(server, seen_ms)
        except Exception as exc:  # the report matters more than the mark: failover marks on its own
            LOG.warning("could not mark %s dead: %s", ", ".join(servers), exc)


def _is_server(name: str) -> bool:
    """``host,port,startcode`` (replicator children also hold ``lock``-free names only, but be strict)."""
    parts = name.split(",")
    return len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit()
