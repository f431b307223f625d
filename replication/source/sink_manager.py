"""ReplicationSinkManager: which peer region servers to ship to (spec §5.1).

Candidates are the children of the peer's ``<parent>/rs``. ``choose_sinks`` shuffles them and keeps
``ceil(n × replication.source.ratio)``; ``get_sink`` picks one at random, re-choosing first when the
list is empty or the peer's server list changed since the last choice (seen by a watch on the peer's
``rs`` znode, ``peer_servers.py``, or re-read after a failure). A sink that fails more than
``replication.bad.sink.threshold`` times is dropped; a success resets its count.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable

from replication.errors import HbrepError

LOG = logging.getLogger(__name__)


class NoSinksAvailable(HbrepError):
    """The peer cluster has no live region server to ship to."""


class ReplicationSinkManager:
    """Chooses sinks for one peer from a fetcher of the peer's live region servers."""

    def __init__(
        self,
        peer_id: str,
        fetch_servers: Callable[[], list[str]],
        ratio: float,
        bad_sink_threshold: int,
        rng: random.Random | None = None,
        servers_changed: Callable[[], list[str] | None] | None = None,
    ):
        self.peer_id = peer_id
        self.fetch_servers = fetch_servers
        self.ratio = ratio
        self.bad_sink_threshold = bad_sink_threshold
        self.rng = rng or random.Random()
        self.sinks: list[str] = []
        self.bad_counts: dict[str, int] = {}
        self._known: tuple[str, ...] | None = None
        # the peer's list when a watch saw it change since the last call, else None (peer_servers.py)
        self.servers_changed = servers_changed

    def choose_sinks(self) -> list[str]:
        """Re-read the peer's servers and keep a random ``ratio`` subset of them."""
        servers = list(self.fetch_servers())
        self._known = tuple(sorted(servers))
        # the reference guide's pair of lines (0.94's ReplicationSource.chooseSinks logged both)
        LOG.info("Considering %d rs, with ratio %s", len(servers), self.ratio)
        self.rng.shuffle(servers)
        count = math.ceil(len(servers) * self.ratio)
        self.sinks = servers[:count]
        self.bad_counts.clear()
        LOG.info("Getting %d rs from peer cluster # %s", count, self.peer_id)
        return list(self.sinks)

    def notice_servers(self, servers: list[str]) -> None:
        """Tell the manager the peer's current list; a changed list triggers a re-choice."""
        current = tuple(sorted(servers))
        if self._known is not None and current != self._known:
            LOG.info("Peer %s region servers changed; choosing sinks again", self.peer_id)
            self.sinks = []

    def refresh(self) -> None:
        """Re-read the peer's region servers; a changed list makes the next get_sink re-choose."""
        self.notice_servers(list(self.fetch_servers()))

    def get_sink(self) -> str:
        """A random sink; NoSinksAvailable when the peer has no live region server.

        A change of the peer's servers seen by the watch makes this choose again first, as HBase's
        endpoint does when its PeerRegionServerListener fires: a server that left is not tried.
        """
        if self.servers_changed is not None:
            latest = self.servers_changed()
            if latest is not None:
                self.notice_servers(latest)
        if not self.sinks:
            self.choose_sinks()
        if not self.sinks:
            raise NoSinksAvailable(f"peer {self.peer_id} has no live region server to ship to")
        sink = self.rng.choice(self.sinks)
        LOG.info("Choosing peer %s", sink)
        return sink

    def report_bad_sink(self, sink: str) -> None:
        """Count a failure; past the threshold the sink is dropped (and all gone → re-choose)."""
        count = self.bad_counts.get(sink, 0) + 1
        self.bad_counts[sink] = count
        if count > self.bad_sink_threshold and sink in self.sinks:
            self.sinks.remove(sink)
            LOG.warning("Sink %s of peer %s failed %d times; dropping it", sink, self.peer_id, count)
            if not self.sinks:
                self.choose_sinks()

    def report_sink_success(self, sink: str) -> None:
        self.bad_counts.pop(sink, None)
