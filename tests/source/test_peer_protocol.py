"""Which RPC a peer speaks: the peer configuration's ``hbrep.peer.protocol``, else the peer's own ZooKeeper."""

from __future__ import annotations

import pytest

from replication.cluster.hbase_rpc.sink_client import HBaseSinkClient
from replication.cluster.info import ClusterInfo, write_cluster_info
from replication.config import Config
from replication.source.peer_protocol import (
    HBASE,
    HBREP,
    UnknownPeerProtocol,
    configured_protocol,
    detect_protocol,
    sink_client_factory,
)


def test_the_peer_configuration_names_the_protocol_or_nothing():
    assert configured_protocol("1", {}) is None
    assert configured_protocol("1", {"hbrep.peer.protocol": " HBase "}) == HBASE
    assert configured_protocol("1", {"hbrep.peer.protocol": "hbrep"}) == HBREP
    with pytest.raises(UnknownPeerProtocol, match=r"peer 7: hbrep.peer.protocol='thrift' must be one of hbrep, hbase"):
        configured_protocol("7", {"hbrep.peer.protocol": "thrift"})


def test_a_peer_without_hbreps_cluster_znode_is_an_hbase_cluster(zk):
    zk.ensure_path("/hb/rs")
    zk.ensure_path("/hr/rs")
    write_cluster_info(zk, "/hr", ClusterInfo(name="b", root="/tmp/b", znode_parent="/hr"))
    assert detect_protocol(zk, "/hb") == HBASE
    assert detect_protocol(zk, "/hr") == HBREP


def test_an_hbase_peer_gets_hbases_rpc_client_with_the_configured_codec():
    conf = Config.load(env={}, overrides={"hbase.replication.rpc.codec": "org.apache.hadoop.hbase.codec.KeyValueCodec"})
    assert sink_client_factory(HBREP, conf) is None  # the endpoint's default: hbrep's gRPC SinkClient
    client = sink_client_factory(HBASE, conf)("localhost,16020,1", "", 5.0)
    try:
        assert isinstance(client, HBaseSinkClient) and client.codec_class.endswith(".KeyValueCodec")
    finally:
        client.close()
