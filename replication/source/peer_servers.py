"""The peer's region servers as a ship task sees them: the snapshot's list first, then a ZooKeeper watch.

HBase's HBaseReplicationEndpoint keeps a watcher on the peer's ``rs`` znode (its PeerRegionServerListener):
when a region server of the peer joins or leaves, the sinks are chosen again before the next shipment,
not only after one failed. :class:`PeerRegionServers` does the same for one ship task: it starts a kazoo
``ChildrenWatch`` on the peer's ``<parent>/rs`` when the task first asks, and the sink manager polls
:meth:`PeerRegionServers.changed` before each sink choice. When the peer's ZooKeeper cannot be reached the
watch is not retried within the task; the list is then read again after a failure, as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kazoo.client import KazooClient

from replication.zk.queue_info import live_server_names

LOG = logging.getLogger(__name__)


class PeerRegionServers:
    """Live region servers of one peer: the snapshot's list, then what a watch on ``rs_path`` reports."""

    def __init__(self, peer_id: str, snapshot: list[str], connect: Callable[[], KazooClient], rs_path: str):
        self.peer_id = peer_id
        self._snapshot: list[str] | None = list(snapshot)
        self._connect = connect
        self._rs_path = rs_path
        self._lock = threading.Lock()
        self._zk: KazooClient | None = None
        self._watch_failed = False
        self._latest: list[str] | None = None
        self._version = 0
        self._seen = 0

    def fetch(self) -> list[str]:
        """The servers to choose sinks from: the snapshot's list once, then the watched (or a fresh) list."""
        if self._snapshot is not None:
            servers, self._snapshot = self._snapshot, None
            return servers
        self._start_watch()
        with self._lock:
            if self._latest is not None:
                return list(self._latest)
        return self._read_now()

    def changed(self) -> list[str] | None:
        """The peer's current servers if the watch saw a change since the last call, else None."""
        self._start_watch()
        with self._lock:
            if self._version == self._seen or self._latest is None:
                return None
            self._seen = self._version
            return list(self._latest)

    def current(self) -> list[str] | None:
        """What the watch last saw (None before it started or when it could not), without consuming it."""
        with self._lock:
            return None if self._latest is None else list(self._latest)

    def close(self) -> None:
        """Stop the watch and close its ZooKeeper session."""
        zk, self._zk = self._zk, None
        if zk is not None:
            zk.stop()
            zk.close()

    def _start_watch(self) -> None:
        if self._zk is not None or self._watch_failed:
            return
        try:
            zk = self._connect()
        except Exception as exc:  # an unreachable peer ZooKeeper: ship on the snapshot's list
            self._watch_failed = True
            LOG.warning("Cannot watch the region servers of peer %s: %s", self.peer_id, exc)
            return
        self._zk = zk
        zk.ChildrenWatch(self._rs_path, self._on_change)

    def _on_change(self, children: list[str] | None) -> None:
        servers = live_server_names(children or [])
        with self._lock:
            if servers != self._latest:
                if self._latest is not None:
                    LOG.info("Peer %s region servers now %s", self.peer_id, servers)
                self._latest = servers
                self._version += 1

    def _read_now(self) -> list[str]:
        try:
            zk = self._zk or self._connect()
            try:
                return live_server_names(zk.get_children(self._rs_path))
            finally:
                if zk is not self._zk:
                    zk.stop()
                    zk.close()
        except Exception as exc:  # unreachable peer ZooKeeper: no sinks this round
            LOG.warning("Cannot read region servers of peer %s: %s", self.peer_id, exc)
            return []
