"""``add_peer --shadow`` and ``remove_peer`` of a shadow peer: a real HBase source's peer that HBase
holds DISABLED (so it queues and keeps every WAL) and hbrep ships (``replication/zk/shadow_peer.py``).

Both go through HBase's own Admin API (``replication/devstack/hbase_admin.py``): a running HBase
learns about peers only from its master's procedures.
"""

from __future__ import annotations

import json
from dataclasses import replace

from kazoo.client import KazooClient

from replication.cli.common import CliContext
from replication.cluster.errors import NoClusterInfo
from replication.cluster.hbase_source import HBaseSource, check_rootdir, read_hbase_source, register_hbase_source
from replication.cluster.info import read_cluster_info
from replication.devstack.hbase_admin import hbase_admin
from replication.errors import HbrepError
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig
from replication.zk.shadow_peer import SHADOW_KEY


def _refuse_hbrep_cluster(zk: KazooClient, paths: ZNodePaths, ctx: CliContext) -> None:
    try:
        read_cluster_info(zk, paths)
    except NoClusterInfo:
        return
    raise HbrepError(
        f"--shadow is for a real HBase source; {ctx.cluster} is an hbrep cluster, whose own region servers ship"
    )


def _source_rootdir(zk: KazooClient, paths: ZNodePaths, rootdir: str | None) -> str:
    if rootdir:
        return check_rootdir(rootdir)
    registered = read_hbase_source(zk, paths)
    if registered is None:
        raise HbrepError("--shadow needs --rootdir the first time: HBase's hbase.rootdir as hbrep reads it")
    return registered.rootdir


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
    ctx: CliContext,
    zk: KazooClient,
    paths: ZNodePaths,
    peer_id: str,
    config: ReplicationPeerConfig,
    rootdir: str | None,
) -> str:
    """Register the real HBase at ``ctx.cluster`` as a source (its rootdir) and add ``peer_id`` to it through
    HBase's Admin, DISABLED and marked ``hbrep.peer.shadow=true``; the rootdir it recorded."""
    _refuse_hbrep_cluster(zk, paths, ctx)
    recorded = _source_rootdir(zk, paths, rootdir)
    register_hbase_source(zk, paths, HBaseSource(recorded))
    shadow = replace(config, configuration={**config.configuration, SHADOW_KEY: "true"})
    hbase_admin(ctx.cluster, "add-peer", json.dumps(admin_peer_json(peer_id, shadow)))
    return recorded


def remove_shadow_peer(ctx: CliContext, peer_id: str) -> None:
    """Remove a shadow peer through HBase's Admin (HBase drops its queues itself)."""
    hbase_admin(ctx.cluster, "remove-peer", peer_id)
