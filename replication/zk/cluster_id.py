"""The cluster id in ``<parent>/hbaseid``: ``PBUF`` + ClusterId{cluster_id = UUID string} (spec §3.1)."""

from __future__ import annotations

import contextlib
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.errors import HbrepError
from replication.zk import codec
from replication.zk.acl import acl_for, zk_access
from replication.zk.layout import ZNodePaths


class ClusterIdNotFound(HbrepError):
    """The cluster has no hbaseid znode yet."""


def read_cluster_id(zk: KazooClient, paths: ZNodePaths) -> uuid.UUID:
    """The cluster's UUID (PBUF or legacy raw string); ClusterIdNotFound naming the znode when absent."""
    with zk_access(paths.hbaseid):
        try:
            data, _ = zk.get(paths.hbaseid)
        except NoNodeError:
            raise ClusterIdNotFound(f"no cluster id: {paths.hbaseid} does not exist") from None
    return codec.parse_cluster_id(data, paths.hbaseid)


def create_cluster_id_if_absent(zk: KazooClient, paths: ZNodePaths, cluster_id: uuid.UUID | None = None) -> uuid.UUID:
    """Write a cluster id (``cluster_id`` or a new random one) unless one exists; return the one in effect."""
    with zk_access(paths.hbaseid):
        zk.ensure_path(paths.parent, acl=acl_for(zk))
        with contextlib.suppress(NodeExistsError):
            zk.create(paths.hbaseid, codec.cluster_id_to_bytes(cluster_id or uuid.uuid4()), acl=acl_for(zk))
    return read_cluster_id(zk, paths)
