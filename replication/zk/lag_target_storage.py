"""A peer's lag targets in ZooKeeper (``LagTargetStorage``): ``<hbrep root>/lag-targets/<peerId>``.

The znode holds JSON ``{"peer": ms or null, "tables": {table: ms}}`` (what the targets mean, and which are
missed, is :mod:`replication.monitoring.lag_targets`). Created without an explicit ACL (the client's
default), as before the storage moved here.
"""

from __future__ import annotations

import json
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.zk.layout import ZNodePaths


class LagTargetStorage:
    """The lag-target znodes of one cluster, one per peer."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths

    def path(self, peer_id: str) -> str:
        """``<hbrep root>/lag-targets/<peerId>``."""
        return self.paths.lag_targets(peer_id)

    def read(self, peer_id: str) -> dict[str, Any] | None:
        """The peer's stored JSON document as written (an empty znode reads as ``{}``); None when the peer has
        no lag-target znode."""
        try:
            data, _ = self.zk.get(self.path(peer_id))
        except NoNodeError:
            return None
        return json.loads(data or b"{}")

    def write(self, peer_id: str, targets: dict[str, Any]) -> None:
        """Store ``targets`` as the peer's JSON document: created with its parents, or replaced (last writer
        wins, no version guard) when present."""
        data = json.dumps(targets).encode()
        path = self.path(peer_id)
        try:
            self.zk.create(path, data, makepath=True)
        except NodeExistsError:
            self.zk.set(path, data)
