"""Turning replication of a whole table on and off, as HBase's Admin does (the shell's
``enable_table_replication``, ``disable_table_replication`` and ``list_replicated_tables``).

``enable`` first makes sure every peer has the table (``checkAndSyncTableDescToPeers``): a peer without it
gets it, created with this cluster's descriptor; a peer whose table has other families refuses the
whole command, before any scope changes. Then every family gets REPLICATION_SCOPE 1.

Departure: a peer that is a real HBase cluster (no hbrep cluster description in its ZooKeeper) is not
written to; the command refuses and names it, so the operator creates the table there with HBase's
shell (HBase's own client would create it through the peer's master).
"""

from __future__ import annotations

from kazoo.client import KazooClient

from replication.cluster.info import NoClusterInfo, read_cluster_info
from replication.config import Config
from replication.errors import HbrepError
from replication.fs import get_filesystem
from replication.kerberos import kerberos_identity
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tls import zk_client_tls
from replication.zk.client import connected, session_timeout_s
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage

REPLICATION_SCOPE_GLOBAL = 1


class TableDiffersOnPeer(HbrepError):
    """The peer has the table with other families (HBase: "the table descriptors are not same")."""


def _registry(zk: KazooClient, paths: ZNodePaths) -> TableRegistry:
    fs, root = get_filesystem(read_cluster_info(zk, paths).root)
    return TableRegistry(fs, root)


def replicated_families(zk: KazooClient, paths: ZNodePaths) -> list[tuple[str, str, int]]:
    """(table, family, scope) of every family whose scope is not 0, tables and families sorted."""
    rows = []
    for desc in _registry(zk, paths).list():
        if desc.is_system:
            continue
        for name in sorted(desc.families):
            if desc.families[name].scope != 0:
                rows.append((desc.name, name, desc.families[name].scope))
    return rows


def set_table_scope(zk: KazooClient, paths: ZNodePaths, table: str, scope: int) -> TableDescriptor:
    """Set ``scope`` on every family of ``table`` (UnknownTable when it does not exist)."""
    registry = _registry(zk, paths)
    desc = registry.get(table)
    for family in sorted(desc.families):
        desc = registry.alter_scope(table, family, scope)
    return desc


def _same_schema(ours: TableDescriptor, theirs: TableDescriptor) -> bool:
    """HBase compares descriptors for replication ignoring the scopes (compareForReplication)."""
    return {n: f.max_versions for n, f in ours.families.items()} == {
        n: f.max_versions for n, f in theirs.families.items()
    }


def enable_table_replication(zk: KazooClient, paths: ZNodePaths, conf: Config, table: str) -> list[str]:
    """Create ``table`` on every peer lacking it, then scope 1 on all its families; the peers it was created on."""
    source = _registry(zk, paths)
    desc = source.get(table)
    storage = ReplicationPeerStorage(zk, paths)
    missing: list[tuple[str, TableRegistry]] = []
    for peer_id in storage.list_peer_ids():
        key = ClusterKey.parse(storage.get_peer_config(peer_id).cluster_key)
        with connected(
            key,
            timeout=15.0,
            tls=zk_client_tls(conf),
            kerberos=kerberos_identity(conf),
            session_timeout=session_timeout_s(conf),
        ) as peer_zk:
            try:
                peer = _registry(peer_zk, ZNodePaths(conf, parent=key.znode_parent))
            except NoClusterInfo:
                raise HbrepError(
                    f"peer {peer_id} at {key} is not an hbrep cluster: create table {table} there with HBase's "
                    "shell, or remove the peer, then run enable_table_replication again"
                ) from None
            if not peer.exists(table):
                missing.append((peer_id, peer))
            elif not _same_schema(desc, peer.get(table)):
                raise TableDiffersOnPeer(
                    f"Table {table} exists in peer cluster {peer_id}, but the table descriptors are not same when "
                    "compared with source cluster. Thus can not enable the table's replication switch."
                )
    created = []
    for peer_id, peer in missing:
        if not peer.exists(table):  # two peers may name the same cluster
            peer.create(desc)
            created.append(peer_id)
    set_table_scope(zk, paths, table, REPLICATION_SCOPE_GLOBAL)
    return created
