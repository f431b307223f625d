from __future__ import annotations

import pytest

from replication.zk.cluster_key import BadClusterKey, ClusterKey


def test_parse_ensemble_key():
    key = ClusterKey.parse("zk1,zk2,zk3:2181:/hbase")
    assert key.servers == (("zk1", 2181), ("zk2", 2181), ("zk3", 2181))
    assert key.znode_parent == "/hbase"
    assert key.hosts == "zk1:2181,zk2:2181,zk3:2181"
    assert str(key) == "zk1,zk2,zk3:2181:/hbase"


def test_parse_hosts_with_own_ports():
    key = ClusterKey.parse("a:2182,b:2183:2181:/hbase-b")
    assert key.servers == (("a", 2182), ("b", 2183))
    assert key.znode_parent == "/hbase-b"
    assert ClusterKey.parse(str(key)) == key


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("zk1", "expected quorum:port:/parent"),
        ("zk1:2181", "expected quorum:port:/parent"),
        ("zk1:abc:/hbase", "is not a port number"),
        ("zk1:2181:hbase", "must start with '/'"),
        ("zk1:2181:/hbase/", "must start with '/'"),
        (":2181:/hbase", "expected quorum:port:/parent"),
        ("zk 1:2181:/hbase", "bad quorum host"),
        ("zk1:99999:/hbase", "is not a port number"),
    ],
)
def test_bad_keys(text, why):
    with pytest.raises(BadClusterKey, match=why):
        ClusterKey.parse(text)
