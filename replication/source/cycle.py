"""One ship cycle as three steps, snapshot → ship → commit, usable from the CLI and from Airflow.

- :func:`snapshot_step` takes each selected peer's lease, writes the manifest file and returns its
  path (peers whose lease another cycle holds are left out and reported).
- :func:`ship_step` runs the Spark job on the manifest through a job runner (source/job_runner.py;
  in-process and spark-submit runners are in jobs/launch.py) and writes the result file. With
  nothing to ship it writes an empty result and starts no Spark job.
- :func:`commit_step` records positions (guarded multi per queue), folds the metrics in and releases
  the leases. Running it twice is a no-op.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import open_source
from replication.config import Config, replication_disabled_reason
from replication.monitoring.metrics import MetricsStore
from replication.secrets import SecretLookup
from replication.source.commit import QueueCommit, commit
from replication.source.job_runner import ShipJobRunner
from replication.source.manifest import (
    Manifest,
    PeerTask,
    ShipResult,
    cycle_folder,
    exists_at,
    join_location,
    read_text,
    result_path_for,
    work_dir_for,
    write_text,
)
from replication.source.snapshot import build_manifest
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.lease import DEFAULT_LEASE_MS, ShipLease
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.shadow_peer import is_shadow_peer

LOG = logging.getLogger(__name__)


@dataclass
class SnapshotOutcome:
    """What the snapshot step produced: the manifest path, the peers it holds, and peers left out."""

    manifest_path: str
    cycle_id: str
    queues: int
    peers: list[str]
    busy_peers: dict[str, str] = field(default_factory=dict)
    disabled: str = ""  # why nothing was leased or snapshotted (hbase.replication false), else ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def snapshot_step(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    *,
    owner: str,
    peer_ids: list[str] | None = None,
    work_dir: str | os.PathLike[str] | None = None,
    cycle_id: str | None = None,
    secret_lookup: SecretLookup | None = None,
    also_ship: frozenset[str] = frozenset(),
) -> SnapshotOutcome:
    """Lease the peers, snapshot them and their queues, write the manifest (see module doc).

    ``secret_lookup`` resolves the peers' Airflow-held secrets (``replication/secrets.py``).
    With ``hbase.replication`` false no peer is leased, the manifest is empty (so no job runs and
    nothing is committed) and ``disabled`` says why.
    """
    source = open_source(zk, key, conf)
    storage = ReplicationPeerStorage(zk, source.paths)
    disabled = replication_disabled_reason(conf) or ""
    if disabled:
        LOG.warning("Nothing shipped: %s", disabled)
    wanted = [] if disabled else peer_ids if peer_ids is not None else storage.list_peer_ids()
    ttl = conf.get_int("hbrep.ship.lease.ms", DEFAULT_LEASE_MS)
    leased, busy = [], {}
    for peer_id in wanted:
        if ShipLease(zk, source.paths, peer_id, owner, ttl).acquire():
            leased.append(peer_id)
        else:
            holder = ShipLease(zk, source.paths, peer_id, owner).holder() or {}
            busy[peer_id] = f"another cycle ({holder.get('owner', '?')}) is shipping peer {peer_id}"
            LOG.warning("Skipping peer %s: %s", peer_id, busy[peer_id])
    try:
        manifest = build_manifest(
            zk, source, conf, peer_ids=leased, cycle_id=cycle_id, secret_lookup=secret_lookup, also_ship=also_ship
        )
    except BaseException:
        # A snapshot that cannot be taken (e.g. a garbled position znode) must not keep the peers leased.
        for peer_id in leased:
            ShipLease(zk, source.paths, peer_id, owner).release()
        raise
    for peer_id in [p for p in leased if p not in manifest.peers]:
        # a named peer that does not exist (yet: a seed may be about to add it) is not in the manifest, and
        # commit releases the manifest's peers only: release it now, or it stays leased until it expires
        ShipLease(zk, source.paths, peer_id, owner).release()
        leased.remove(peer_id)
    path = join_location(cycle_folder(work_dir or work_dir_for(conf), manifest.cycle_id), "manifest.json")
    write_text(path, manifest.to_json())
    return SnapshotOutcome(path, manifest.cycle_id, len(manifest.queues), leased, busy, disabled)


def ship_step(manifest_path: str, conf: Config, *, runner: ShipJobRunner, result_path: str | None = None) -> ShipResult:
    """Run the ship job for a manifest through ``runner`` and return its result (written beside the
    manifest unless ``result_path`` says otherwise). With nothing to ship no job is started."""
    manifest = Manifest.from_json(read_text(manifest_path))
    result_path = result_path or result_path_for(manifest_path)
    if manifest.queues:
        return runner.run_ship(manifest_path, result_path, conf)
    result = ShipResult(manifest.cycle_id, [], int(time.time() * 1000), int(time.time() * 1000))
    write_text(result_path, result.to_json())
    return result


@dataclass
class PeerCycle:
    """One peer's totals over a cycle (``summarize`` adds them up queue by queue).

    ``state``: ENABLED | DISABLED | SHADOW, or ``?`` for a peer with results but not in the manifest;
    ``lag_ms``: now minus the newest shipped write's time, None when nothing was shipped.
    """

    state: str
    lag_ms: int | None = None
    queues: int = 0
    wals_read: int = 0
    entries_read: int = 0
    entries_shipped: int = 0
    rows_shipped: int = 0
    bytes_shipped: int = 0
    filtered: int = 0
    positions_advanced: int = 0
    wals_finished: int = 0
    failed_queues: int = 0
    waiting_queues: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The peer's JSON object: ``state``, ``lag_ms``, then the totals (the report's ``peers[id]``)."""
        return asdict(self)


@dataclass(frozen=True)
class QueueCycle:
    """What one queue did in a cycle: its ship status and what the commit recorded.

    ``metrics`` is the queue's ship metrics as the job reported them (HBase's metric names, passed through).
    """

    queue: str
    peer_id: str
    status: str
    error: str | None
    drained: bool
    committed: bool
    commit_note: str
    metrics: dict[str, Any]

    @property
    def failed(self) -> bool:
        """The queue failed or is stuck (the CLI exits 3, a window counts it)."""
        return self.status in ("failed", "stuck")

    def as_dict(self) -> dict[str, Any]:
        """The queue's JSON object (one item of the report's ``queues``)."""
        return asdict(self)


@dataclass
class CycleReport:
    """What a whole cycle did, per peer and per queue.

    Readers use attributes; :meth:`as_dict` is the edge (``hbrep ship --once --json``, the commit task's
    XCom, the metrics store's cycle records): keys, values and key order as they were when the peers and
    queues were dicts (tests/source/test_cycle_report.py pins it).
    """

    cycle_id: str
    spark_job: bool
    peers: dict[str, PeerCycle]
    queues: list[QueueCycle]
    busy_peers: dict[str, str]
    disabled: str = ""  # why nothing was shipped (hbase.replication false), else ""

    def failed_queues(self) -> list[QueueCycle]:
        """The queues that failed or are stuck."""
        return [q for q in self.queues if q.failed]

    def as_dict(self) -> dict[str, Any]:
        return {
            "cycle_id": self.cycle_id,
            "spark_job": self.spark_job,
            "peers": {pid: peer.as_dict() for pid, peer in self.peers.items()},
            "queues": [q.as_dict() for q in self.queues],
            "busy_peers": dict(self.busy_peers),
            "disabled": self.disabled,
        }


def commit_step(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    manifest_path: str,
    *,
    owner: str,
    result_path: str | None = None,
    release: bool = True,
) -> CycleReport:
    """Commit the result of a manifest, record metrics, release the leases (unless ``release`` is
    false: a ship window keeps them for its next pass); idempotent."""
    manifest = Manifest.from_json(read_text(manifest_path))
    result_path = result_path or result_path_for(manifest_path)
    # a result on HDFS (a shared work dir) too: os.path.exists said no for every URI, so a cycle whose
    # files are on HDFS committed nothing and its queues never moved
    found = exists_at(result_path)
    result = ShipResult.from_json(read_text(result_path)) if found else ShipResult(manifest.cycle_id, [])
    source = open_source(zk, key, conf)
    try:
        commits = commit(zk, source.paths, result.queues)
        by_key: dict[str, QueueCommit] = {c.queue: c for c in commits}
        report = summarize(manifest, result, by_key)
        MetricsStore(source.fs, source.root).record_cycle(
            manifest.cycle_id,
            result.queues,
            {"peers": {pid: p.as_dict() for pid, p in report.peers.items()}, "spark_job": report.spark_job},
        )
    except BaseException:
        # released even when the root's filesystem fails under the metrics write (an HDFS DataNode
        # gone): the positions committed above are right, and the next cycle (or pass) must not wait
        # for the lease to expire
        _release_leases(zk, source.paths, manifest, owner)
        raise
    if release:
        _release_leases(zk, source.paths, manifest, owner)
    return report


def _release_leases(zk: KazooClient, paths: ZNodePaths, manifest: Manifest, owner: str) -> None:
    for peer_id in manifest.peers:
        ShipLease(zk, paths, peer_id, owner).release()


def summarize(manifest: Manifest, result: ShipResult, commits: dict[str, QueueCommit]) -> CycleReport:
    """Per-peer totals (WALs read, entries and rows shipped, bytes, filtered, positions advanced, lag)."""
    now = int(time.time() * 1000)

    def state(peer: PeerTask) -> str:
        # a shadow peer is DISABLED in HBase's tree and shipped here (zk/shadow_peer.py)
        shadow = is_shadow_peer(peer.config.get("configuration") or {})
        return "SHADOW" if shadow and peer.enabled else "ENABLED" if peer.enabled else "DISABLED"

    peers = {pid: PeerCycle(state(p)) for pid, p in manifest.peers.items()}
    queues = []
    for q in result.queues:
        peer = peers.setdefault(q.peer_id, PeerCycle("?"))
        record = commits.get(q.key)
        m = q.metrics
        read, filtered = int(m.get("logEditsRead", 0)), int(m.get("logEditsFiltered", 0))
        peer.queues += 1
        peer.wals_read += sum(1 for w in q.wals if w.end_position > w.start_position or w.done)
        peer.entries_read += read
        peer.entries_shipped += read - filtered
        peer.rows_shipped += int(m.get("shippedOps", 0))
        peer.bytes_shipped += int(m.get("shippedBytes", 0))
        peer.filtered += filtered
        peer.positions_advanced += len(record.positions) + len(record.removed_wals) if record else 0
        peer.wals_finished += sum(1 for w in q.wals if w.done)
        peer.failed_queues += int(q.status in ("failed", "stuck"))
        peer.waiting_queues += int(q.status == "waiting")
        shipped_at = int(m.get("lastShippedWriteTime", 0))
        if shipped_at:
            peer.lag_ms = max(peer.lag_ms or 0, now - shipped_at)
        queues.append(
            QueueCycle(
                queue=q.key,
                peer_id=q.peer_id,
                status=q.status,
                error=q.error,
                drained=q.drained,
                committed=bool(record and record.committed),
                commit_note=record.note if record else "",
                metrics=m,
            )
        )
    return CycleReport(manifest.cycle_id, bool(manifest.queues), peers, queues, {})


def run_cycle(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    *,
    runner: ShipJobRunner,
    owner: str | None = None,
    peer_ids: list[str] | None = None,
    work_dir: str | os.PathLike[str] | None = None,
    also_ship: frozenset[str] = frozenset(),
) -> CycleReport:
    """snapshot → ship → commit in one call (``hbrep ship --once``; ``also_ship``: see ``build_manifest``)."""
    owner = owner or f"hbrep-ship-{os.getpid()}-{int(time.time() * 1000)}"
    outcome = snapshot_step(zk, key, conf, owner=owner, peer_ids=peer_ids, work_dir=work_dir, also_ship=also_ship)
    try:
        ship_step(outcome.manifest_path, conf, runner=runner)
    except Exception:
        # Positions stay where they were; release the leases so the next cycle can retry at once.
        source = open_source(zk, key, conf)
        for peer_id in outcome.peers:
            ShipLease(zk, source.paths, peer_id, owner).release()
        raise
    report = commit_step(zk, key, conf, outcome.manifest_path, owner=owner)
    report.busy_peers = outcome.busy_peers
    report.disabled = outcome.disabled
    return report
