"""Repair a peer's copy of a table: SyncTable's plan (``sync_table``), written as replication writes
(``sync_writer``), then checked again.

``repair_table`` resolves the peer and both tables, compares them (hash buckets first, cells only inside
the differing buckets), writes the source's cells the peer lacks and, with deletes, a ``Delete`` marker
for each version only the peer holds, then flushes and compares again: ``after`` says what still differs.

Deletes default to on, as SyncTable's ``--doDeletes``, except in a two-way topology (the peer also
replicates to this source): there the peer's own writes are legitimate and only the operator may decide
to remove them (``deletes=True``).

A cell the peer deleted with a newer delete marker stays hidden after the repair writes it again (HBase
masks a version older than a delete marker until a major compaction drops the marker; SyncTable has the
same limit); such rows are still in ``after`` and the report says why.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replication.checks.verify import flush_both_sides, replicated_families, resolve_target
from replication.cluster.source_cluster import open_source
from replication.cluster.source_tables import source_table
from replication.fs import get_filesystem
from replication.monitoring.metrics import MetricsStore
from replication.operations.sync_table import RepairError, RepairPlan, SyncOptions, plan_copy_into_empty, plan_repair
from replication.source.snapshot import read_peer
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from replication.config import Config

LOG = logging.getLogger(__name__)


@dataclass
class RepairReport:
    """One repair: the plan before, what was written, and the comparison after (None for a dry run)."""

    peer_id: str
    table: str
    families: list[str]
    deletes: bool
    dry_run: bool
    two_way: bool
    before: RepairPlan
    written: dict[str, int] = field(default_factory=dict)
    after: RepairPlan | None = None
    elapsed_s: float = 0.0
    peer_key: str = ""  # the peer's cluster key and its name of the table (for the major_compact advice)
    peer_table: str = ""

    @property
    def remaining(self) -> int:
        """Cells that still differ after the repair (0 for a dry run: nothing was attempted)."""
        if self.after is None:
            return 0
        kept = 0 if self.deletes else self.after.counters.get("SOURCEMISSINGCELLS", 0)
        return self.after.changes + kept

    def why_remaining(self) -> str:
        """One line on why cells still differ, or ""."""
        if self.after is None or not self.remaining:
            return ""
        reasons = []
        if self.after.cells_to_put:
            reasons.append(
                f"{self.after.cells_to_put} cells written are still hidden on the peer, masked by its newer delete "
                "markers (HBase keeps them until a major compaction of the peer's table: "
                f"hbrep --cluster {self.peer_key or '<peer>'} major_compact {self.peer_table or self.table} "
                "--wait 600, then repair again)"
            )
        if not self.deletes and self.after.counters.get("SOURCEMISSINGCELLS", 0):
            reasons.append(
                f"{self.after.counters['SOURCEMISSINGCELLS']} cells only the peer holds were kept (--no-deletes)"
            )
        return "; ".join(reasons)

    def as_dict(self) -> dict[str, Any]:
        return {
            "peer_id": self.peer_id,
            "table": self.table,
            "families": self.families,
            "deletes": self.deletes,
            "dry_run": self.dry_run,
            "two_way": self.two_way,
            "before": self.before.as_dict(),
            "written": dict(self.written),
            "after": None if self.after is None else self.after.as_dict(),
            "remaining": self.remaining,
            "why_remaining": self.why_remaining(),
            "elapsed_s": self.elapsed_s,
        }


def repaired_families(config: ReplicationPeerConfig, desc, wanted: list[str] | None) -> list[str]:
    """The families of ``desc`` a repair touches: ``wanted`` (each must exist and be replicated to the
    peer), else every family replicated to it (REPLICATION_SCOPE != 0 and the peer's table-cfs)."""
    replicated = replicated_families(config, desc)
    if wanted is None:
        if not replicated:
            raise RepairError(f"table {desc.name} has no column family replicated to this peer: nothing to repair")
        return replicated
    for family in wanted:
        desc.family(family)  # UnknownFamily naming the table
        if family not in replicated:
            raise RepairError(f"column family {family!r} of {desc.name} is not replicated to this peer")
    return sorted(set(wanted))


def replicates_back(zk: KazooClient, source_key: ClusterKey, peer_key: ClusterKey, conf: Config) -> bool:
    """True when the peer cluster has a peer of its own whose cluster key is this source (two-way)."""
    paths = ZNodePaths(conf, parent=peer_key.znode_parent)

    def back(client: KazooClient) -> bool:
        storage = ReplicationPeerStorage(client, paths)
        for peer_id in storage.list_peer_ids():
            key = ClusterKey.parse(storage.get_peer_config(peer_id).cluster_key)
            if key.znode_parent == source_key.znode_parent and set(key.hosts.split(",")) & set(
                source_key.hosts.split(",")
            ):
                return True
        return False

    if peer_key.hosts == source_key.hosts:
        return back(zk)
    with connected(peer_key, **zk_options(conf)) as peer_zk:
        return back(peer_zk)


@dataclass
class RepairJob:
    """A checked repair request: the peer, the table, both roots, and the options as they will run."""

    peer_id: str
    table: str
    source: Any  # SourceCluster
    storage: ReplicationPeerStorage  # on the ZooKeeper session of prepare_repair: run_repair needs it open
    target: Any  # VerifyTarget
    options: SyncOptions
    two_way: bool


def prepare_repair(
    zk: KazooClient,
    source_key: ClusterKey,
    conf: Config,
    *,
    peer_id: str,
    table: str,
    options: SyncOptions,
    deletes: bool | None = None,
) -> RepairJob:
    """Check the request before any Spark starts: PeerNotFound, UnknownTable, UnknownFamily or RepairError
    (one line each). Chooses the families (every replicated one unless given) and, for ``deletes=None``,
    deletes on unless the peer replicates back to this source."""
    source = open_source(zk, source_key, conf)
    storage = ReplicationPeerStorage(zk, source.paths)
    config = storage.get_peer_config(peer_id)
    families = repaired_families(config, source_table(source, table), options.families)
    target = resolve_target(zk, source_key, conf, peer_id)
    two_way = replicates_back(zk, source_key, ClusterKey.parse(target.peer_key), conf)
    options.families, options.deletes = families, (not two_way) if deletes is None else deletes
    return RepairJob(peer_id, table, source, storage, target, options, two_way)


def run_repair(
    spark: Any, job: RepairJob, conf: Config, *, check_after: bool = True, empty_peer_shortcut: bool = False
) -> RepairReport:
    """Compare, write the fixes (unless a dry run), compare again; the outcome is also recorded for
    ``hbrep status``. ShipFailed when the peer's sinks cannot take the writes (re-run the repair whole:
    writing a cell again changes nothing, cells are versioned). With ``empty_peer_shortcut`` (a seed's
    chunk) a range the peer holds nothing of is copied without the hash comparison (``plan_copy_into_empty``)."""
    started = time.monotonic()
    options, target, table = job.options, job.target, job.table
    flush_both_sides(target, table, conf, options.peer_table)
    before = None
    if empty_peer_shortcut:
        before = plan_copy_into_empty(spark, target.source_root, target.peer_root, table, options)
    if before is None:
        before = plan_repair(spark, target.source_root, target.peer_root, table, options)
    report = RepairReport(
        job.peer_id, table, list(options.families or []), options.deletes, options.dry_run, job.two_way, before
    )
    report.peer_key, report.peer_table = str(target.peer_key), options.peer_table or table
    if not options.dry_run:
        if before.changes:
            peer = read_peer(job.peer_id, job.storage, conf, resolve_disabled=True)
            from replication.operations.sync_writer import write_fixes  # pyspark, pyarrow: only when cells are written

            report.written = write_fixes(
                before.fixes, peer, conf, str(job.source.cluster_id), options.peer_table or table, before.changes
            )
            LOG.info("repair of %s on peer %s wrote %s", table, job.peer_id, report.written)
            if check_after:  # a seed's chunk skips it: its source keeps changing, the seed verifies at the end
                flush_both_sides(target, table, conf, options.peer_table)
                report.after = plan_repair(spark, target.source_root, target.peer_root, table, options)
        else:
            report.after = before
    report.elapsed_s = round(time.monotonic() - started, 3)
    if check_after:
        fs, root = get_filesystem(target.state_root)
        MetricsStore(fs, root).record_check("repair", job.peer_id, table, report.as_dict())
    return report


def repair_table(
    spark: Any,
    zk: KazooClient,
    source_key: ClusterKey,
    conf: Config,
    *,
    peer_id: str,
    table: str,
    options: SyncOptions,
    deletes: bool | None = None,
) -> RepairReport:
    """Make peer ``peer_id``'s copy of ``table`` the source's (within ``options``' time range and families):
    ``prepare_repair`` then ``run_repair``. With ``options.dry_run`` nothing is written."""
    job = prepare_repair(zk, source_key, conf, peer_id=peer_id, table=table, options=options, deletes=deletes)
    return run_repair(spark, job, conf)
