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


def test_an_hbase_peers_requests_carry_the_replication_cluster_id_and_the_source_dirs():
    from replication.cluster.hbase_rpc.sink_client import build_request
    from replication.wal.model import WALKey

    conf = Config.load(env={}, overrides={"hbase.replication.cluster.id": "src-a"})
    dirs = ("file:/srv/hbase/data", "file:/srv/hbase/archive/data")
    client = sink_client_factory(HBASE, conf, dirs)("localhost,16020,1", "", 5.0)
    try:
        assert (client.replication_cluster_id, client.source_hfile_dirs) == ("src-a", dirs)
    finally:
        client.close()
    entries = [(WALKey(b"e" * 32, b"t1", 1, 1000, {b"a": 1}), 0, b"")]
    request = build_request(entries, "src-a", dirs)
    assert (request.replicationClusterId, request.sourceBaseNamespaceDirPath, request.sourceHFileArchiveDirPath) == (
        "src-a",
        *dirs,
    )
    plain = build_request(entries, "uuid-of-source")
    assert not plain.HasField("sourceBaseNamespaceDirPath") and plain.replicationClusterId == "uuid-of-source"
