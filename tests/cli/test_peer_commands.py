from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replication.zk.client import connect
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage


def hbrep(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_peer_lifecycle_queues_and_claim(cluster_key):
    c = ("--cluster", cluster_key)
    assert hbrep(*c, "add_peer", "2", "zk9:2181:/hbase-b", "--table-cfs", "t1:cf1,cf2").returncode == 0
    bad = hbrep(*c, "add_peer", "a-b", "zk9:2181:/hbase-b")
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [
        "hbrep: error: bad peer id 'a-b': it must be non-empty, without '-', '/' or blanks"
    ]
    protocol = hbrep(*c, "add_peer", "4", "zk9:2181:/hbase-b", "--config", "hbrep.peer.protocol=thrift")
    assert protocol.returncode == 1 and protocol.stderr.strip().splitlines() == [
        "hbrep: error: peer 4: hbrep.peer.protocol='thrift' must be one of hbrep, hbase"
    ]
    badkey = hbrep(*c, "add_peer", "3", "zk9:/hbase-b")
    assert badkey.returncode == 1 and "bad cluster key 'zk9:/hbase-b'" in badkey.stderr
    assert hbrep(*c, "disable_peer", "2").returncode == 0
    listed = hbrep(*c, "list_peers")
    header, row = listed.stdout.splitlines()[:2]
    assert header.split() == [
        "PEER_ID", "CLUSTER_KEY", "ENDPOINT_CLASSNAME", "STATE", "REPLICATE_ALL", "NAMESPACES", "TABLE_CFS",
        "BANDWIDTH", "SERIAL",
    ]  # fmt: skip
    assert row.split() == ["2", "zk9:2181:/hbase-b", "DISABLED", "false", "default.t1:cf1,cf2", "0", "false"]
    rows = json.loads(hbrep(*c, "list_peers", "--json").stdout)
    assert rows[0]["STATE"] == "DISABLED" and rows[0]["TABLE_CFS"] == "default.t1:cf1,cf2"
    assert hbrep(*c, "enable_peer", "2").returncode == 0
    assert json.loads(hbrep(*c, "list_peers", "--json").stdout)[0]["STATE"] == "ENABLED"
    missing = hbrep(*c, "enable_peer", "7")
    assert missing.returncode == 1 and missing.stderr.strip() == "hbrep: error: peer 7 does not exist"

    zk = connect(cluster_key)
    try:
        paths = ZNodePaths(parent=ClusterKey.parse(cluster_key).znode_parent)
        storage = ReplicationQueueStorage(zk, paths)
        storage.add_wal("1.1.1.2,60020,123456790", "2", "1.1.1.2,60020.1214")
        storage.set_wal_position("1.1.1.2,60020,123456790", "2", "1.1.1.2,60020.1214", 254)
        text = hbrep(*c, "queues").stdout.splitlines()
        assert text == [
            f"{paths.queues}/",
            "  1.1.1.2,60020,123456790/",
            "    2/",
            "      1.1.1.2,60020.1214  (position 254)",
        ]
        claim = hbrep(*c, "failover", "claim", "1.1.1.2,60020,123456790", "--by", "1.1.1.3,60020,123456630")
        assert claim.returncode == 0, claim.stderr
        assert "claimed 2 -> 1.1.1.3,60020,123456630/2-1.1.1.2,60020,123456790: 1 WAL(s)" in claim.stdout
        tree = json.loads(hbrep(*c, "queues", "--json").stdout)
        assert tree == {"1.1.1.3,60020,123456630": {"2-1.1.1.2,60020,123456790": {"1.1.1.2,60020.1214": 254}}}
        once = hbrep(*c, "failover", "--once")
        # failover needs the cluster's root (log splitting): a bare ZooKeeper tree is refused clearly
        refused = f"no hbrep cluster at {cluster_key} (nor a real HBase source: see `hbrep add_peer --shadow`)"
        assert once.returncode == 1 and once.stderr.strip() == f"hbrep: error: {refused}"
        assert hbrep(*c, "remove_peer", "2").returncode == 0
        assert json.loads(hbrep(*c, "queues", "--json").stdout) == {"1.1.1.3,60020,123456630": {}}
        assert json.loads(hbrep(*c, "list_peers", "--json").stdout) == []
    finally:
        zk.delete(paths.parent, recursive=True)
        zk.stop()
        zk.close()


def test_add_peer_config_takes_secret_references_and_refuses_secrets(cluster_key):
    c = ("--cluster", cluster_key)
    plain = hbrep(*c, "add_peer", "4", "zk9:2181:/hbase-b", "--config", "hbrep.cluster.token=tok-plain-123")
    assert plain.returncode == 1
    assert plain.stderr.strip().splitlines() == [
        "hbrep: error: peer configuration hbrep.cluster.token would store a secret in ZooKeeper: set "
        "hbrep.cluster.token.secret to a reference instead (env:NAME, file:NAME, airflow-var:NAME, airflow-conn:NAME)"
    ]
    assert "tok-plain-123" not in plain.stdout + plain.stderr
    added = hbrep(*c, "add_peer", "4", "zk9:2181:/hbase-b", "--config", "hbrep.cluster.token.secret=env:PEER_TOKEN")
    assert added.returncode == 0, added.stderr
    zk = connect(ClusterKey.parse(cluster_key))
    try:
        data, _ = zk.get(f"{ClusterKey.parse(cluster_key).znode_parent}/replication/peers/4")
    finally:
        zk.stop()
        zk.close()
    assert b"hbrep.cluster.token.secret" in data and b"env:PEER_TOKEN" in data


@pytest.mark.slow
def test_add_peer_config_pairs_land_in_the_peer_configuration(cluster_key):
    c = ("--cluster", cluster_key)
    added = hbrep(*c, "add_peer", "5", "zk9:2181:/real", "--config", "hbrep.peer.protocol=hbase", "--config", "k=a=b")
    assert added.returncode == 0, added.stderr
    zk = connect(cluster_key)
    try:
        storage = ReplicationPeerStorage(zk, ZNodePaths(parent=ClusterKey.parse(cluster_key).znode_parent))
        assert storage.get_peer_config("5").configuration == {"hbrep.peer.protocol": "hbase", "k": "a=b"}
    finally:
        zk.stop()
        zk.close()
    bad = hbrep(*c, "add_peer", "6", "zk9:2181:/real", "--config", "novalue")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1 and "KEY=VALUE" in bad.stderr


def test_add_peer_of_this_cluster_is_one_error_line(cluster_key):
    from replication.config import Config
    from replication.zk.cluster_id import create_cluster_id_if_absent

    key = ClusterKey.parse(cluster_key)
    zk = connect(key)
    try:
        create_cluster_id_if_absent(zk, ZNodePaths(Config.load(env={}), parent=key.znode_parent))
        refused = hbrep("--cluster", cluster_key, "add_peer", "1", cluster_key)
        assert refused.returncode == 1 and refused.stdout == ""
        assert refused.stderr.strip().splitlines() == [
            f"hbrep: error: peer 1: Invalid cluster key: {cluster_key}, should not replicate to itself for "
            "HBaseInterClusterReplicationEndpoint"
        ]
        assert not zk.exists(ZNodePaths(Config.load(env={}), parent=key.znode_parent).peer("1"))
    finally:
        zk.delete(key.znode_parent, recursive=True)
        zk.stop()
        zk.close()
