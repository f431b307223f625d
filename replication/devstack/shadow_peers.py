"""Adding and removing a shadow peer (``add_peer --shadow``, ``remove_peer``, ``make demo-hbase``): a real
HBase source's peer that HBase holds DISABLED (so it queues and keeps every WAL) and hbrep ships
(``replication/zk/shadow_peer.py``).

Both go through HBase's own Admin API (``hbase_admin.py``): a running HBase learns about peers only
from its master's procedures.
"""

from __future__ import annotations

import json
from dataclasses import replace

from kazoo.client import KazooClient

from replication.cluster.errors import NoClusterInfo
from replication.cluster.hbase_source import HBaseSource, check_rootdir, read_hbase_source, register_hbase_source
from replication.cluster.info import read_cluster_info
from replication.devstack.hbase_admin import hbase_admin
from replication.errors import HbrepError
from replication.tables.hbase_thrift import thrift_address
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


def admin_peer_json(peer_id: str, config: ReplicationPeerConfig) -> dict[str, object]:
    """The AdminTool ``add-peer`` JSON of a shadow peer: the config, held DISABLED."""
    return {
        "id": peer_id,
        "cluster_key": config.cluster_key,
        "enabled": False,
        "replicate_all": config.replicate_all,
        "table_cfs": config.table_cfs,
        "namespaces": sorted(config.namespaces) if config.namespaces is not None else None,
        "bandwidth": config.bandwidth,
        "serial": config.serial,
        "configuration": dict(config.configuration),
    }


def add_shadow_peer(
    cluster: ClusterKey,
    zk: KazooClient,
    paths: ZNodePaths,
    peer_id: str,
    config: ReplicationPeerConfig,
    rootdir: str | None,
    thrift: str | None = None,
) -> str:
    """Register the real HBase at ``cluster`` as a source (its rootdir, its Thrift server) and add
    ``peer_id`` to it through HBase's Admin, DISABLED and marked ``hbrep.peer.shadow=true``; the rootdir
    it recorded."""
    _refuse_hbrep_cluster(zk, paths, cluster)
    source = _source(zk, paths, rootdir, thrift)
    register_hbase_source(zk, paths, source)
    shadow = replace(config, configuration={**config.configuration, SHADOW_KEY: "true"})
    hbase_admin(cluster, "add-peer", json.dumps(admin_peer_json(peer_id, shadow)))
    return source.rootdir


def remove_shadow_peer(cluster: ClusterKey, peer_id: str) -> None:
    """Remove a shadow peer through HBase's Admin (HBase drops its queues itself)."""
    hbase_admin(cluster, "remove-peer", peer_id)
