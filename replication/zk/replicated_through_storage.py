"""The last replicated-through value recorded per peer (``ReplicatedThroughStorage``):
``<hbrep root>/replicated-through/<peerId>``.

The znode holds the JSON of :class:`replication.monitoring.replicated_through.ReplicatedThrough`, which
computes the value and merges it with the previous one (times never move backwards); this module only
reads and writes the document. Created without an explicit ACL (the client's default), as before the
storage moved here.
"""

from __future__ import annotations

import json
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.zk.layout import ZNodePaths


class ReplicatedThroughStorage:
    """The replicated-through marks of one cluster, one znode per peer."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths

    def path(self, peer_id: str) -> str:
        """``<hbrep root>/replicated-through/<peerId>``."""
        return self.paths.replicated_through(peer_id)

    def read(self, peer_id: str) -> dict[str, Any] | None:
        """The peer's recorded JSON document; None before the first record."""
        try:
            data, _ = self.zk.get(self.path(peer_id))
        except NoNodeError:
            return None
        return json.loads(data)

    def write(self, peer_id: str, value: dict[str, Any], *, exists: bool) -> None:
        """Store ``value`` as the peer's JSON document (no version guard: the last writer wins).

        ``exists``: whether the caller just read a record. When it did, the znode is set; when it did not,
        the parent is ensured and the znode created, or set if another writer created it meanwhile."""
        data = json.dumps(value).encode()
        path = self.path(peer_id)
        if exists:
            self.zk.set(path, data)
            return
        self.zk.ensure_path(path.rsplit("/", 1)[0])
        try:
            self.zk.create(path, data)
        except Exception:
            self.zk.set(path, data)
