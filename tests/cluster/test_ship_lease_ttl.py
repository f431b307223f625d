"""``hbrep.ship.lease.ms``: how long a snapshot step's lease of a peer keeps other cycles off it when its
owner never commits or releases (a ship task that died): with a 2 s lease another owner takes the peer
after 2 s; with a minute it is still busy. Real region servers and ZooKeeper, the real snapshot step."""

from __future__ import annotations

import time

import pytest

from replication.source.cycle import snapshot_step
from replication.zk import lease
from replication.zk.cluster_key import ClusterKey
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow


def test_a_dead_owners_lease_blocks_others_for_the_configured_time(embedded, cluster_conf, tmp_path):
    key = ClusterKey.parse(embedded.cluster_key)
    ReplicationPeerStorage(embedded.zk, embedded.paths).add_peer("1", ReplicationPeerConfig("127.0.0.1:2181:/nowhere"))
    outcomes = {}
    for lease_ms in (2000, 60000):
        conf = cluster_conf.with_overrides({"hbrep.ship.lease.ms": lease_ms})
        first = snapshot_step(embedded.zk, key, conf, owner=f"dead-{lease_ms}", work_dir=tmp_path / f"a{lease_ms}")
        assert first.peers == ["1"]
        time.sleep(2.5)  # the first owner neither commits nor releases
        later = snapshot_step(embedded.zk, key, conf, owner=f"next-{lease_ms}", work_dir=tmp_path / f"b{lease_ms}")
        outcomes[lease_ms] = (later.peers, sorted(later.busy_peers))
        # leave the peer free for the next round
        lease.release(embedded.zk, embedded.paths, "1", f"next-{lease_ms}" if later.peers else f"dead-{lease_ms}")
    assert outcomes[2000] == (["1"], [])
    assert outcomes[60000] == ([], ["1"])
