"""``hbrep status replication``: per peer and queue, computed now from ZooKeeper, the WALs and metrics.

``sizeOfLogQueue`` is derived at read time: the queue's WAL count, the WAL being read included (HBase 2.x's
``ReplicationSourceLogQueue``; summed per peer and globally). ``ageOfLastShippedOp`` is the value the queue's
last ship task set, as HBase's ``MetricsSource`` sets it at ship time (ship time − the write time of the last
shipped entry; 0 once caught up; ``replication.monitoring.metrics._fold_age``), never recomputed here (per
peer and globally the largest of the queues'). ``replicationLag`` is
0 when every queued byte is shipped, otherwise now − the write time of the first entry not yet
shipped (read from the WAL at its recorded position), as HBase's replication delay is defined.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import open_source
from replication.config import Config
from replication.monitoring.metrics import NOT_SUMMED, MetricsStore, age_of_last_shipped_op, size_of_log_queue
from replication.monitoring.replicated_through import PendingWal
from replication.wal.locator import WalLocator
from replication.wal.names import order_wals
from replication.wal.reader import open_wal
from replication.zk import lease
from replication.zk.cluster_key import ClusterKey
from replication.zk.peer_storage import ReplicationPeerStorage, format_table_cfs
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.shadow_peer import hbrep_ships, is_shadow_peer

log = logging.getLogger(__name__)


def _first_unshipped(
    fs, locator: WalLocator, servers: list[str], wals: list[PendingWal]
) -> tuple[int | None, int, str | None]:
    """(write time of the first unshipped entry or None, pending bytes, error) over WALs in read order."""
    pending = 0
    first_time: int | None = None
    for group in order_wals(wals):
        for wal in group:
            path = locator.find(wal.name, servers)
            if path is None:
                continue
            length = fs.readable_length(path)
            if length <= wal.position:
                continue
            try:
                reader = open_wal(path, fs=fs, start=wal.position)
                trailer = 8 if reader.trailer_present else 0
                pending += max(0, length - trailer - reader.position)
                if first_time is None:
                    for raw in reader.raw_entries():
                        first_time = raw.key.write_time
                        break
            except Exception as exc:  # a corrupt WAL shows as the queue's error
                return first_time, pending, str(exc)
    return first_time, pending, None


def replication_status(zk: KazooClient, key: ClusterKey, conf: Config, now_ms: int | None = None) -> dict[str, Any]:
    """The whole picture: peers (state, lag), queues (size, positions, lag, stuck), global source.* sums."""
    now = now_ms or int(time.time() * 1000)
    source = open_source(zk, key, conf)
    peers_storage = ReplicationPeerStorage(zk, source.paths)
    snapshot = ReplicationQueueStorage(zk, source.paths).snapshot()
    live = set(zk.get_children(source.paths.rs)) if zk.exists(source.paths.rs) else set()
    stored = MetricsStore(source.fs, source.root).load()
    peers: dict[str, dict[str, Any]] = {}
    for peer_id in peers_storage.list_peer_ids():
        config = peers_storage.get_peer_config(peer_id)
        enabled_in_zk = peers_storage.is_peer_enabled(peer_id)
        ships, peer_error = hbrep_ships(peer_id, config, enabled_in_zk)
        peers[peer_id] = {
            "peer_id": peer_id,
            "cluster_key": config.cluster_key,
            "state": "ENABLED" if enabled_in_zk else "DISABLED",  # as HBase's tree says
            "shadow": is_shadow_peer(config),  # HBase holds it DISABLED and hbrep ships it
            "hbrep_ships": ships and not peer_error,
            "peer_error": peer_error or None,
            "table_cfs": format_table_cfs(config.table_cfs),
            "bandwidth": config.bandwidth,
            "queues": 0,
            "sizeOfLogQueue": 0,
            "ageOfLastShippedOp": None,
            "replicationLag": 0,
            "stuck_queues": 0,
            "lease": lease.holder(zk, source.paths, peer_id),
        }
    locator = WalLocator(source.fs, source.root)
    queues = []
    for state in snapshot.queues():
        info = ReplicationQueueInfo.parse(state.queue_id)
        qkey = f"{state.server}/{state.queue_id}"
        metrics = stored["queues"].get(qkey, {})
        wals = [PendingWal(name, ws.position) for name, ws in state.wals.items()]
        servers = [state.server, *info.dead_region_servers]
        first_time, pending, read_error = _first_unshipped(source.fs, locator, servers, wals)
        lag = 0 if first_time is None else max(0, now - first_time)
        alive = state.server in live
        status = metrics.get("status", "ok") if metrics else "new"
        error = metrics.get("error")
        if read_error:
            status, error = "stuck", read_error
        if not alive:
            status = "awaiting failover"
        peer_state = peers.get(info.peer_id, {}).get("state")
        if peer_state == "DISABLED":
            status = "disabled"
        elif peer_state is None:
            status = "orphaned (peer removed)"
        queue = {
            "queue": qkey,
            "replicator": state.server,
            "queue_id": state.queue_id,
            "peer_id": info.peer_id,
            "recovered": info.is_recovered,
            "dead_servers": info.dead_region_servers,
            "replicator_alive": alive,
            "sizeOfLogQueue": size_of_log_queue(len(state.wals)),
            "wals": {name: ws.position for name, ws in sorted(state.wals.items())},
            "pendingBytes": pending,
            "replicationLag": lag,
            "ageOfLastShippedOp": metrics.get("ageOfLastShippedOp"),
            "status": status,
            "stuck": status in ("stuck", "failed"),
            "error": error,
            "metrics": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
        }
        queues.append(queue)
        peer = peers.get(info.peer_id)
        if peer is not None:
            peer["queues"] += 1
            peer["sizeOfLogQueue"] += queue["sizeOfLogQueue"]
            peer["ageOfLastShippedOp"] = age_of_last_shipped_op(
                [peer["ageOfLastShippedOp"], queue["ageOfLastShippedOp"]]
            )
            peer["replicationLag"] = max(peer["replicationLag"], lag)
            peer["stuck_queues"] += int(queue["stuck"])
    _add_replicated_through(zk, key, conf, source, snapshot, peers, now)
    # Global counters cover every queue ever shipped, drained recovered queues included (as HBase's
    # source.* metrics do); the gauges below cover the queues that exist now.
    totals: dict[str, float] = {}
    for entry in stored["queues"].values():
        for name, value in entry.items():
            if isinstance(value, (int, float)) and name not in NOT_SUMMED:
                totals[f"source.{name}"] = totals.get(f"source.{name}", 0) + value
    totals["source.sizeOfLogQueue"] = sum(q["sizeOfLogQueue"] for q in queues)
    totals["source.replicationLag"] = max([q["replicationLag"] for q in queues], default=0)
    global_age = age_of_last_shipped_op(q["ageOfLastShippedOp"] for q in queues)
    if global_age is not None:  # no queue has shipped yet: no age (a gauge has no "unknown" value)
        totals["source.ageOfLastShippedOp"] = global_age
    return {
        "cluster": str(key),
        "root": source.root,
        "cluster_id": str(source.cluster_id),
        "now_ms": now,
        "live_servers": sorted(live),
        "peers": peers,
        "queues": queues,
        "global": totals,
        "recent_failovers": stored["failovers"][-10:],
        "recent_cycles": stored["cycles"][-10:],
        "recent_alerts": stored["alerts"][-10:],
        "checks": stored["checks"],
        "lag_samples": stored.get("lag_history", {}),
    }


class StatusCollector:
    """A prometheus_client collector of the replication status, HBase's metric names as suffixes and labels.

    ``supplier`` is called on every ``collect`` (so a scrape reads the status of that moment, the gauges
    computed from ZooKeeper and the WALs as ``hbrep status replication`` does). ``hbrep_status_up`` is 1
    when the status could be read; when the supplier fails it is 0, the error is logged, and no other
    family is given (a scrape never shows stale figures as current).
    """

    def __init__(self, supplier: Callable[[], dict[str, Any]]):
        self.supplier = supplier

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        up = GaugeMetricFamily("hbrep_status_up", "1 when the replication status could be read, else 0")
        try:
            status = self.supplier()
        except Exception as exc:  # a scrape reports the failure as a gauge, not as a broken endpoint
            log.error("replication status unreadable: %s: %s", type(exc).__name__, exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from _status_families(status)


def _status_families(status: dict[str, Any]) -> Iterator[Any]:
    from prometheus_client.core import GaugeMetricFamily

    per_queue: dict[str, GaugeMetricFamily] = {}

    def family(suffix: str) -> GaugeMetricFamily:
        if suffix not in per_queue:
            per_queue[suffix] = GaugeMetricFamily(
                f"hbrep_source_{suffix}",
                f"HBase source.<queueId>.{suffix}",
                labels=["queue_id", "replicator", "peer_id"],
            )
        return per_queue[suffix]

    for queue in status["queues"]:
        labels = [queue["queue_id"], queue["replicator"], queue["peer_id"]]
        family("sizeOfLogQueue").add_metric(labels, queue["sizeOfLogQueue"])
        family("replicationLag").add_metric(labels, queue["replicationLag"])
        if queue["ageOfLastShippedOp"] is not None:
            family("ageOfLastShippedOp").add_metric(labels, queue["ageOfLastShippedOp"])
        family("stuck").add_metric(labels, 1 if queue["stuck"] else 0)
        for name, value in queue["metrics"].items():
            if name not in NOT_SUMMED:
                family(name).add_metric(labels, value)
    yield from per_queue.values()
    for name, value in status["global"].items():
        # HBase's global source has the same names as a queue's (source.sizeOfLogQueue); a family name may
        # appear only once in an exposition, so the global ones carry ``global`` in theirs
        gauge = GaugeMetricFamily(f"hbrep_global_{name.replace('.', '_')}", f"HBase {name} (global source)")
        gauge.add_metric([], value)
        yield gauge
    peer_lag = GaugeMetricFamily(
        "hbrep_peer_replicationLag", "max lag of a peer's queues (ms)", labels=["peer_id", "state"]
    )
    peer_age = GaugeMetricFamily(
        "hbrep_peer_ageOfLastShippedOp",
        "largest ageOfLastShippedOp of a peer's queues (ms)",
        labels=["peer_id", "state"],
    )
    for peer in status["peers"].values():
        peer_lag.add_metric([peer["peer_id"], peer["state"]], peer["replicationLag"])
        if peer["ageOfLastShippedOp"] is not None:
            peer_age.add_metric([peer["peer_id"], peer["state"]], peer["ageOfLastShippedOp"])
    yield peer_lag
    yield peer_age


def status_registry(supplier: Callable[[], dict[str, Any]]) -> Any:
    """A prometheus_client ``CollectorRegistry`` holding only a :class:`StatusCollector` of ``supplier``."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(StatusCollector(supplier))
    return registry


def to_prometheus(status: dict[str, Any]) -> str:
    """The status as Prometheus text exposition (prometheus_client), HBase metric names as labels/suffixes."""
    from prometheus_client import generate_latest

    return generate_latest(status_registry(lambda: status)).decode("utf-8")


def lag_violations(status: dict[str, Any], threshold_ms: int) -> list[dict[str, Any]]:
    """Queues of enabled peers whose replicationLag passes ``threshold_ms``, worst first."""
    enabled = {pid for pid, p in status["peers"].items() if p["state"] == "ENABLED"}
    over = [q for q in status["queues"] if q["peer_id"] in enabled and q["replicationLag"] > threshold_ms]
    return sorted(over, key=lambda q: -q["replicationLag"])


def _add_replicated_through(zk, key, conf, source, snapshot, peers: dict[str, dict[str, Any]], now: int) -> None:
    """Per peer and per table: replicated through, lag behind now, the lag target and whether it is missed
    (HBase's status is per server; operators ask per table). ``missed_lag_targets``: the misses, worst
    first (the ship DAG's lag check fails on them)."""
    from replication.monitoring.lag_targets import get_lag_targets, missed_targets, target_for
    from replication.monitoring.replicated_through import replicated_through

    for peer_id, peer in peers.items():
        value = replicated_through(zk, key, conf, peer_id, now_ms=now, source=source, snapshot=snapshot)
        targets = get_lag_targets(zk, source.paths, peer_id)
        missed = missed_targets(value, targets, now)
        over = {m["table"] for m in missed}
        peer["replicated_through_ms"] = value.through_ms
        peer["lag_ms"] = value.lag_ms(now)
        peer["lag_target_ms"] = targets["peer"]
        peer["missed_lag_targets"] = missed
        peer["tables"] = {
            table: {
                "replicated_through_ms": through,
                "lag_ms": max(0, now - through),
                "lag_target_ms": target_for(targets, table),
                "target_missed": table in over,
            }
            for table, through in value.tables.items()
        }
