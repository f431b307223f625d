"""Without ``--cluster``, the CLI's cluster is ``hbase.zookeeper.quorum``, ``hbase.zookeeper.property.clientPort``
and ``zookeeper.znode.parent`` (as an HBase client finds its cluster): the keys decide which ZooKeeper and
which tree ``hbrep list_peers`` reads. Real ZooKeeper, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from replication.config import Config
from replication.net import free_port
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage


def _list_peers(quorum: str, port: int, parent: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBREP")}
    env.update({
        "HBREP__hbase__zookeeper__quorum": quorum,
        "HBREP__hbase__zookeeper__property__clientPort": str(port),
        "HBREP__zookeeper__znode__parent": parent,
    })  # fmt: skip
    return subprocess.run([sys.executable, "-m", "replication.cli", "list_peers", "--json"],
                          capture_output=True, text=True, timeout=120, env=env)  # fmt: skip


def test_the_quorum_port_and_parent_keys_pick_the_cluster(cluster_key, zk_server):
    parent = ClusterKey.parse(cluster_key).znode_parent
    with connected(cluster_key) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(Config.load(env={}), parent=parent)).add_peer(
            "5", ReplicationPeerConfig("127.0.0.1:2181:/elsewhere")
        )
    found = _list_peers("127.0.0.1", zk_server.port, parent)
    assert found.returncode == 0, found.stderr
    assert [row["PEER_ID"] for row in json.loads(found.stdout)] == ["5"]
    other_parent = _list_peers("127.0.0.1", zk_server.port, parent + "-other")
    assert other_parent.returncode == 0 and json.loads(other_parent.stdout) == []
    wrong_port = _list_peers("127.0.0.1", free_port(), parent)
    assert wrong_port.returncode != 0 and "ZooKeeper at 127.0.0.1:" in wrong_port.stderr
