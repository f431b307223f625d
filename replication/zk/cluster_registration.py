"""How a cluster and its servers make themselves known in ZooKeeper: the znodes other programs look for.

- :class:`ClusterInfoStorage`: ``<parent>/hbrep-cluster``, an embedded cluster's description (JSON of
  :class:`replication.cluster.info.ClusterInfo`), read before any configuration.
- :class:`HBaseSourceStorage`: ``<hbrep root>/hbase-source``, a real HBase source registered with
  ``add_peer --shadow`` (JSON of :class:`replication.cluster.hbase_source.HBaseSource`).
- :class:`LiveServerStorage`: ``<parent>/rs/<server>``, a region server's ephemeral "I am live" znode
  (HBase's ``HRegionServer.createMyEphemeralNode``), the ``rs`` and ``peers`` roots it watches, and hbrep's
  ephemeral ``<hbrep root>/starting/<server>`` of a server not live yet.
- :class:`HBaseRpcRegistry`: ``<parent>/hbrep-hbase-rpc``, the HBase-shaped znode parent through which a
  real HBase finds the region servers' HBase RPC listeners (see :mod:`replication.cluster.hbase_registry`).

These classes read and write bytes; the documents' meaning stays with the cluster modules that own them.
ACLs are as they were before the writes moved here: the HBase RPC registry's znodes get
:func:`replication.zk.acl.acl_for`, the others the client's default; the starting marks, under hbrep's root,
get :func:`replication.zk.acl.acl_for` as hbrep's other znodes there.
"""

from __future__ import annotations

import contextlib

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.zk.acl import acl_for, client_readable_acl_for, zk_access
from replication.zk.layout import ZNodePaths, cluster_info_path


class ClusterInfoStorage:
    """``<parent>/hbrep-cluster`` of one znode parent."""

    def __init__(self, zk: KazooClient, parent: str):
        self.zk = zk
        self.parent = parent
        self.path = cluster_info_path(parent)

    def read(self) -> bytes | None:
        """The stored description; None when the parent holds no hbrep cluster."""
        try:
            data, _ = self.zk.get(self.path)
        except NoNodeError:
            return None
        return data

    def write(self, data: bytes) -> None:
        """Store the description: created with its parents, or replaced (no version guard) when present."""
        try:
            self.zk.create(self.path, data, makepath=True)
        except NodeExistsError:
            self.zk.set(self.path, data)


class HBaseSourceStorage:
    """``<hbrep root>/hbase-source``: the one real HBase source registered with a cluster, if any."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths
        self.path = paths.hbase_source

    def read(self) -> bytes | None:
        """The registration's bytes; None when there is none."""
        try:
            data, _ = self.zk.get(self.path)
        except NoNodeError:
            return None
        return data

    def write(self, data: bytes) -> None:
        """Register: created with its parents, or replaced (no version guard) when present."""
        try:
            self.zk.create(self.path, data, makepath=True)
        except NodeExistsError:
            self.zk.set(self.path, data)

    def delete(self) -> bool:
        """Drop the registration; True when there was one."""
        try:
            self.zk.delete(self.path)
        except NoNodeError:
            return False
        return True


class LiveServerStorage:
    """``<parent>/rs``: one ephemeral child per live region server, owned by that server's session."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths

    def ensure_roots(self) -> None:
        """Create ``<parent>/replication/peers`` and ``<parent>/rs`` if missing (a region server watches both
        before it is live)."""
        self.zk.ensure_path(self.paths.peers)
        self.zk.ensure_path(self.paths.rs)

    def register(self, server: str) -> None:
        """Create the server's ephemeral ``rs/<server>`` znode (empty; parents as needed); nothing when this
        session or another already has one."""
        with contextlib.suppress(NodeExistsError):
            self.zk.create(self.paths.live_server(server), b"", ephemeral=True, makepath=True)

    def unregister(self, server: str) -> None:
        """Delete the server's ``rs/<server>`` znode (a clean stop); raises what kazoo raises (NoNodeError when
        it is gone already), so that the caller decides what to ignore."""
        self.zk.delete(self.paths.live_server(server))

    def announce_starting(self, server: str) -> None:
        """Create the server's ephemeral ``<hbrep root>/starting/<server>`` znode, before it makes its first WAL
        directory or queue: from then on failover does not take it for dead (see :meth:`starting`). hbrep's
        own: HBase's master only expires servers it knew online, so a starting HBase server needs no mark."""
        with contextlib.suppress(NodeExistsError):
            self.zk.create(self.paths.starting_server(server), b"", acl=acl_for(self.zk), ephemeral=True, makepath=True)

    def started(self, server: str) -> None:
        """Delete the starting mark once the ``rs`` znode exists (nothing when it is gone already)."""
        with contextlib.suppress(NoNodeError):
            self.zk.delete(self.paths.starting_server(server))

    def live(self) -> list[str]:
        """The servers with an ``rs`` znode, sorted ([] when the ``rs`` root is missing)."""
        try:
            return sorted(self.zk.get_children(self.paths.rs))
        except NoNodeError:
            return []

    def starting(self) -> list[str]:
        """The servers that announced their start and have no ``rs`` znode yet, or died starting before their
        session expired ([] when none)."""
        try:
            return sorted(self.zk.get_children(self.paths.starting_servers))
        except NoNodeError:
            return []


class HBaseRpcRegistry:
    """``<parent>/hbrep-hbase-rpc``: a copy of ``hbaseid`` and one ephemeral ``rs/<host,port,startcode>`` per
    HBase RPC listener, in the layout HBase's replication source reads a peer's cluster through."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths

    def register(self, server_name: str) -> None:
        """Copy ``<parent>/hbaseid`` into the registry (once: an existing copy stays) and create the listener's
        ephemeral ``rs`` child (once). With ZooKeeper auth the copy and the ``rs`` parent are readable by every
        client, as HBase's own (:func:`client_readable_acl_for`), the ``rs`` child creator-only (:func:`acl_for`).
        ZooKeeperAccessDenied on NoAuth."""
        zk, paths = self.zk, self.paths
        with zk_access(paths.hbase_rpc):
            cluster_id, _ = zk.get(paths.hbaseid)
            # what a peer's HBase reads as its own identity (the id, the list of listeners): world-readable
            zk.ensure_path(paths.hbase_rpc_rs, acl=client_readable_acl_for(zk))
            with contextlib.suppress(NodeExistsError):
                zk.create(paths.hbase_rpc_hbaseid, cluster_id, acl=client_readable_acl_for(zk))
            with contextlib.suppress(NodeExistsError):
                zk.create(paths.hbase_rpc_server(server_name), b"", ephemeral=True, acl=acl_for(zk))

    def unregister(self, server_name: str) -> None:
        """Delete the listener's ``rs`` child; nothing when it is gone already."""
        with contextlib.suppress(NoNodeError):
            self.zk.delete(self.paths.hbase_rpc_server(server_name))
