from __future__ import annotations

import uuid

import pytest

from replication.zk import codec
from replication.zk.peer_storage import ReplicationPeerConfig


def test_position_bytes_match_hbase():
    assert codec.position_to_bytes(254) == bytes.fromhex("5042554608FE01")
    assert codec.parse_position(bytes.fromhex("5042554608FE01")) == 254


def test_position_legacy_forms():
    assert codec.parse_position(b"") == 0
    assert codec.parse_position(None) == 0
    assert codec.parse_position((123456789).to_bytes(8, "big")) == 123456789
    assert codec.parse_position(b"4711") == 4711  # 0.94 ASCII decimal
    with pytest.raises(codec.BadZNodeData, match="/q/wal1"):
        codec.parse_position(b"\x01\x02\x03", "/q/wal1")
    with pytest.raises(codec.BadZNodeData, match="/q/wal2"):
        codec.parse_position(b"PBUF\xff\xff", "/q/wal2")


def test_peer_state_bytes_match_hbase():
    assert codec.peer_state_to_bytes(True) == bytes.fromhex("504255460800")
    assert codec.peer_state_to_bytes(False) == bytes.fromhex("504255460801")
    assert codec.parse_peer_state(bytes.fromhex("504255460801")) is False
    assert codec.parse_peer_state(b"ENABLED") is True
    assert codec.parse_peer_state(b"DISABLED") is False
    with pytest.raises(codec.BadZNodeData):
        codec.parse_peer_state(b"on")


def test_peer_bytes_field_layout():
    data = ReplicationPeerConfig(cluster_key="zk1:2181:/hbase").to_bytes()
    # PBUF, clusterkey (1, len 15), bandwidth=0 (7), replicate_all=true (8), serial=false (11)
    assert data == b"PBUF" + b"\x0a\x0fzk1:2181:/hbase" + b"\x38\x00" + b"\x40\x01" + b"\x58\x00"


def test_peer_with_table_cfs_round_trips():
    config = ReplicationPeerConfig(
        cluster_key="a,b:2181:/hb",
        replicate_all=False,
        table_cfs={"t1": ["cf1", "cf2"], "ns:t2": []},
        namespaces={"ns3"},
        bandwidth=1024,
        serial=True,
        configuration={"k": "v"},
    )
    data = config.to_bytes()
    # table_cfs entry of t1: field 5 containing TableName{namespace "default", qualifier "t1"}
    assert b"\x0a\x07default\x12\x02t1" in data
    assert ReplicationPeerConfig.from_bytes(data) == config


def test_peer_legacy_plain_string():
    assert ReplicationPeerConfig.from_bytes(b"zk1:2181:/hbase") == ReplicationPeerConfig(cluster_key="zk1:2181:/hbase")


def test_lock_and_cluster_id():
    assert codec.lock_to_bytes("s,1,2") == b"PBUF\x0a\x05s,1,2"
    assert codec.parse_lock(b"PBUF\x0a\x05s,1,2") == "s,1,2"
    assert codec.parse_lock(b"/hbase/rs/s,1,2") == "/hbase/rs/s,1,2"
    cid = uuid.UUID("0b7a1d2e-1111-4222-8333-444455556666")
    data = codec.cluster_id_to_bytes(cid)
    assert data == b"PBUF\x0a\x24" + str(cid).encode()
    assert codec.parse_cluster_id(data) == cid
    assert codec.parse_cluster_id(str(cid).encode()) == cid
    with pytest.raises(codec.BadZNodeData, match="hbaseid"):
        codec.parse_cluster_id(b"nope")


def test_hbase_recoverable_zookeeper_metadata_is_removed_before_parsing():
    # what a real HBase 2.6.1 master wrote at <parent>/hbaseid (captured; salt bytes shortened to 8)
    cluster_id = "7115bb1d-d250-4fb6-9317-1e2d738ac9ee"
    raw = b"\xff\x00\x00\x00\x14master:39395" + bytes(range(8)) + b"PBUF\n$" + cluster_id.encode()
    assert str(codec.parse_cluster_id(raw)) == cluster_id
    assert codec.parse_peer_state(b"\xff\x00\x00\x00\x02ab" + codec.PEER_STATE_DISABLED) is False
    assert codec.parse_position(b"\xff\x00\x00\x00\x00" + codec.position_to_bytes(254)) == 254
    with pytest.raises(codec.BadZNodeData, match=r"hbaseid: .* is not a UUID"):
        codec.parse_cluster_id(b"\xff\x00\x00\x01\x00short")


# What a real HBase 2.6.1 master wrote into <parent>/replication/peers/3/peer-state (tests/interop):
# RecoverableZooKeeper's metadata (0xFF, length 20, "master:55917" and an 8-byte id), then PBUF.
REAL_HBASE_PEER_STATE = b"\xff\x00\x00\x00\x14master:55917\xa3:\xb7\xc1HT\x19\xcbPBUF\x08\x01"


def test_recoverable_zookeeper_metadata_is_stripped_on_every_read():

    assert codec.strip_metadata(REAL_HBASE_PEER_STATE) == b"PBUF\x08\x01"
    assert codec.parse_peer_state(REAL_HBASE_PEER_STATE) is False
    prefix = b"\xff\x00\x00\x00\x05rs:1x"
    assert codec.parse_position(prefix + codec.position_to_bytes(1234)) == 1234
    assert codec.parse_lock(prefix + codec.lock_to_bytes("h,1,2")) == "h,1,2"
    assert codec.strip_metadata(b"") == b"" and codec.strip_metadata(b"PBUF") == b"PBUF"


def test_data_starting_with_0xff_without_a_whole_prefix_is_read_as_it_is():
    assert codec.strip_metadata(b"\xff\x00\x00") == b"\xff\x00\x00"
    assert codec.strip_metadata(b"\xff\x00\x00\x00\x30abc") == b"\xff\x00\x00\x00\x30abc"
    with pytest.raises(codec.BadZNodeData, match=r"/q/w: negative position -1 \(8-byte long\)"):
        codec.parse_position(b"\xff" * 8, "/q/w")
