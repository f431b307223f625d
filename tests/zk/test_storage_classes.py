"""The storage classes that own hbrep's own znodes (issue 46), on a real ZooKeeper: the paths, the bytes and
the ACLs each writes, and what each read returns when the znode is missing."""

from __future__ import annotations

import json

import pytest
from kazoo.exceptions import NoNodeError

from replication.zk.client import connect
from replication.zk.cluster_id import create_cluster_id_if_absent
from replication.zk.cluster_registration import (
    ClusterInfoStorage,
    HBaseRpcRegistry,
    HBaseSourceStorage,
    LiveServerStorage,
)
from replication.zk.consistency_token_storage import ConsistencyTokenStorage
from replication.zk.dead_server_storage import DeadServerStorage
from replication.zk.lag_target_storage import LagTargetStorage
from replication.zk.replicated_through_storage import ReplicatedThroughStorage

SERVER = "host1,16020,1700000000000"


def _acl_schemes(zk, path) -> list[tuple[str, int]]:
    acls, _ = zk.get_acls(path)
    return [(a.id.scheme, a.perms) for a in acls]


def test_lag_targets_are_one_json_znode_per_peer_replaced_whole(zkc, paths):
    storage = LagTargetStorage(zkc, paths)
    assert storage.path("1") == f"{paths.hbrep_root}/lag-targets/1"
    assert storage.read("1") is None
    storage.write("1", {"peer": 5000, "tables": {}})
    assert zkc.get(storage.path("1"))[0] == b'{"peer": 5000, "tables": {}}'
    storage.write("1", {"peer": None, "tables": {"t1": 100}})
    assert storage.read("1") == {"peer": None, "tables": {"t1": 100}}
    zkc.set(storage.path("1"), b"")
    assert storage.read("1") == {}  # an empty znode reads as no targets
    assert storage.read("2") is None


def test_replicated_through_is_created_once_then_set(zkc, paths):
    storage = ReplicatedThroughStorage(zkc, paths)
    assert storage.path("1") == f"{paths.hbrep_root}/replicated-through/1"
    assert storage.read("1") is None
    storage.write("1", {"peer_id": "1", "through_ms": 10}, exists=False)
    data, stat = zkc.get(storage.path("1"))
    assert data == b'{"peer_id": "1", "through_ms": 10}' and stat.version == 0
    storage.write("1", {"peer_id": "1", "through_ms": 20}, exists=False)  # another writer created it: set
    storage.write("1", {"peer_id": "1", "through_ms": 30}, exists=True)
    data, stat = zkc.get(storage.path("1"))
    assert json.loads(data) == storage.read("1") == {"peer_id": "1", "through_ms": 30} and stat.version == 2
    with pytest.raises(NoNodeError):
        storage.write("2", {"peer_id": "2"}, exists=True)  # "exists" is the caller's promise


def test_consistency_tokens_are_created_once_read_listed_and_deleted(zkc, paths):
    storage = ConsistencyTokenStorage(zkc, paths)
    assert storage.list_tokens() == [] and storage.read("ct-a") is None and not storage.delete("ct-a")
    assert storage.path("ct-a") == f"{paths.hbrep_root}/consistency/ct-a"
    assert storage.create("ct-a", b"\x78\x9crecord")
    assert not storage.create("ct-a", b"other")  # a name is never reused: the first record stays
    assert storage.read("ct-a") == b"\x78\x9crecord"
    assert storage.create("ct-b", b"")
    assert sorted(storage.list_tokens()) == ["ct-a", "ct-b"]
    assert _acl_schemes(zkc, storage.path("ct-a")) == [("world", 31)]  # open without --zk-auth
    assert storage.delete("ct-a") and not storage.delete("ct-a")
    assert storage.list_tokens() == ["ct-b"]


def test_token_records_are_creator_only_under_digest_auth(cluster_key, paths):
    owner = connect(cluster_key, auth="alice:secret")
    try:
        storage = ConsistencyTokenStorage(owner, paths)
        assert storage.create("ct-a", b"x")
        assert _acl_schemes(owner, storage.path("ct-a")) == [("digest", 31)]
    finally:
        owner.delete(paths.parent, recursive=True)
        owner.stop()
        owner.close()


def test_dead_server_marks_keep_the_first_time_seen(zkc, paths):
    storage = DeadServerStorage(zkc, paths)
    storage.ensure_root()
    assert storage.marked_servers() == []
    assert storage.mark(SERVER, 1000) == 1000
    assert zkc.get(paths.dead_server(SERVER))[0] == b"1000"
    assert storage.mark(SERVER, 5000) == 1000  # the first time stays
    zkc.set(paths.dead_server(SERVER), b"garbage")
    assert storage.mark(SERVER, 7000) == 7000  # unreadable: now, and the mark is left as it is
    assert zkc.get(paths.dead_server(SERVER))[0] == b"garbage"
    assert storage.marked_servers() == [SERVER]
    storage.forget(SERVER)
    storage.forget(SERVER)  # nothing to forget: no error
    assert storage.marked_servers() == []


def test_cluster_info_and_hbase_source_are_replaced_in_place(zkc, paths):
    info = ClusterInfoStorage(zkc, paths.parent)
    assert info.path == f"{paths.parent}/hbrep-cluster" and info.read() is None
    info.write(b'{"name": "a"}')
    info.write(b'{"name": "b"}')
    assert info.read() == b'{"name": "b"}' and zkc.get(info.path)[1].version == 1

    source = HBaseSourceStorage(zkc, paths)
    assert source.path == f"{paths.hbrep_root}/hbase-source" and source.read() is None
    assert not source.delete()
    source.write(b'{"rootdir": "/a"}')
    source.write(b'{"rootdir": "/b"}')
    assert source.read() == b'{"rootdir": "/b"}'
    assert source.delete() and source.read() is None


def test_a_live_server_znode_is_ephemeral_and_registered_once(cluster_key, zkc, paths):
    other = connect(cluster_key)
    try:
        storage = LiveServerStorage(other, paths)
        storage.ensure_roots()
        assert zkc.exists(paths.peers) and zkc.exists(paths.rs)
        storage.register(SERVER)
        storage.register(SERVER)  # already there: no error
        data, stat = zkc.get(paths.live_server(SERVER))
        assert data == b"" and stat.ephemeralOwner == other.client_id[0]
        storage.unregister(SERVER)
        with pytest.raises(NoNodeError):
            storage.unregister(SERVER)  # the caller decides what to ignore
        storage.register(SERVER)
    finally:
        other.stop()
        other.close()
    assert zkc.exists(paths.live_server(SERVER)) is None  # gone with the session


def test_a_starting_mark_is_ephemeral_listed_until_started_and_apart_from_the_live_servers(cluster_key, zkc, paths):
    other = connect(cluster_key)
    try:
        storage = LiveServerStorage(other, paths)
        assert storage.starting() == [] and storage.live() == []  # no roots yet: nothing, no error
        storage.ensure_roots()
        storage.announce_starting(SERVER)
        storage.announce_starting(SERVER)  # already there: no error
        assert zkc.exists(paths.starting_server(SERVER)).ephemeralOwner == other.client_id[0]
        assert paths.starting_server(SERVER) == f"{paths.hbrep_root}/starting/{SERVER}"
        assert storage.starting() == [SERVER] and storage.live() == []
        storage.register(SERVER)
        storage.started(SERVER)
        storage.started(SERVER)  # gone already: no error
        assert storage.starting() == [] and storage.live() == [SERVER]
        storage.announce_starting("other,2,3")
    finally:
        other.stop()
        other.close()
    assert LiveServerStorage(zkc, paths).starting() == []  # a server that died starting leaves no mark


def test_a_starting_mark_is_creator_only_with_zookeeper_auth(cluster_key, paths):
    owner = connect(cluster_key, auth="alice:secret")
    try:
        LiveServerStorage(owner, paths).announce_starting(SERVER)
        for path in (paths.starting_servers, paths.starting_server(SERVER)):
            assert _acl_schemes(owner, path) == [("digest", 31)]
        assert LiveServerStorage(owner, paths).starting() == [SERVER]  # the same identity's failover reads it
    finally:
        owner.delete(paths.parent, recursive=True)
        owner.stop()
        owner.close()


def test_the_hbase_rpc_registry_copies_hbaseid_once_and_registers_ephemeral_listeners(cluster_key, paths):
    owner = connect(cluster_key, auth="alice:secret")
    try:
        cluster_id = create_cluster_id_if_absent(owner, paths)
        registry = HBaseRpcRegistry(owner, paths)
        registry.register("host1,16020,1")
        registry.register("host1,16020,1")
        registry.register("host2,16020,2")
        assert owner.get(paths.hbase_rpc_hbaseid)[0] == owner.get(paths.hbaseid)[0]
        assert str(cluster_id).encode() in owner.get(paths.hbase_rpc_hbaseid)[0]
        assert sorted(owner.get_children(paths.hbase_rpc_rs)) == ["host1,16020,1", "host2,16020,2"]
        # what a peer's HBase reads as its own identity is world-readable, as HBase's own hbaseid and rs
        for path in (paths.hbase_rpc_rs, paths.hbase_rpc_hbaseid):
            assert _acl_schemes(owner, path) == [("digest", 31), ("world", 1)]
        assert _acl_schemes(owner, paths.hbase_rpc_server("host1,16020,1")) == [("digest", 31)]
        assert owner.get(paths.hbase_rpc_server("host1,16020,1"))[1].ephemeralOwner == owner.client_id[0]
        registry.unregister("host1,16020,1")
        registry.unregister("host1,16020,1")  # gone already: no error
        assert owner.get_children(paths.hbase_rpc_rs) == ["host2,16020,2"]
    finally:
        owner.delete(paths.parent, recursive=True)
        owner.stop()
        owner.close()
