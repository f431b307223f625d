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
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.cluster.source_cluster import SourceCluster, open_source
from replication.config import Config
from replication.monitoring.age_histogram import SAMPLES_FIELD
from replication.monitoring.metrics import NOT_SUMMED, MetricsStore, age_of_last_shipped_op, size_of_log_queue
from replication.monitoring.replicated_through import PendingWal
from replication.monitoring.status_models import (
    DeadServer,
    LeaseHolder,
    PeerStatus,
    QueueStatus,
    ReplicationStatus,
    TableLag,
)
from replication.wal.locator import WalLocator
from replication.wal.names import order_wals
from replication.wal.reader import open_wal
from replication.zk.acl import zk_access
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.dead_server_storage import DeadServerStorage
from replication.zk.errors import QueueStorageError
from replication.zk.layout import ZNodePaths, is_replicator
from replication.zk.lease import ShipLease
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage, format_table_cfs
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_snapshot import QueueSnapshot, QueueState
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


def _queue_lag(
    fs, locator: WalLocator, state: QueueState, now: int
) -> tuple[ReplicationQueueInfo, int, int, str | None]:
    """(queue info, replicationLag, pendingBytes, read error) of one queue: its WALs read from the recorded
    positions up to the first unshipped entry."""
    info = ReplicationQueueInfo.parse(state.queue_id)
    wals = [PendingWal(name, ws.position) for name, ws in state.wals.items()]
    servers = [state.server, *info.dead_region_servers]
    first_time, pending, read_error = _first_unshipped(fs, locator, servers, wals)
    lag = 0 if first_time is None else max(0, now - first_time)
    return info, lag, pending, read_error


def replication_status(zk: KazooClient, key: ClusterKey, conf: Config, now_ms: int | None = None) -> ReplicationStatus:
    """The whole picture: peers (state, lag), queues (size, positions, lag, stuck), global source.* sums."""
    now = now_ms or int(time.time() * 1000)
    source = open_source(zk, key, conf)
    peers_storage = ReplicationPeerStorage(zk, source.paths)
    snapshot = ReplicationQueueStorage(zk, source.paths).snapshot()
    live = set(LiveServerStorage(zk, source.paths).live())
    stored = MetricsStore(source.fs, source.root).load()
    configs: dict[str, tuple[ReplicationPeerConfig, bool]] = {}
    for peer_id in peers_storage.list_peer_ids():
        configs[peer_id] = (peers_storage.get_peer_config(peer_id), peers_storage.is_peer_enabled(peer_id))
    locator = WalLocator(source.fs, source.root)
    queues: list[QueueStatus] = []
    for state in snapshot.queues():
        info, lag, pending, read_error = _queue_lag(source.fs, locator, state, now)
        qkey = f"{state.server}/{state.queue_id}"
        metrics = stored.queues.get(qkey, {})
        alive = state.server in live
        status = metrics.get("status", "ok") if metrics else "new"
        error = metrics.get("error")
        if read_error:
            status, error = "stuck", read_error
        if not alive:
            status = "awaiting failover"
        if info.peer_id not in configs:
            status = "orphaned (peer removed)"
        elif not configs[info.peer_id][1]:  # DISABLED in HBase's tree
            status = "disabled"
        queues.append(
            QueueStatus(
                queue=qkey,
                replicator=state.server,
                queue_id=state.queue_id,
                peer_id=info.peer_id,
                recovered=info.is_recovered,
                dead_servers=tuple(info.dead_region_servers),
                replicator_alive=alive,
                sizeOfLogQueue=size_of_log_queue(len(state.wals)),
                wals={name: ws.position for name, ws in sorted(state.wals.items())},
                pendingBytes=pending,
                replicationLag=lag,
                ageOfLastShippedOp=metrics.get("ageOfLastShippedOp"),
                status=status,
                stuck=status in ("stuck", "failed"),
                error=error,
                metrics={k: v for k, v in metrics.items() if isinstance(v, (int, float))},
                ageOfLastShippedOpSamples=tuple(int(v) for v in metrics.get(SAMPLES_FIELD, [])),
            )
        )
    peers = {
        peer_id: _peer_status(zk, key, conf, source, snapshot, peer_id, config, enabled, queues, now)
        for peer_id, (config, enabled) in configs.items()
    }
    # Global counters cover every queue ever shipped, drained recovered queues included (as HBase's
    # source.* metrics do); the gauges below cover the queues that exist now.
    totals: dict[str, float] = {}
    for entry in stored.queues.values():
        for name, value in entry.items():
            if isinstance(value, (int, float)) and name not in NOT_SUMMED:
                totals[f"source.{name}"] = totals.get(f"source.{name}", 0) + value
    totals["source.sizeOfLogQueue"] = sum(q.sizeOfLogQueue for q in queues)
    totals["source.replicationLag"] = max([q.replicationLag for q in queues], default=0)
    global_age = age_of_last_shipped_op(q.ageOfLastShippedOp for q in queues)
    if global_age is not None:  # no queue has shipped yet: no age (a gauge has no "unknown" value)
        totals["source.ageOfLastShippedOp"] = global_age
    return ReplicationStatus(
        cluster=str(key),
        root=source.root,
        cluster_id=str(source.cluster_id),
        now_ms=now,
        live_servers=tuple(sorted(live)),
        peers=peers,
        queues=tuple(queues),
        global_source=totals,
        recent_failovers=tuple(stored.failovers[-10:]),
        recent_cycles=tuple(stored.cycles[-10:]),
        recent_alerts=tuple(stored.alerts[-10:]),
        checks=stored.checks,
        lag_samples=stored.lag_history,
        dead_servers=dead_servers(zk, source.paths, {q.server for q in snapshot.queues()}, live, stored.failovers),
    )


def dead_servers(
    zk: KazooClient, paths: ZNodePaths, replicators: Iterable[str], live: set[str], failovers: list[dict[str, Any]]
) -> tuple[DeadServer, ...]:
    """Servers awaiting failover (a dead-server mark, or queues and no live znode; died_ms from the mark) and
    the last ten claimed (from the failover records: died_ms, claimed_ms, claimer), newest last."""
    marks = DeadServerStorage(zk, paths).marks()
    claimed = [
        DeadServer(f["dead_server"], f.get("died_ms"), f.get("claimed_ms", f.get("at_ms")), f.get("claimer"))
        for f in failovers
        if f.get("claimer")
    ][-10:]
    waiting = sorted(
        (set(marks) | {r for r in replicators if is_replicator(r)}) - live - _still_claimed(claimed, marks)
    )
    return tuple(DeadServer(s, marks.get(s)) for s in waiting) + tuple(claimed)


def _still_claimed(claimed: list[DeadServer], marks: dict[str, int]) -> set[str]:
    """Claimed servers with no newer mark (a mark made after the claim is a new death of that name; the
    claim's own death keeps its mark until its WALs are replayed)."""
    return {d.server for d in claimed if d.server not in marks or marks[d.server] == d.died_ms}


def _peer_status(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    source: SourceCluster,
    snapshot: QueueSnapshot,
    peer_id: str,
    config: ReplicationPeerConfig,
    enabled: bool,
    queues: list[QueueStatus],
    now: int,
) -> PeerStatus:
    """One peer: its configuration, HBase's gauges over its queues, and per peer and per table: replicated
    through, lag behind now, the lag target and whether it is missed (HBase's status is per server;
    operators ask per table). ``missed_lag_targets``: the misses, worst first (the ship DAG's lag check
    fails on them)."""
    from replication.monitoring.lag_targets import get_lag_targets, missed_targets
    from replication.monitoring.replicated_through import replicated_through

    ships, peer_error = hbrep_ships(peer_id, config, enabled)
    own = [q for q in queues if q.peer_id == peer_id]
    value = replicated_through(zk, key, conf, peer_id, now_ms=now, source=source, snapshot=snapshot)
    targets = get_lag_targets(zk, source.paths, peer_id)
    missed = missed_targets(value, targets, now)
    over = {m.table for m in missed}
    return PeerStatus(
        peer_id=peer_id,
        cluster_key=config.cluster_key,
        state="ENABLED" if enabled else "DISABLED",  # as HBase's tree says
        shadow=is_shadow_peer(config),  # HBase holds it DISABLED and hbrep ships it
        hbrep_ships=ships and not peer_error,
        peer_error=peer_error or None,
        table_cfs=format_table_cfs(config.table_cfs),
        bandwidth=config.bandwidth,
        queues=len(own),
        sizeOfLogQueue=sum(q.sizeOfLogQueue for q in own),
        ageOfLastShippedOp=age_of_last_shipped_op(q.ageOfLastShippedOp for q in own),
        replicationLag=max([q.replicationLag for q in own], default=0),
        stuck_queues=sum(1 for q in own if q.stuck),
        lease=LeaseHolder.from_json(ShipLease(zk, source.paths, peer_id, owner="").holder()),
        replicated_through_ms=value.through_ms,
        lag_ms=value.lag_ms(now),
        lag_target_ms=targets.peer,
        missed_lag_targets=tuple(missed),
        tables={
            table: TableLag(
                replicated_through_ms=through,
                lag_ms=max(0, now - through),
                lag_target_ms=targets.for_table(table),
                target_missed=table in over,
            )
            for table, through in value.tables.items()
        },
    )


def peer_replication_lag(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_ids: list[str] | None = None,
    now_ms: int | None = None,
) -> dict[str, int]:
    """``replicationLag`` of each of ``peer_ids`` (every peer when None), as :func:`replication_status`
    computes it for ``peers[id].replicationLag``, reading only those peers' queues and their WALs.

    The queue tree is listed (replicators and their queue ids, whose names carry the peer id) and only
    the given peers' queues are read, positions and WALs (the full status reads every queue of every
    peer, the metrics store and each peer's replicated-through). A peer that does not exist is left out.
    """
    now = now_ms or int(time.time() * 1000)
    source = open_source(zk, key, conf)
    known = ReplicationPeerStorage(zk, source.paths).list_peer_ids()
    wanted = [p for p in known if peer_ids is None or p in peer_ids]
    lags = dict.fromkeys(wanted, 0)
    if not wanted:
        return lags
    storage = ReplicationQueueStorage(zk, source.paths)
    states = _read_peer_queues(zk, source.paths, storage, set(wanted))
    locator = WalLocator(source.fs, source.root)
    for state in states:
        info, lag, _, _ = _queue_lag(source.fs, locator, state, now)
        lags[info.peer_id] = max(lags[info.peer_id], lag)
    return lags


def _read_peer_queues(
    zk: KazooClient, paths: ZNodePaths, storage: ReplicationQueueStorage, peer_ids: set[str]
) -> list[QueueState]:
    """The queues of ``peer_ids`` with their WAL positions; listed again while a claim moves the tree (as
    :meth:`ReplicationQueueStorage.snapshot` does)."""
    with zk_access(paths.queues):
        for _ in range(100):
            before = storage.rs_cversion()
            if before is None:
                return []
            try:
                servers = sorted(filter(is_replicator, zk.get_children(paths.queues)))
            except NoNodeError:
                return []
            listed = storage.list_replicators(servers)
            pairs = [
                (server, queue_id)
                for server in servers
                for queue_id in listed.get(server) or ()
                if ReplicationQueueInfo.parse(queue_id).peer_id in peer_ids
            ]
            states = storage.read_queues(pairs)
            if storage.rs_cversion() == before:
                return states
    raise QueueStorageError(f"{paths.queues} kept changing during 100 listings")


class StatusCollector:
    """A prometheus_client collector of the replication status, HBase's metric names as suffixes and labels.

    ``supplier`` is called on every ``collect`` (so a scrape reads the status of that moment, the gauges
    computed from ZooKeeper and the WALs as ``hbrep status replication`` does). ``hbrep_status_up`` is 1
    when the status could be read; when the supplier fails it is 0, the error is logged, and no other
    family is given (a scrape never shows stale figures as current).
    """

    def __init__(self, supplier: Callable[[], ReplicationStatus]):
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


def _status_families(status: ReplicationStatus) -> Iterator[Any]:
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

    for queue in status.queues:
        labels = [queue.queue_id, queue.replicator, queue.peer_id]
        family("sizeOfLogQueue").add_metric(labels, queue.sizeOfLogQueue)
        family("replicationLag").add_metric(labels, queue.replicationLag)
        if queue.ageOfLastShippedOp is not None:
            family("ageOfLastShippedOp").add_metric(labels, queue.ageOfLastShippedOp)
        family("stuck").add_metric(labels, 1 if queue.stuck else 0)
        for name, value in queue.metrics.items():
            if name not in NOT_SUMMED:
                family(name).add_metric(labels, value)
    yield from per_queue.values()
    for name, value in status.global_source.items():
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
    for peer in status.peers.values():
        peer_lag.add_metric([peer.peer_id, peer.state], peer.replicationLag)
        if peer.ageOfLastShippedOp is not None:
            peer_age.add_metric([peer.peer_id, peer.state], peer.ageOfLastShippedOp)
    yield peer_lag
    yield peer_age


def status_registry(supplier: Callable[[], ReplicationStatus]) -> Any:
    """A prometheus_client ``CollectorRegistry`` holding only a :class:`StatusCollector` of ``supplier``."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(StatusCollector(supplier))
    return registry


def to_prometheus(status: ReplicationStatus) -> str:
    """The status as Prometheus text exposition (prometheus_client), HBase metric names as labels/suffixes."""
    from prometheus_client import generate_latest

    return generate_latest(status_registry(lambda: status)).decode("utf-8")


def lag_violations(status: ReplicationStatus, threshold_ms: int) -> list[QueueStatus]:
    """Queues of enabled peers whose replicationLag passes ``threshold_ms``, worst first."""
    enabled = {pid for pid, p in status.peers.items() if p.state == "ENABLED"}
    over = [q for q in status.queues if q.peer_id in enabled and q.replicationLag > threshold_ms]
    return sorted(over, key=lambda q: -q.replicationLag)
