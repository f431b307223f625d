"""The commands added with the MasterService client (issues 43 and 49) on an hbrep cluster: the same names
work there through hbrep's own znodes and descriptor files, and what only a real HBase has is refused in
one line. A real ZooKeeper; the cluster is its recorded info and root (no region server is needed)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from replication.cluster.info import ClusterInfo, write_cluster_info
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey

pytestmark = pytest.mark.slow


def hbrep(key: ClusterKey, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", "--cluster", str(key), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def ok(key: ClusterKey, *args: str) -> str:
    done = hbrep(key, *args)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def one_line_error(key: ClusterKey, *args: str) -> str:
    done = hbrep(key, *args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("hbrep: error: "), done.stderr
    return lines[0]


@pytest.fixture
def hbrep_cluster(zk_server, tmp_path):
    key = ClusterKey.parse(f"127.0.0.1:{zk_server.port}:/hbrep-{uuid.uuid4().hex[:8]}")
    with connected(key) as zk:
        write_cluster_info(zk, key.znode_parent, ClusterInfo("c1", str(tmp_path / "root"), key.znode_parent))
        try:
            yield key
        finally:
            zk.delete(key.znode_parent, recursive=True)


def test_peer_commands_of_a_real_hbase_only_are_one_line_on_hbrep(hbrep_cluster):
    key = hbrep_cluster
    assert ok(key, "peer_modification_enabled").strip() == "true"
    assert "has no peer modification switch" in one_line_error(key, "peer_modification_switch", "off")
    assert "hbase_peer_doctor is for a real HBase" in one_line_error(key, "hbase_peer_doctor")
    assert "truncate: not supported on an hbrep cluster" in one_line_error(key, "truncate", "t1")


def test_exclude_lists_and_list_peer_configs_on_hbrep(hbrep_cluster):
    key, peer = hbrep_cluster, f"p{uuid.uuid4().hex[:5]}"
    ok(key, "add_peer", peer, "127.0.0.1:2181:/elsewhere", "--state", "DISABLED")
    ok(key, "append_peer_exclude_namespaces", peer, "ns1,ns2")
    ok(key, "remove_peer_exclude_namespaces", peer, "ns1")
    ok(key, "append_peer_exclude_tableCFs", peer, "t1:a;ns3:t2:")
    ok(key, "append_peer_exclude_tableCFs", peer, "t1:b")
    ok(key, "remove_peer_exclude_tableCFs", peer, "ns3:t2:")
    assert one_line_error(key, "remove_peer_exclude_tableCFs", peer, "t9") == (
        f"hbrep: error: No table: t9 in table-cfs config of peer: {peer}"
    )
    configs = json.loads(ok(key, "list_peer_configs", "--json"))
    assert configs[peer]["exclude_namespaces"] == ["ns2"]
    assert configs[peer]["exclude_table_cfs"] == {"t1": ["a", "b"]}
    assert configs[peer] == json.loads(ok(key, "get_peer_config", peer, "--json"))
    assert ok(key, "list_peer_configs").splitlines()[0] == f"PeerId {peer}"
    ok(key, "remove_peer", peer)
    assert json.loads(ok(key, "list_peer_configs", "--json")) == {}


def test_list_exists_and_drop_on_hbrep(hbrep_cluster):
    key = hbrep_cluster
    ok(key, "create_table", "t1", "a:1")
    ok(key, "create_table", "ns1:t2", "b")
    assert json.loads(ok(key, "list", "--json")) == ["ns1:t2", "t1"]
    assert json.loads(ok(key, "list", "t.*", "--json")) == ["t1"]
    assert ok(key, "list").splitlines() == ["TABLE", "ns1:t2", "t1", "2 row(s)"]
    assert ok(key, "exists", "t1").strip() == "true"
    assert "disable it first" in one_line_error(key, "drop", "t1")
    ok(key, "disable", "t1")
    ok(key, "drop", "t1")
    assert ok(key, "exists", "t1").strip() == "false"
    assert "does not exist" in one_line_error(key, "drop", "t1")
