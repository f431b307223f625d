from __future__ import annotations

import pytest

from replication.config import Config
from replication.errors import HbrepError
from replication.zk.cluster_id import create_cluster_id_if_absent
from replication.zk.cluster_key import BadClusterKey, ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import (
    BadPeerId,
    PeerExists,
    PeerIsSelf,
    PeerNotFound,
    PeerQueuesLeftOver,
    ReplicationPeerConfig,
    ReplicationPeerStorage,
    parse_table_cfs,
)
from replication.zk.queue_storage import ReplicationQueueStorage


def test_add_get_list_enable_disable(zkc, paths):
    peers = ReplicationPeerStorage(zkc, paths)
    config = ReplicationPeerConfig("zk1,zk2:2181:/hbase", replicate_all=False, table_cfs={"t1": ["cf"]})
    peers.add_peer("2", config, enabled=False)
    assert zkc.get(paths.peer("2"))[0] == config.to_bytes()
    assert zkc.get(paths.peer_state("2"))[0] == b"PBUF\x08\x01"
    assert peers.get_peer_config("2") == config
    assert peers.is_peer_enabled("2") is False
    peers.set_peer_state("2", True)
    assert zkc.get(paths.peer_state("2"))[0] == b"PBUF\x08\x00"
    assert peers.is_peer_enabled("2") is True
    peers.add_peer("10", ReplicationPeerConfig("h:2181:/b"))
    assert peers.list_peer_ids() == ["10", "2"]
    with pytest.raises(PeerExists, match="peer 2 already exists"):
        peers.add_peer("2", config)


def test_refusals(zkc, paths):
    peers = ReplicationPeerStorage(zkc, paths)
    with pytest.raises(BadPeerId, match="'a-b'"):
        peers.add_peer("a-b", ReplicationPeerConfig("h:2181:/hbase"))
    with pytest.raises(BadClusterKey, match="no-port"):
        peers.add_peer("1", ReplicationPeerConfig("no-port"))
    with pytest.raises(BadClusterKey):
        peers.add_peer("1", ReplicationPeerConfig("h:2181:/hbase/"))
    with pytest.raises(PeerNotFound, match="peer 9"):
        peers.set_peer_state("9", True)
    with pytest.raises(PeerNotFound, match="peer 9"):
        peers.get_peer_config("9")
    assert peers.list_peer_ids() == []


def test_reads_094_plain_strings(zkc, paths):
    zkc.create(paths.peer("1"), b"old-zk:2181:/hbase", makepath=True)
    zkc.create(paths.peer_state("1"), b"DISABLED")
    peers = ReplicationPeerStorage(zkc, paths)
    assert peers.get_peer_config("1").cluster_key == "old-zk:2181:/hbase"
    assert peers.is_peer_enabled("1") is False


def test_remove_peer_removes_its_queues_everywhere_and_blocks_reuse_until_then(zkc, paths):
    peers, queues = ReplicationPeerStorage(zkc, paths), ReplicationQueueStorage(zkc, paths)
    peers.add_peer("2", ReplicationPeerConfig("h:2181:/hbase"))
    peers.add_peer("3", ReplicationPeerConfig("h:2181:/hbase"))
    queues.add_wal("a,1,1", "2", "a%2C1%2C1.10")
    queues.add_wal("b,1,1", "2-c,1,1", "c%2C1%2C1.5")
    queues.add_wal("b,1,1", "3", "b%2C1%2C1.7")
    peers.remove_peer("2")
    assert not zkc.exists(paths.peer("2"))
    assert queues.get_all_queues("a,1,1") == []
    assert queues.get_all_queues("b,1,1") == ["3"]
    # leftover queues of an old peer "3" refuse a new peer "3"
    zkc.delete(paths.peer("3"), recursive=True)
    with pytest.raises(PeerQueuesLeftOver, match="peer 3"):
        peers.add_peer("3", ReplicationPeerConfig("h:2181:/hbase"))
    queues.remove_queue("b,1,1", "3")
    peers.add_peer("3", ReplicationPeerConfig("h:2181:/hbase"))
    with pytest.raises(PeerNotFound):
        peers.remove_peer("2")


def test_need_to_replicate():
    all_but = ReplicationPeerConfig("h:1:/a", exclude_namespaces={"ns"}, exclude_table_cfs={"t1": [], "t2": ["x"]})
    assert not all_but.need_to_replicate("ns:t")
    assert not all_but.need_to_replicate("t1", "a")
    assert not all_but.need_to_replicate("default:t1")
    assert all_but.need_to_replicate("t2") and not all_but.need_to_replicate("t2", "x")
    assert all_but.need_to_replicate("t2", "y") and all_but.need_to_replicate("t3", "x")
    only = ReplicationPeerConfig("h:1:/a", replicate_all=False, namespaces={"ns"}, table_cfs={"t1": ["a"], "t4": []})
    assert only.need_to_replicate("ns:any", "z")
    assert only.need_to_replicate("t1") and only.need_to_replicate("t1", "a") and not only.need_to_replicate("t1", "b")
    assert only.need_to_replicate("t4", "q") and not only.need_to_replicate("t5")
    assert not ReplicationPeerConfig("h:1:/a", replicate_all=False).need_to_replicate("t1")


def test_parse_table_cfs():
    assert parse_table_cfs("t1:cf1,cf2; ns:t2:; default:t3:a; t4") == {
        "t1": ["cf1", "cf2"],
        "ns:t2": [],
        "t3": ["a"],
        "t4": [],
    }
    with pytest.raises(HbrepError, match="a:b:c:d"):
        parse_table_cfs("a:b:c:d")


def test_a_peer_that_is_this_cluster_is_refused_with_hbases_reason(zkc, paths, cluster_key):
    peers = ReplicationPeerStorage(zkc, paths)
    own_id = create_cluster_id_if_absent(zkc, paths)
    port = ClusterKey.parse(cluster_key).servers[0][1]
    for alias in (cluster_key, f"localhost:{port}:{paths.parent}"):
        with pytest.raises(PeerIsSelf) as refused:
            peers.add_peer("1", ReplicationPeerConfig(alias))
        assert str(refused.value) == (
            f"peer 1: Invalid cluster key: {alias}, should not replicate to itself for "
            "HBaseInterClusterReplicationEndpoint"
        )
    # another parent holding the same cluster id is the same cluster too (HBase compares ids, not keys)
    twin = ZNodePaths(Config.load(env={}), parent=f"{paths.parent}-twin")
    create_cluster_id_if_absent(zkc, twin, own_id)
    with pytest.raises(PeerIsSelf):
        peers.add_peer("1", ReplicationPeerConfig(f"127.0.0.1:{port}:{twin.parent}"))
    assert peers.list_peer_ids() == []
    # a cluster with its own id, one without an id yet, another ensemble, a custom endpoint: accepted
    other = ZNodePaths(Config.load(env={}), parent=f"{paths.parent}-other")
    create_cluster_id_if_absent(zkc, other)
    peers.add_peer("2", ReplicationPeerConfig(f"127.0.0.1:{port}:{other.parent}"))
    peers.add_peer("3", ReplicationPeerConfig(f"127.0.0.1:{port}:{paths.parent}-no-id-yet"))
    peers.add_peer("4", ReplicationPeerConfig(f"zk9:2181:{paths.parent}"))
    peers.add_peer("5", ReplicationPeerConfig(cluster_key, replication_endpoint_impl="org.example.LocalIndexer"))
    assert peers.list_peer_ids() == ["2", "3", "4", "5"]
    for parent in (twin.parent, other.parent):
        zkc.delete(parent, recursive=True)


def test_remove_peer_drops_its_last_pushed_sequence_ids_as_hbase_does(zkc, paths):
    """Serial peers of a real HBase source leave ``regions/<e[0:2]>/<e[2:4]>/<e[4:]>-<peerId>`` znodes;
    HBase's removePeer deletes that peer's (ZKReplicationQueueStorage.removeLastSequenceIds)."""
    peers = ReplicationPeerStorage(zkc, paths)
    peers.add_peer("2", ReplicationPeerConfig("h:2181:/hbase", serial=True))
    peers.add_peer("12", ReplicationPeerConfig("h:2181:/hbase", serial=True))
    encoded = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"]
    for region in encoded:
        for peer in ("2", "12"):
            zkc.create(f"{paths.regions}/{region[:2]}/{region[2:4]}/{region[4:]}-{peer}", b"x", makepath=True)
    peers.remove_peer("2")
    left = sorted(
        name
        for a in zkc.get_children(paths.regions)
        for b in zkc.get_children(f"{paths.regions}/{a}")
        for name in zkc.get_children(f"{paths.regions}/{a}/{b}")
    )
    assert left == sorted(f"{region[4:]}-12" for region in encoded)
    assert paths.regions == f"{paths.replication}/regions"
