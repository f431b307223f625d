"""Cluster keys: ``quorum:clientPort:znodeParent`` (HBase ``ZKConfig.transformClusterKey``).

``zk1,zk2,zk3:2181:/hbase`` names three servers on port 2181 with the parent ``/hbase``. Quorum
entries may carry their own ``host:port``; the last two ``:`` parts are then the port and the parent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replication.errors import HbrepError

_PARENT = re.compile(r"/.*[^/]|/")  # HBase requires /.*[^/]; a bare "/" is the ZooKeeper root
_HOST = re.compile(r"^[A-Za-z0-9._\-\[\]]+$")


class BadClusterKey(HbrepError):
    """A cluster key that does not have the form quorum:port:/parent."""


@dataclass(frozen=True)
class ClusterKey:
    """One cluster's ZooKeeper address: quorum servers (host, port) and the znode parent."""

    servers: tuple[tuple[str, int], ...]
    znode_parent: str

    @classmethod
    def parse(cls, text: str) -> ClusterKey:
        """Parse ``h1,h2:2181:/hbase`` (or ``h1:2181,h2:2182:2181:/hbase``); BadClusterKey if malformed."""
        raw = text.strip()
        parts = raw.rsplit(":", 2)
        if len(parts) != 3 or not parts[0]:
            raise BadClusterKey(f"bad cluster key {text!r}: expected quorum:port:/parent, e.g. zk1,zk2:2181:/hbase")
        quorum, port_text, parent = parts
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise BadClusterKey(f"bad cluster key {text!r}: client port {port_text!r} is not a port number")
        if not _PARENT.fullmatch(parent):
            raise BadClusterKey(
                f"bad cluster key {text!r}: znode parent {parent!r} must start with '/' and not end with '/'"
            )
        default_port = int(port_text)
        servers = []
        for entry in quorum.split(","):
            host, _, port = entry.strip().partition(":")
            if not host or not _HOST.match(host):
                raise BadClusterKey(f"bad cluster key {text!r}: bad quorum host {entry!r}")
            if port and (not port.isdigit() or not 0 < int(port) < 65536):
                raise BadClusterKey(f"bad cluster key {text!r}: bad port in quorum entry {entry!r}")
            servers.append((host, int(port) if port else default_port))
        return cls(tuple(servers), parent)

    @property
    def client_port(self) -> int:
        return self.servers[0][1]

    @property
    def hosts(self) -> str:
        """kazoo's connection string: ``h1:p1,h2:p2`` (no chroot; HBase paths are absolute)."""
        return ",".join(f"{host}:{port}" for host, port in self.servers)

    def __str__(self) -> str:
        ports = {port for _, port in self.servers}
        if len(ports) == 1:
            return f"{','.join(host for host, _ in self.servers)}:{self.client_port}:{self.znode_parent}"
        return f"{self.hosts}:{self.client_port}:{self.znode_parent}"
