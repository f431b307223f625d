"""``hbrep.replicated.through.margin.ms``: a lag target not above the margin is refused (a caught-up peer
always lags by the margin, so such a target would always be missed); the key decides where that line is.
Real ZooKeeper, the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys

from replication.config import Config
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage


def _set_target(cluster_key: str, ms: int, margin_ms: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBREP")}
    env["HBREP__hbrep__replicated__through__margin__ms"] = str(margin_ms)
    return subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", cluster_key, "set_lag_target", "1", str(ms)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_the_margin_decides_which_lag_targets_are_refused(cluster_key):
    parent = ClusterKey.parse(cluster_key).znode_parent
    with connected(cluster_key) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(Config.load(env={}), parent=parent)).add_peer(
            "1", ReplicationPeerConfig("127.0.0.1:2181:/elsewhere")
        )
    refused = _set_target(cluster_key, 300, margin_ms=500)
    assert refused.returncode == 1 and "not above hbrep.replicated.through.margin.ms (500 ms)" in refused.stderr
    accepted = _set_target(cluster_key, 300, margin_ms=200)
    assert accepted.returncode == 0, accepted.stderr
    assert "lag target 300 ms" in accepted.stdout
