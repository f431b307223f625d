"""The status's JSON is a contract (``hbrep status replication --json``, the Replication view's ``/api/status``,
XComs): the typed models give back exactly the object the status was when it was a dict, keys, values and
key order."""

from __future__ import annotations

import json

from replication.monitoring.lag_history import lag_history, lag_history_targets
from replication.monitoring.status import lag_violations, to_prometheus
from replication.monitoring.status_models import (
    LeaseHolder,
    MissedLagTarget,
    PeerStatus,
    QueueStatus,
    ReplicationStatus,
    TableLag,
)


def queue(queue_id: str, replicator: str, lag: int, **fields) -> QueueStatus:
    values = dict(
        queue=f"{replicator}/{queue_id}", replicator=replicator, queue_id=queue_id, peer_id=queue_id.split("-")[0],
        recovered=False, dead_servers=(), replicator_alive=True, sizeOfLogQueue=1,
        wals={"rs%2C1%2C1.1000": 10, "rs%2C1%2C1.2000": 0}, pendingBytes=120, replicationLag=lag,
        ageOfLastShippedOp=None, status="ok", stuck=False, error=None, metrics={},
    )  # fmt: skip
    values.update(fields)
    return QueueStatus(**values)


def peer(peer_id: str, state: str = "ENABLED", **fields) -> PeerStatus:
    values = dict(
        peer_id=peer_id, cluster_key="zk:2181:/hbase-b", state=state, shadow=False, hbrep_ships=True,
        peer_error=None, table_cfs="", bandwidth=0, queues=0, sizeOfLogQueue=0, ageOfLastShippedOp=None,
        replicationLag=0, stuck_queues=0, lease=None, replicated_through_ms=1_000, lag_ms=9_000,
        lag_target_ms=None, missed_lag_targets=(), tables={},
    )  # fmt: skip
    values.update(fields)
    return PeerStatus(**values)


def sample_status() -> ReplicationStatus:
    q1 = queue("1", "rs,1,1", 700, ageOfLastShippedOp=40, metrics={"shippedOps": 5, "lastShippedWriteTime": 9_960})
    q2 = queue(
        "1-rs,2,2", "rs,1,1", 0, recovered=True, dead_servers=("rs,2,2",), replicator_alive=False,
        status="awaiting failover",
    )  # fmt: skip
    q3 = queue("2", "rs,1,1", 50, status="stuck", stuck=True, error="bad WAL")
    missed = MissedLagTarget("1", "ns:t", 9_000, 1_000)
    return ReplicationStatus(
        cluster="zk:2181:/hbase",
        root="/data/a",
        cluster_id="c-1",
        now_ms=10_000,
        live_servers=("rs,1,1",),
        peers={
            "1": peer(
                "1",
                queues=2,
                sizeOfLogQueue=2,
                ageOfLastShippedOp=40,
                replicationLag=700,
                lease=LeaseHolder("hbrep_ship/run-1/1", 70_000),
                lag_target_ms=60_000,
                missed_lag_targets=(missed,),
                tables={"ns:t": TableLag(1_000, 9_000, 1_000, True)},
            ),
            "2": peer(
                "2",
                state="DISABLED",
                shadow=True,
                table_cfs="t1:f",
                queues=1,
                sizeOfLogQueue=1,
                replicationLag=50,
                stuck_queues=1,
                lease=LeaseHolder(),
            ),
        },
        queues=(q1, q2, q3),
        global_source={
            "source.shippedOps": 5,
            "source.sizeOfLogQueue": 3,
            "source.replicationLag": 700,
            "source.ageOfLastShippedOp": 40,
        },
        recent_failovers=({"at_ms": 1, "dead_server": "rs,2,2", "claimer": "rs,1,1", "moved": ["1-rs,2,2"]},),
        recent_cycles=({"cycle_id": "c", "finished_ms": 2, "peer_id": "1"},),
        recent_alerts=({"at_ms": 3, "kind": "lag", "message": "late"},),
        checks={"verify/1/t": {"kind": "verify", "peer_id": "1", "table": "t", "counters": {"GOODROWS": 1}}},
        lag_samples={"1": [{"at_ms": 5_000, "through_ms": 500, "tables": {"ns:t": 400}}]},
    )


QUEUE_KEYS = [
    "queue", "replicator", "queue_id", "peer_id", "recovered", "dead_servers", "replicator_alive", "sizeOfLogQueue",
    "wals", "pendingBytes", "replicationLag", "ageOfLastShippedOp", "status", "stuck", "error", "metrics",
    "ageOfLastShippedOpSamples",
]  # fmt: skip
PEER_KEYS = [
    "peer_id", "cluster_key", "state", "shadow", "hbrep_ships", "peer_error", "table_cfs", "bandwidth", "queues",
    "sizeOfLogQueue", "ageOfLastShippedOp", "replicationLag", "stuck_queues", "lease", "replicated_through_ms",
    "lag_ms", "lag_target_ms", "missed_lag_targets", "tables",
]  # fmt: skip
STATUS_KEYS = [
    "cluster", "root", "cluster_id", "now_ms", "live_servers", "peers", "queues", "global", "recent_failovers",
    "recent_cycles", "recent_alerts", "checks", "lag_samples",
]  # fmt: skip


def test_the_json_has_the_keys_in_the_order_of_the_status_dict():
    data = sample_status().to_json()
    assert list(data) == STATUS_KEYS
    assert all(list(p) == PEER_KEYS for p in data["peers"].values())
    assert all(list(q) == QUEUE_KEYS for q in data["queues"])
    assert list(data["peers"]["1"]["tables"]["ns:t"]) == ["replicated_through_ms", "lag_ms", "lag_target_ms",
                                                          "target_missed"]  # fmt: skip
    assert list(data["peers"]["1"]["missed_lag_targets"][0]) == ["peer_id", "table", "lag_ms", "target_ms"]


def test_the_json_pins_every_value():
    data = sample_status().to_json()
    assert data["peers"]["1"] == {
        "peer_id": "1", "cluster_key": "zk:2181:/hbase-b", "state": "ENABLED", "shadow": False, "hbrep_ships": True,
        "peer_error": None, "table_cfs": "", "bandwidth": 0, "queues": 2, "sizeOfLogQueue": 2,
        "ageOfLastShippedOp": 40, "replicationLag": 700, "stuck_queues": 0,
        "lease": {"owner": "hbrep_ship/run-1/1", "expires_ms": 70_000},
        "replicated_through_ms": 1_000, "lag_ms": 9_000, "lag_target_ms": 60_000,
        "missed_lag_targets": [{"peer_id": "1", "table": "ns:t", "lag_ms": 9_000, "target_ms": 1_000}],
        "tables": {"ns:t": {"replicated_through_ms": 1_000, "lag_ms": 9_000, "lag_target_ms": 1_000,
                            "target_missed": True}},
    }  # fmt: skip
    assert data["peers"]["2"]["lease"] == {}  # a lease znode that could not be parsed reads as {}
    assert data["queues"][1] == {
        "queue": "rs,1,1/1-rs,2,2", "replicator": "rs,1,1", "queue_id": "1-rs,2,2", "peer_id": "1",
        "recovered": True, "dead_servers": ["rs,2,2"], "replicator_alive": False, "sizeOfLogQueue": 1,
        "wals": {"rs%2C1%2C1.1000": 10, "rs%2C1%2C1.2000": 0}, "pendingBytes": 120, "replicationLag": 0,
        "ageOfLastShippedOp": None, "status": "awaiting failover", "stuck": False, "error": None, "metrics": {},
        "ageOfLastShippedOpSamples": [],
    }  # fmt: skip
    assert data["global"] == {"source.shippedOps": 5, "source.sizeOfLogQueue": 3, "source.replicationLag": 700,
                              "source.ageOfLastShippedOp": 40}  # fmt: skip
    assert data["live_servers"] == ["rs,1,1"]
    assert data["recent_failovers"][0]["moved"] == ["1-rs,2,2"]
    assert data["lag_samples"] == {"1": [{"at_ms": 5_000, "through_ms": 500, "tables": {"ns:t": 400}}]}
    # what the CLI prints (sorted keys) and what the view serves (insertion order) are plain JSON
    assert json.loads(json.dumps(data, sort_keys=True)) == data
    assert json.dumps(data).startswith('{"cluster": "zk:2181:/hbase", "root": "/data/a", "cluster_id": "c-1"')


def test_lag_violations_only_count_enabled_peers_over_the_threshold():
    status = sample_status()
    assert [q.queue for q in lag_violations(status, 30)] == ["rs,1,1/1"]  # peer 2 is DISABLED
    assert lag_violations(status, 1000) == []


def test_lag_history_of_the_view_ends_with_the_status_of_now():
    status = sample_status()
    history = lag_history(status)
    assert history["1"] == [[5_000, 4_500], [10_000, 700]]
    assert history["1/ns:t"] == [[5_000, 4_600], [10_000, 9_000]]
    assert history["2"] == [[10_000, 50]]
    assert lag_history_targets(status) == {"1": 60_000, "1/ns:t": 1_000}


def test_prometheus_text_reads_the_models():
    text = to_prometheus(sample_status())
    assert 'hbrep_peer_replicationLag{peer_id="1",state="ENABLED"} 700.0' in text
    assert 'hbrep_source_stuck{peer_id="2",queue_id="2",replicator="rs,1,1"} 1.0' in text
    assert "hbrep_global_source_sizeOfLogQueue 3.0" in text
