from __future__ import annotations

import uuid

import pytest

from replication.zk.acl import ZooKeeperAccessDenied
from replication.zk.client import connect
from replication.zk.cluster_id import ClusterIdNotFound, create_cluster_id_if_absent, read_cluster_id
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage


def test_cluster_id_is_pbuf_and_created_once(zkc, paths):
    with pytest.raises(ClusterIdNotFound, match="hbaseid"):
        read_cluster_id(zkc, paths)
    cid = uuid.uuid4()
    assert create_cluster_id_if_absent(zkc, paths, cid) == cid
    assert zkc.get(paths.hbaseid)[0] == b"PBUF\x0a\x24" + str(cid).encode()
    assert create_cluster_id_if_absent(zkc, paths) == cid
    assert read_cluster_id(zkc, paths) == cid


def test_digest_auth_gives_creator_only_acls(cluster_key, paths):
    owner = connect(cluster_key, auth="alice:secret")
    stranger = connect(cluster_key)
    other_user = connect(cluster_key, auth="bob:pw")
    try:
        ReplicationPeerStorage(owner, paths).add_peer("1", ReplicationPeerConfig("h:2181:/hbase"))
        ReplicationQueueStorage(owner, paths).add_wal("s,1,1", "1", "s%2C1%2C1.5")
        acls, _ = owner.get_acls(paths.peer("1"))
        assert [(a.id.scheme, a.perms) for a in acls] == [("digest", 31)]
        assert acls[0].id.id.startswith("alice:")
        assert ReplicationPeerStorage(owner, paths).list_peer_ids() == ["1"]
        for client in (stranger, other_user):
            with pytest.raises(ZooKeeperAccessDenied, match="--zk-auth"):
                ReplicationPeerStorage(client, paths).get_peer_config("1")
            with pytest.raises(ZooKeeperAccessDenied, match="--zk-auth"):
                ReplicationQueueStorage(client, paths).snapshot()
    finally:
        owner.delete(paths.parent, recursive=True)
        for client in (owner, stranger, other_user):
            client.stop()
            client.close()
