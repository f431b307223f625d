"""registry: the ``<parent>/master`` znode's bytes (Hypothesis over what a master could write and over
garbage), ``hbase.masters``, and finding the master on a real ZooKeeper."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.config import Config
from replication.errors import HbrepError
from replication.hbase.registry import (
    MasterAddress,
    NoActiveMaster,
    active_master,
    configured_masters,
    is_live_hbase,
    master_candidates,
    master_znode_bytes,
    names_real_hbase,
    parse_master_znode,
)
from replication.zk import codec
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths

hosts = st.from_regex(r"[a-z][a-z0-9.-]{0,30}", fullmatch=True)
masters = st.builds(MasterAddress, hosts, st.integers(1, 65535), st.integers(0, 2**63 - 1))


def with_metadata(data: bytes, writer: bytes) -> bytes:
    """What HBase's RecoverableZooKeeper writes: 0xFF, int32 id length, the id, then the data."""
    return b"\xff" + len(writer).to_bytes(4, "big") + writer + data


@given(masters, st.binary(max_size=40))
def test_the_master_a_znode_names_is_read_back_with_or_without_hbases_metadata(master, writer):
    data = master_znode_bytes(master, info_port=16010)
    assert parse_master_znode(data) == master
    assert parse_master_znode(with_metadata(data, b"master:16000" + writer)) == master


@given(st.binary(max_size=200))
def test_any_bytes_parse_or_fail_with_one_line_naming_the_znode(data):
    try:
        parse_master_znode(data, "/hbase/master")
    except codec.BadZNodeData as exc:
        assert "/hbase/master" in str(exc) and "\n" not in str(exc)


def test_a_master_znode_without_a_port_is_refused():
    data = master_znode_bytes(MasterAddress("h", 1)).replace(b"\x10\x01", b"")
    with pytest.raises(codec.BadZNodeData, match="no host or port"):
        parse_master_znode(data, "m")


def test_hbase_masters_lists_host_port_entries_in_order():
    conf = Config.load(env={}, overrides={"hbase.masters": "m1:16000, m2:17000,m3"})
    assert [m.address for m in configured_masters(conf)] == ["m1:16000", "m2:17000", "m3:16000"]
    with pytest.raises(HbrepError, match=r"hbase\.masters: bad entry 'm1:x'"):
        configured_masters(Config.load(env={}, overrides={"hbase.masters": "m1:x"}))


@pytest.fixture
def parent(zk_server):
    key = ClusterKey.parse(f"127.0.0.1:{zk_server.port}:/hbase-{uuid.uuid4().hex[:10]}")
    with connected(key) as zk:
        zk.ensure_path(key.znode_parent)
        yield key, zk, ZNodePaths(parent=key.znode_parent)
        zk.delete(key.znode_parent, recursive=True)


def test_no_master_znode_is_one_line_naming_the_cluster_key(parent):
    key, zk, paths = parent
    with pytest.raises(NoActiveMaster, match=f"^no active HBase master at {key}$"):
        active_master(zk, paths, key)
    assert not is_live_hbase(zk, paths) and not names_real_hbase(zk, paths)


def test_the_master_znode_names_the_master_and_the_parent_a_real_hbase(parent):
    key, zk, paths = parent
    master = MasterAddress("127.0.0.1", 16000, 1234)
    zk.create(f"{key.znode_parent}/master", with_metadata(master_znode_bytes(master), b"master:16000xxxxxxxx"))
    assert active_master(zk, paths, key) == master
    assert is_live_hbase(zk, paths) and names_real_hbase(zk, paths)
    conf = Config.load(env={}, overrides={"hbase.masters": "other:16000"})
    assert [m.address for m in master_candidates(zk, paths, key, conf)] == ["other:16000", "127.0.0.1:16000"]


def test_a_stopped_hbase_still_named_by_its_running_znode(parent):
    key, zk, paths = parent
    zk.create(f"{key.znode_parent}/running", b"")
    assert names_real_hbase(zk, paths) and not is_live_hbase(zk, paths)
