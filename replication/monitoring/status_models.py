"""The replication status as typed models (``replication.monitoring.status`` builds them).

The library, the CLI, the operators and the Replication view read attributes; dicts exist only at the
edges: :meth:`ReplicationStatus.to_json` gives the JSON object that ``hbrep status replication --json``
prints, the Replication view's ``/api/status`` serves and an XCom carries (keys, values and key order as
they were when the status was a dict; tests/monitoring/test_status_models.py pins it).

HBase's metric names are kept as attribute names (``sizeOfLogQueue``, ``ageOfLastShippedOp``,
``replicationLag``, ``pendingBytes``) so that they read as in HBase's metrics and in the JSON.

What the metrics store keeps (failover events, cycles, alerts, check outcomes, lag samples) is passed
through as the JSON records it stores: their fields are written by several writers and read back as
records, and the status adds nothing to them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

JsonRecord = dict[str, Any]
"""A record of the metrics store (or of ZooKeeper) passed through as stored."""


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a peer's ship lease (``zk.lease``) and until when; fields missing from the znode are None."""

    owner: str | None = None
    expires_ms: int | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> LeaseHolder | None:
        if raw is None:
            return None
        return cls(raw.get("owner"), raw.get("expires_ms"))

    def to_json(self) -> JsonRecord:
        """The znode's object: ``{"owner", "expires_ms"}`` (a field the znode lacked stays out)."""
        out: JsonRecord = {}
        if self.owner is not None:
            out["owner"] = self.owner
        if self.expires_ms is not None:
            out["expires_ms"] = self.expires_ms
        return out


@dataclass(frozen=True)
class MissedLagTarget:
    """A (peer, table) over its lag target (``table`` None: the peer's own target, no table known)."""

    peer_id: str
    table: str | None
    lag_ms: int
    target_ms: int

    @property
    def over_ms(self) -> int:
        """How far the lag is over the target (worst first sorts by it)."""
        return self.lag_ms - self.target_ms

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> MissedLagTarget:
        return cls(raw["peer_id"], raw["table"], raw["lag_ms"], raw["target_ms"])

    def to_json(self) -> JsonRecord:
        return {"peer_id": self.peer_id, "table": self.table, "lag_ms": self.lag_ms, "target_ms": self.target_ms}


@dataclass(frozen=True)
class TableLag:
    """One table of a peer: replicated through, lag behind now, its lag target and whether it is missed."""

    replicated_through_ms: int
    lag_ms: int
    lag_target_ms: int | None
    target_missed: bool

    def to_json(self) -> JsonRecord:
        return {
            "replicated_through_ms": self.replicated_through_ms,
            "lag_ms": self.lag_ms,
            "lag_target_ms": self.lag_target_ms,
            "target_missed": self.target_missed,
        }


@dataclass(frozen=True)
class QueueStatus:
    """One replication queue ``<replicator>/<queue_id>``: its WALs and positions, HBase's gauges, its state."""

    queue: str
    replicator: str
    queue_id: str
    peer_id: str
    recovered: bool
    dead_servers: tuple[str, ...]
    replicator_alive: bool
    sizeOfLogQueue: int
    wals: Mapping[str, int]
    pendingBytes: int
    replicationLag: int
    ageOfLastShippedOp: int | None
    status: str
    stuck: bool
    error: str | None
    metrics: Mapping[str, int | float]
    """The queue's numeric counters from the metrics store (HBase's ``source.<queueId>.<name>``)."""
    ageOfLastShippedOpSamples: tuple[int, ...] = ()
    """The last ages its ship tasks set, oldest first (``age_histogram``: /jmx's histogram of them)."""

    def to_json(self) -> JsonRecord:
        return {
            "queue": self.queue,
            "replicator": self.replicator,
            "queue_id": self.queue_id,
            "peer_id": self.peer_id,
            "recovered": self.recovered,
            "dead_servers": list(self.dead_servers),
            "replicator_alive": self.replicator_alive,
            "sizeOfLogQueue": self.sizeOfLogQueue,
            "wals": dict(self.wals),
            "pendingBytes": self.pendingBytes,
            "replicationLag": self.replicationLag,
            "ageOfLastShippedOp": self.ageOfLastShippedOp,
            "status": self.status,
            "stuck": self.stuck,
            "error": self.error,
            "metrics": dict(self.metrics),
            "ageOfLastShippedOpSamples": list(self.ageOfLastShippedOpSamples),
        }


@dataclass(frozen=True)
class PeerStatus:
    """One peer: its configuration and state, HBase's gauges over its queues, replicated through and lag
    targets (per peer and per table), and who holds its ship lease."""

    peer_id: str
    cluster_key: str
    state: str
    """``ENABLED`` or ``DISABLED``, as HBase's tree says (a shadow peer is DISABLED and hbrep ships it)."""
    shadow: bool
    hbrep_ships: bool
    peer_error: str | None
    table_cfs: str
    bandwidth: int
    queues: int
    sizeOfLogQueue: int
    ageOfLastShippedOp: int | None
    replicationLag: int
    stuck_queues: int
    lease: LeaseHolder | None
    replicated_through_ms: int
    lag_ms: int
    lag_target_ms: int | None
    missed_lag_targets: tuple[MissedLagTarget, ...]
    tables: Mapping[str, TableLag] = field(default_factory=dict)

    def to_json(self) -> JsonRecord:
        return {
            "peer_id": self.peer_id,
            "cluster_key": self.cluster_key,
            "state": self.state,
            "shadow": self.shadow,
            "hbrep_ships": self.hbrep_ships,
            "peer_error": self.peer_error,
            "table_cfs": self.table_cfs,
            "bandwidth": self.bandwidth,
            "queues": self.queues,
            "sizeOfLogQueue": self.sizeOfLogQueue,
            "ageOfLastShippedOp": self.ageOfLastShippedOp,
            "replicationLag": self.replicationLag,
            "stuck_queues": self.stuck_queues,
            "lease": None if self.lease is None else self.lease.to_json(),
            "replicated_through_ms": self.replicated_through_ms,
            "lag_ms": self.lag_ms,
            "lag_target_ms": self.lag_target_ms,
            "missed_lag_targets": [m.to_json() for m in self.missed_lag_targets],
            "tables": {table: row.to_json() for table, row in self.tables.items()},
        }


@dataclass(frozen=True)
class ReplicationStatus:
    """The whole picture (``replication.monitoring.status.replication_status``) at ``now_ms``."""

    cluster: str
    root: str
    cluster_id: str
    now_ms: int
    live_servers: tuple[str, ...]
    peers: Mapping[str, PeerStatus]
    queues: tuple[QueueStatus, ...]
    global_source: Mapping[str, int | float]
    """HBase's global ``source.*`` figures (``source.sizeOfLogQueue``, ``source.shippedOps``, ...)."""
    recent_failovers: tuple[JsonRecord, ...] = ()
    recent_cycles: tuple[JsonRecord, ...] = ()
    recent_alerts: tuple[JsonRecord, ...] = ()
    checks: Mapping[str, JsonRecord] = field(default_factory=dict)
    lag_samples: Mapping[str, list[JsonRecord]] = field(default_factory=dict)
    """Per peer, its stored replicated-through samples (``MetricsStore.record_lag_sample``), oldest first."""

    def queues_of(self, peer_ids: Iterable[str]) -> list[QueueStatus]:
        wanted = set(peer_ids)
        return [q for q in self.queues if q.peer_id in wanted]

    def to_json(self) -> JsonRecord:
        """The JSON object of the status (the CLI's ``--json``, the view's ``/api/status``, an XCom)."""
        return {
            "cluster": self.cluster,
            "root": self.root,
            "cluster_id": self.cluster_id,
            "now_ms": self.now_ms,
            "live_servers": list(self.live_servers),
            "peers": {pid: peer.to_json() for pid, peer in self.peers.items()},
            "queues": [q.to_json() for q in self.queues],
            "global": dict(self.global_source),
            "recent_failovers": list(self.recent_failovers),
            "recent_cycles": list(self.recent_cycles),
            "recent_alerts": list(self.recent_alerts),
            "checks": dict(self.checks),
            "lag_samples": dict(self.lag_samples),
        }
