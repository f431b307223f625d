"""A region server's part in serial replication: it records a barrier at every routing epoch.

See zk/serial_barriers.py for the design (HBase's replication barriers, taken per routing epoch since
hbrep's rows move between servers' regions when the live servers change). This class:

- at start, before the server registers as live, records its first barrier in the epoch its own
  registration will start (HBase: the barrier written when its regions open);
- records a barrier for each later epoch: when the ``rs`` list changes, when a client bumps the epoch
  znode, and, before applying it, when a client's write names a newer epoch than the server's (the
  client may learn of a change before the server's watch fires).

Each barrier is taken under the WAL's append lock: every edit the server writes afterwards lies past the
barrier's WAL position.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kazoo.client import KazooClient

from replication.cluster.wal_group import FSHLog
from replication.zk.layout import ZNodePaths
from replication.zk.serial_barriers import (
    Barrier,
    current_bumps,
    describe_epoch,
    epoch_path,
    read_routing_epoch,
    record_barrier,
    routing_epoch,
)

LOG = logging.getLogger(__name__)


class RoutingEpochs:
    """Keeps one server's barriers in step with the routing epoch (see module doc)."""

    def __init__(
        self,
        zk: KazooClient,
        paths: ZNodePaths,
        server_name: str,
        wal: FSHLog,
        region_sequences: Callable[[], dict[str, int]],
    ):
        self.zk = zk
        self.paths = paths
        self.server_name = server_name
        self.wal = wal
        self.region_sequences = region_sequences
        self.epoch = 0
        self._lock = threading.Lock()

    def start(self) -> int:
        """Enter the epoch this server's registration starts, then follow the epoch znode."""
        stat = self.zk.exists(self.paths.rs)
        self.advance(routing_epoch((stat.cversion if stat is not None else 0) + 1, current_bumps(self.zk, self.paths)))
        self.zk.DataWatch(epoch_path(self.paths), self._on_epoch)
        return self.epoch

    def advance(self, epoch: int) -> None:
        """Record this server's barrier for ``epoch`` unless it is already in that epoch or a later one."""
        with self.wal.append_lock, self._lock:
            if epoch <= self.epoch:
                return
            barrier = Barrier(epoch, self.wal.current_name, self.wal.current_length, self.region_sequences())
            record_barrier(self.zk, self.paths, self.server_name, barrier)
            self.epoch = epoch
        where = f"{barrier.wal}:{barrier.offset}"
        LOG.info("region server %s entered routing epoch %s at %s", self.server_name, describe_epoch(epoch), where)

    def on_client_epoch(self, epoch: int) -> None:
        """A write routed in ``epoch``: enter it first when it is newer than this server's."""
        if epoch > self.epoch:
            self.advance(epoch)

    def servers_changed(self) -> None:
        """The ``rs`` list changed: enter the new epoch."""
        self._follow()

    def _on_epoch(self, data: bytes | None, stat) -> None:
        if stat is not None:
            self._follow()

    def _follow(self) -> None:
        try:
            self.advance(read_routing_epoch(self.zk, self.paths))
        except Exception as exc:  # a watch thread must live on; the next change or write catches up
            LOG.error("region server %s could not record its routing barrier: %s", self.server_name, exc)
