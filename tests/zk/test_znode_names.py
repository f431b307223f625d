"""The znode-name keys decide where hbrep reads and writes HBase's tree (ZNodePaths, ZKReplicationStorageBase):
with renamed ``zookeeper.znode.parent``, ``.clusterId``, ``.replication.peers``, ``.replication.peers.state``,
``.replication.hfile.refs`` and ``.replication.regions``, peers are added, enabled and removed at the renamed
znodes on a real ZooKeeper, and the default names stay empty."""

from __future__ import annotations

import uuid

from replication.config import Config
from replication.zk import codec
from replication.zk.cluster_id import create_cluster_id_if_absent, read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

RENAMED = {
    "zookeeper.znode.clusterId": "cid",
    "zookeeper.znode.replication.peers": "ps",
    "zookeeper.znode.replication.peers.state": "st",
    "zookeeper.znode.replication.hfile.refs": "hf",
    "zookeeper.znode.replication.regions": "rg",
}


def test_renamed_znodes_are_where_peers_and_the_cluster_id_live(zkc, cluster_key):
    parent = ClusterKey.parse(cluster_key).znode_parent + "-renamed"
    conf = Config.load(env={}, overrides={**RENAMED, "zookeeper.znode.parent": parent})
    paths = ZNodePaths(conf)  # the parent from zookeeper.znode.parent
    assert paths.parent == parent
    try:
        cid = create_cluster_id_if_absent(zkc, paths, uuid.uuid4())
        assert zkc.exists(f"{parent}/cid") and not zkc.exists(f"{parent}/hbaseid")
        assert read_cluster_id(zkc, paths) == cid
        storage = ReplicationPeerStorage(zkc, paths)
        storage.add_peer("3", ReplicationPeerConfig("127.0.0.1:2181:/elsewhere"), enabled=False)
        assert zkc.exists(f"{parent}/replication/ps/3/st") and not zkc.exists(f"{parent}/replication/peers")
        assert storage.list_peer_ids() == ["3"] and storage.is_peer_enabled("3") is False
        storage.set_peer_state("3", True)
        assert codec.parse_peer_state(zkc.get(f"{parent}/replication/ps/3/st")[0], "st") is True
        # removing the peer clears its hfile-refs and serial last-pushed ids under the renamed nodes
        zkc.ensure_path(f"{parent}/replication/hf/3")
        region = "0123456789abcdef0123456789abcdef"
        zkc.ensure_path(paths.last_pushed_sequence_id(region, "3"))
        assert paths.last_pushed_sequence_id(region, "3").startswith(f"{parent}/replication/rg/")
        storage.remove_peer("3")
        assert not zkc.exists(f"{parent}/replication/hf/3")
        assert not zkc.exists(paths.last_pushed_sequence_id(region, "3"))
        assert not zkc.exists(f"{parent}/replication/ps/3")
    finally:
        if zkc.exists(parent):
            zkc.delete(parent, recursive=True)
