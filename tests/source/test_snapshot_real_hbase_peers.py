"""On a real HBase source hbrep ships only its shadow peers: an ordinary peer is HBase's own to ship."""

from __future__ import annotations

from replication.source.manifest import PeerTask
from replication.source.snapshot import _leave_plain_peers_to_hbase


def _peer(peer_id: str, enabled: bool, configuration: dict[str, str]) -> PeerTask:
    config = {"configuration": configuration}
    return PeerTask(peer_id, f"127.0.0.1:2181:/{peer_id}", enabled, config, None, None, [])


def test_only_shadow_peers_stay_shipped_by_hbrep_on_a_real_hbase_source():
    peers = {
        "native": _peer("native", True, {}),
        "marked_false": _peer("marked_false", True, {"hbrep.peer.shadow": "false"}),
        "shadow": _peer("shadow", True, {"hbrep.peer.shadow": "true"}),
        "paused": _peer("paused", False, {"hbrep.peer.shadow": "true"}),
    }
    _leave_plain_peers_to_hbase(peers)
    assert {pid: p.enabled for pid, p in peers.items()} == {
        "native": False,
        "marked_false": False,
        "shadow": True,
        "paused": False,
    }
