"""When failover first saw each dead region server (``DeadServerStorage``): ``<hbrep root>/dead/<server>``.

A mark's data is the first-seen time in epoch ms as decimal ASCII. Marks live in ZooKeeper so that separate
failover runs, on separate machines, agree when a server died (:mod:`replication.failover` decides what a
mark means). Created without an explicit ACL (the client's default), as before the storage moved here.
"""

from __future__ import annotations

from contextlib import suppress

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.zk.layout import ZNodePaths


class DeadServerStorage:
    """The dead-server marks of one cluster."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths

    def path(self, server: str) -> str:
        """``<hbrep root>/dead/<server>``."""
        return self.paths.dead_server(server)

    def ensure_root(self) -> None:
        """Create ``<hbrep root>/dead`` (and its parents) if missing."""
        self.zk.ensure_path(self.paths.dead_servers)

    def mark(self, server: str, now_ms: int) -> int:
        """The server's first-seen-dead time: ``now_ms`` when this call created the mark, else the time the
        existing mark holds (``now_ms`` if that is not a number). The root must exist (:meth:`ensure_root`)."""
        try:
            self.zk.create(self.path(server), str(now_ms).encode())
            return now_ms
        except NodeExistsError:
            raw, _ = self.zk.get(self.path(server))
            try:
                return int(raw.decode())
            except ValueError:
                return now_ms

    def marked_servers(self) -> list[str]:
        """Every server with a mark (the root must exist)."""
        return self.zk.get_children(self.paths.dead_servers)

    def marks(self) -> dict[str, int]:
        """Every marked server and its first-seen-dead time (ms); {} when there is no root yet. A mark whose
        data is not a number is left out."""
        out: dict[str, int] = {}
        try:
            servers = self.zk.get_children(self.paths.dead_servers)
        except NoNodeError:
            return out
        for server in servers:
            with suppress(NoNodeError, ValueError):
                out[server] = int(self.zk.get(self.path(server))[0].decode())
        return out

    def forget(self, server: str) -> None:
        """Drop the server's mark; nothing when it has none."""
        with suppress(NoNodeError):
            self.zk.delete(self.path(server))
