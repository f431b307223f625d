"""Replicated through: the write time before which every edit of a peer's tables is on the peer.

For each queue of the peer (normal and recovered, on every server, live or dead) the WAL entries not yet
shipped are read from the recorded positions; per table, the write time of the first one bounds what is
replicated: everything written to that table before it is shipped. A table with no entry pending in any
queue is replicated through the moment the queues were read, less ``hbrep.replicated.through.margin.ms``
(an edit takes its write time before it reaches the WAL; the margin keeps one in flight from being
counted as shipped). So the time moves while nothing is written: the queues at their ends are the
heartbeat. A peer's time is the earliest of its tables' (or, with no table replicated to it, of its
queues').

At most ``SCAN_BYTES`` of each queue are read; a table not met within them is reported through the write
time of the last entry read (a lower bound: its pending entries come after it in that queue).

The last value per peer is kept in ``<hbrep root>/replicated-through/<peer>`` (``ReplicatedThroughStorage``),
so that the commit's asset event can say which interval became replicated (from the previous value to the
new one).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

from kazoo.client import KazooClient

from replication.cluster.source_cluster import SourceCluster, open_source
from replication.cluster.source_tables import user_tables
from replication.config import Config
from replication.fs import FileSystem
from replication.tables.descriptors import TableDescriptor
from replication.wal.locator import WalLocator
from replication.wal.markers import is_replication_marker
from replication.wal.names import order_wals, wal_start_timestamp
from replication.wal.reader import open_wal
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage, normalize_table
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_snapshot import QueueSnapshot
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.replicated_through_storage import ReplicatedThroughStorage

SCAN_BYTES = 64 * 1024 * 1024


@dataclass
class ReplicatedThrough:
    """Per peer and per table, the write time before which every edit is on the peer (epoch ms)."""

    peer_id: str
    through_ms: int
    tables: dict[str, int] = field(default_factory=dict)
    read_ms: int = 0
    pending_queues: list[str] = field(default_factory=list)

    def lag_ms(self, now_ms: int | None = None) -> int:
        """How far the peer is behind now."""
        return max(0, (now_ms or int(time.time() * 1000)) - self.through_ms)

    def as_dict(self) -> dict:
        return asdict(self)


class PendingWal(NamedTuple):
    """One WAL of a queue as observation reads it: its name and the recorded position."""

    name: str
    position: int


@dataclass
class QueueScan:
    """What is pending in one queue: the first write time overall and per table, the last one read."""

    first_ms: int | None = None
    first_by_table: dict[str, int] = field(default_factory=dict)
    last_read_ms: int | None = None
    complete: bool = True
    error: str = ""  # a WAL that could not be read (the times are bounded by its creation instead)


def peer_tables(tables: list[TableDescriptor], config: ReplicationPeerConfig) -> list[str]:
    """The tables replicated to a peer: a family with scope != 0 that the peer's config lets through."""
    out = []
    for desc in tables:
        if desc.is_system:
            continue
        name = normalize_table(desc.name)
        if any(cf.scope != 0 and config.need_to_replicate(name, f) for f, cf in desc.families.items()):
            out.append(name)
    return sorted(out)


def scan_pending(fs: FileSystem, locator: WalLocator, servers: list[str], wals: list[PendingWal]) -> QueueScan:
    """The first pending write time per table of one queue (at most ``SCAN_BYTES`` read); HBase's
    replication markers are heartbeats, not data, and hold nothing back."""
    scan = QueueScan()
    budget = SCAN_BYTES
    for group in order_wals(wals):
        for wal in group:
            path = locator.find(wal.name, servers)
            if path is None or fs.readable_length(path) <= wal.position:
                continue
            try:
                reader = open_wal(path, fs=fs, start=wal.position)
            except Exception as exc:
                return _unreadable(scan, wal, exc)
            try:
                for raw in reader.raw_entries():
                    budget -= raw.end - raw.start
                    if is_replication_marker(raw.cell_count, raw.cell_bytes):
                        continue
                    when = raw.key.write_time
                    table = normalize_table(raw.key.table_name.decode("utf-8", "replace"))
                    scan.first_ms = when if scan.first_ms is None else min(scan.first_ms, when)
                    scan.first_by_table.setdefault(table, when)
                    scan.last_read_ms = when
                    if budget <= 0:
                        scan.complete = False
                        return scan
            except Exception as exc:
                return _unreadable(scan, wal, exc)
            finally:
                close = getattr(reader, "close", None)
                if close is not None:
                    close()
    return scan


def _unreadable(scan: QueueScan, wal: PendingWal, exc: Exception) -> QueueScan:
    """A WAL that cannot be read (corrupt, compressed): its edits were written after it was created, which
    is all that can be said, so that bounds every table (the queue is reported stuck by status)."""
    created = wal_start_timestamp(wal.name)
    scan.first_ms = created if scan.first_ms is None else min(scan.first_ms, created)
    scan.last_read_ms = created if scan.last_read_ms is None else min(scan.last_read_ms, created)
    scan.complete = False
    scan.error = f"{wal.name}: {exc}"
    return scan


def replicated_through(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    *,
    now_ms: int | None = None,
    source: SourceCluster | None = None,
    snapshot: QueueSnapshot | None = None,
) -> ReplicatedThrough:
    """The peer's replicated-through times, read now from its queues and WALs (see module doc).

    ``source`` and ``snapshot``: the opened cluster and a queue snapshot the caller already has (status
    reads every peer from one snapshot); read here when not given."""
    source = source or open_source(zk, key, conf)
    config = ReplicationPeerStorage(zk, source.paths).get_peer_config(peer_id)
    tables = peer_tables(user_tables(source), config)
    read_ms = (now_ms or int(time.time() * 1000)) - conf.get_int("hbrep.replicated.through.margin.ms")
    snapshot = snapshot or ReplicationQueueStorage(zk, source.paths).snapshot()
    locator = WalLocator(source.fs, source.root)
    per_table = dict.fromkeys(tables, read_ms)
    queue_bound = read_ms
    pending = []
    for state in snapshot.queues():
        info = ReplicationQueueInfo.parse(state.queue_id)
        if info.peer_id != peer_id:
            continue
        wals = [PendingWal(name, ws.position) for name, ws in state.wals.items()]
        scan = scan_pending(source.fs, locator, [state.server, *info.dead_region_servers], wals)
        if scan.first_ms is None:
            continue
        pending.append(f"{state.server}/{state.queue_id}")
        queue_bound = min(queue_bound, scan.first_ms - 1)
        for table in tables:
            first = scan.first_by_table.get(table)
            if first is None and not scan.complete and scan.last_read_ms is not None:
                first = scan.last_read_ms
            if first is not None:
                per_table[table] = min(per_table[table], first - 1)
    through = min(per_table.values()) if per_table else queue_bound
    return ReplicatedThrough(peer_id, through, per_table, read_ms, pending)


def last_recorded(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> ReplicatedThrough | None:
    """The value last recorded for the peer (None before the first)."""
    raw = ReplicatedThroughStorage(zk, paths).read(peer_id)
    return None if raw is None else ReplicatedThrough(**raw)


def record(zk: KazooClient, paths: ZNodePaths, value: ReplicatedThrough) -> ReplicatedThrough | None:
    """Keep ``value`` as the peer's latest (never moving a time backwards); return the one it replaces."""
    previous = last_recorded(zk, paths, value.peer_id)
    if previous is not None:
        value.through_ms = max(value.through_ms, previous.through_ms)
        for table, before in previous.tables.items():
            if table in value.tables:
                value.tables[table] = max(value.tables[table], before)
    ReplicatedThroughStorage(zk, paths).write(value.peer_id, value.as_dict(), exists=previous is not None)
    return previous


def record_and_sample(zk: KazooClient, key: ClusterKey, conf: Config, peer_id: str) -> dict:
    """After a commit of ``peer_id``: compute its replicated-through times, keep them (ZooKeeper, for the next
    commit's interval) and add them to the peer's lag history (the Replication view's chart). Returns the
    asset event's fields: the new times and the ones they replace (``*_before``)."""
    from replication.monitoring.metrics import MetricsStore

    source = open_source(zk, key, conf)
    value = replicated_through(zk, key, conf, peer_id, source=source)
    previous = record(zk, source.paths, value)
    MetricsStore(source.fs, source.root).record_lag_sample(
        peer_id, value.read_ms + conf.get_int("hbrep.replicated.through.margin.ms"), value.through_ms, value.tables
    )
    return {
        "replicated_through_ms": value.through_ms,
        "replicated_through_before_ms": previous.through_ms if previous else None,
        "tables": value.tables,
        "tables_before": previous.tables if previous else {},
    }
