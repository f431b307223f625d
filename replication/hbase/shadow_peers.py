"""Adding and removing a shadow peer (``add_peer --shadow``, ``remove_peer``, ``make demo-hbase``): a real
HBase source's peer that HBase holds DISABLED (so it queues and keeps every WAL) and hbrep ships
(``replication/zk/shadow_peer.py``).

Both go through the master's own procedures (``master_admin``: AddReplicationPeer, RemoveReplicationPeer
over HBase's RPC, no JDK needed): a running HBase learns about peers only from them.
"""

from __future__ import annotations

from dataclasses import replace

from kazoo.client import KazooClient

from replication.cluster.errors import NoClusterInfo
from replication.cluster.hbase_source import HBaseSource, check_rootdir, read_hbase_source, register_hbase_source
from replication.cluster.info import read_cluster_info
from replication.config import Config
from replication.errors import HbrepError
from replication.hbase.master_admin import master_admin
from replication.tables.hbase_thrift import thrift_address
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig
from replication.zk.shadow_peer import SHADOW_KEY


def _refuse_hbrep_cluster(zk: KazooClient, paths: ZNodePaths, cluster: ClusterKey) -> None:
    try:
        read_cluster_info(zk, paths)
    except NoClusterInfo:
        return
    raise HbrepError(
        f"--shadow is for a real HBase source; {cluster} is an hbrep cluster, whose own region servers ship"
    )


def _source(zk: KazooClient, paths: ZNodePaths, rootdir: str | None, thrift: str | None) -> HBaseSource:
    """The registration to record: what is given, else what was recorded before."""
    registered = read_hbase_source(zk, paths)
    if registered is None and not rootdir:
        raise HbrepError("--shadow needs --rootdir the first time: HBase's hbase.rootdir as hbrep reads it")
    recorded_rootdir = registered.rootdir if registered else ""
    recorded_thrift = registered.thrift if registered else ""
    return HBaseSource(
        rootdir=check_rootdir(rootdir) if rootdir else recorded_rootdir,
        thrift=thrift_address(thrift) if thrift else recorded_thrift,
    )


def add_shadow_peer(
    cluster: ClusterKey,
    zk: KazooClient,
    paths: ZNodePaths,
    peer_id: str,
    config: ReplicationPeerConfig,
    rootdir: str | None,
    thrift: str | None = None,
    conf: Config | None = None,
) -> str:
    """Register the real HBase at ``cluster`` as a source (its rootdir, its Thrift server) and add
    ``peer_id`` to it through the master's AddReplicationPeer procedure, DISABLED and marked
    ``hbrep.peer.shadow=true``; the rootdir it recorded. Nothing is recorded when the master is down or
    refuses the peer (checked first with IsMasterRunning)."""
    _refuse_hbrep_cluster(zk, paths, cluster)
    source = _source(zk, paths, rootdir, thrift)
    shadow = replace(config, configuration={**config.configuration, SHADOW_KEY: "true"})
    with master_admin(zk, paths, cluster, conf) as admin:
        admin.add_replication_peer(peer_id, shadow, enabled=False)
    register_hbase_source(zk, paths, source)
    return source.rootdir


def remove_shadow_peer(cluster: ClusterKey, peer_id: str, conf: Config | None = None) -> None:
    """Remove a shadow peer through the master's RemoveReplicationPeer procedure (HBase drops its queues)."""
    with connected(cluster, **(zk_options(conf) if conf is not None else {})) as zk:
        paths = ZNodePaths(conf, parent=cluster.znode_parent)
        with master_admin(zk, paths, cluster, conf) as admin:
            admin.remove_replication_peer(peer_id)
