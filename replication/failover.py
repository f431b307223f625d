"""Failover of dead region servers (``hbrep failover --once``), spec §3.4-3.5.

One run:

1. Finds dead servers: replicators under ``replication/rs`` and owners of directories under
   ``<root>/WALs/`` with no live ``<parent>/rs/<server>`` znode and no starting mark
   ``<hbrep root>/starting/<server>`` (a server starting has its WAL and queues before its ``rs`` znode).
2. Records when each was first seen dead in ``<hbrep root>/dead/<server>`` (in ZooKeeper,
   ``DeadServerStorage``, so separate runs and separate machines agree; the region-server tracker of the
   failover DAG's asset watcher marks a server when it sees its ``rs`` znode go, before any run) and acts only once
   ``replication.sleep.before.failover`` has passed since then. A server that comes back loses its mark.
3. For at most ``replication.executor.workers`` dead servers: picks a live region server at random and
   claims every queue for it (the lock protocol of ``replication.zk.claim``), then replays its WALs into
   table files (HBase's log splitting, ``replication.cluster.recovery``). Queues of removed peers are
   dropped. The recovered queues are then shipped by the normal cycle and deleted once drained. HBase's
   ServerCrashProcedure claims after its log split and region assignment; here the claim does not wait
   for the replay, which shipping does not need (the reader finds a WAL archived meanwhile in oldWALs/).

``hbrep.failover.mode`` says who does step 3. ``hbase`` (and ``auto`` for a real HBase source,
registered by ``add_peer --shadow``): the source's own HMaster splits the dead server's logs and
moves its queues (ServerCrashProcedure with ClaimReplicationQueuesProcedure in HBase 2.5+, the
region servers' NodeFailoverWorker before), so hbrep neither splits nor claims; a run only reports
the dead servers (action ``left-to-hbase``) and the cycle ships the recovered queues HBase creates.
Claiming as well would race HBase's own procedure for the same queues.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import SourceCluster, open_source
from replication.config import Config, replication_disabled_reason
from replication.monitoring.metrics import MetricsStore
from replication.wal.names import ServerName
from replication.zk.claim import ClaimError, claim_queues
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.dead_server_storage import DeadServerStorage
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

if TYPE_CHECKING:
    from replication.cluster.recovery import RecoveryResult

LOG = logging.getLogger(__name__)
SPLITTING_SUFFIX = "-splitting"


@dataclass
class ServerFailover:
    """What happened to one dead server in this run."""

    server: str
    first_seen_dead_ms: int
    action: str  # waiting | claimed | nothing-to-claim | lost-race | no-live-server | error
    claimer: str | None = None
    moved: dict[str, str] = field(default_factory=dict)  # old queue id -> new queue id
    dropped: list[str] = field(default_factory=list)  # queues of removed peers
    wals_moved: int = 0
    recovery: RecoveryResult | None = None  # None: the embedded cluster's log splitting is not available
    wait_ms: int = 0
    error: str | None = None


@dataclass
class FailoverReport:
    """Every dead server seen by one run."""

    live_servers: list[str]
    servers: list[ServerFailover]
    disabled: str = ""  # why no queue was claimed (hbase.replication false), else ""
    mode: str = "hbrep"  # who moves dead servers' queues: hbrep, or hbase (hbrep.failover.mode)

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``hbrep failover --once --json`` and the failover task's XCom (each server's
        ``recovery`` as the RecoveryResult's fields)."""
        return asdict(self)


def _is_server_name(name: str) -> bool:
    try:
        ServerName.parse(name)
    except Exception:
        return False
    return True


def find_dead_servers(zk: KazooClient, source: SourceCluster) -> tuple[list[str], list[str]]:
    """(live servers, dead servers): dead = replicators or WAL directory owners with neither a live ``rs``
    znode nor a starting mark. Never a server that is alive or starting, whatever the interleaving.

    The reads go in the order a region server writes the other way round: candidates (queues, WAL
    directories) first, then the starting marks, then the ``rs`` znodes. A server starts by announcing
    itself, then makes its WAL directory and queues, then its ``rs`` znode, then drops its mark; so a candidate
    seen here had its mark before, and the mark is either still there when read or gone after the ``rs`` znode
    was made, which the later read of ``rs`` then sees. (Read the other way, a server starting between the
    reads looked dead; with ``replication.sleep.before.failover`` 0 a pass archived its open WAL.)"""
    paths = source.paths
    candidates = set(ReplicationQueueStorage(zk, paths).get_list_of_replicators())
    for status in source.fs.list(source.fs.join(source.root, "WALs")):
        name = status.name[: -len(SPLITTING_SUFFIX)] if status.name.endswith(SPLITTING_SUFFIX) else status.name
        if status.is_dir and _is_server_name(name):
            candidates.add(name)
    servers = LiveServerStorage(zk, paths)
    starting = set(servers.starting())
    live = servers.live()
    alive = starting | set(live)
    dead = sorted(c for c in candidates if c not in alive and _is_server_name(c))
    return live, dead


def mark_first_seen(
    zk: KazooClient, paths: ZNodePaths, dead: list[str], live: list[str], now_ms: int
) -> dict[str, int]:
    """First-seen-dead time of every dead server (creating marks now for new ones; dropping stale ones)."""
    storage = DeadServerStorage(zk, paths)
    storage.ensure_root()
    marks = {server: storage.mark(server, now_ms) for server in dead}
    for server in storage.marked_servers():
        if server not in marks and (server in live or server not in dead):
            storage.forget(server)
    return marks


def failover_once(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    *,
    rng: random.Random | None = None,
    now_ms: int | None = None,
) -> FailoverReport:
    """One failover pass (see module doc); never claims for a server that is still alive."""
    rng = rng or random.Random()
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    source = open_source(zk, key, conf)
    paths = source.paths
    live, dead = find_dead_servers(zk, source)
    marks = mark_first_seen(zk, paths, dead, live, now)
    sleep_ms = conf.get_int("replication.sleep.before.failover")
    workers = conf.get_int("replication.executor.workers")
    peers = ReplicationPeerStorage(zk, paths)
    report = FailoverReport(live, [], replication_disabled_reason(conf) or "", failover_mode(source, conf))
    if report.mode == "hbase":
        for server in dead:
            report.servers.append(ServerFailover(server, marks[server], "left-to-hbase"))
        return report
    if report.disabled:
        LOG.warning("No replication queue claimed: %s", report.disabled)
    handled = 0
    for server in dead:
        waited = now - marks[server]
        outcome = ServerFailover(server, marks[server], "waiting", wait_ms=max(0, sleep_ms - waited))
        report.servers.append(outcome)
        if waited < sleep_ms or handled >= workers:
            continue
        handled += 1
        try:
            if report.disabled or not live:
                # the dead server's edits are still recovered (HBase's master splits logs whether or
                # not replication is on); its queues stay where they are
                outcome.recovery = _recover(source, server)
                if report.disabled:
                    outcome.action, outcome.error = "replication-disabled", report.disabled
                else:
                    outcome.action = "no-live-server"
                    outcome.error = "no live region server to take the queues"
                continue
            # the claim first: it needs nothing of the log split (the ship's reader finds a WAL archived
            # meanwhile in oldWALs/), which takes seconds for a big WAL on a busy machine; a run that dies
            # between the two leaves the WAL directory, so the next run finds the server dead and recovers it
            claimer = rng.choice(live)
            had_queues = zk.exists(paths.replicator(server)) is not None
            claimed = claim_queues(zk, paths, server, claimer, peers.peer_exists)
            outcome.claimer = claimer
            if not claimed and (had_queues or zk.exists(paths.replicator(server))):
                # another run holds or took the claim (two runs for one death): it records and replays
                outcome.action = "lost-race"
                continue
            outcome.action = "claimed" if claimed else "nothing-to-claim"
            for queue in claimed:
                if queue.deleted:
                    outcome.dropped.append(queue.old_queue_id)
                else:
                    outcome.moved[queue.old_queue_id] = queue.new_queue_id or ""
                    outcome.wals_moved += len(queue.wals)
            _record(source, outcome)
            outcome.recovery = _recover(source, server)
            # the mark goes last: a run that finds the server dead meanwhile (its WAL directory not yet
            # archived) reads the same mark, so its record names the same death and keeps this one's
            _forget_mark(zk, paths, server)
        except ClaimError as exc:
            outcome.action, outcome.error = "error", str(exc)
            LOG.error("Failover of %s: %s", server, exc)
    return report


def failover_mode(source: SourceCluster, conf: Config) -> str:
    """``hbrep`` or ``hbase``: ``hbrep.failover.mode``, where ``auto`` means hbase for a real HBase source."""
    mode = conf.get_str("hbrep.failover.mode")
    if mode == "auto":
        return "hbase" if source.is_real_hbase else "hbrep"
    return mode


def _recover(source: SourceCluster, server: str) -> RecoveryResult | None:
    try:
        from replication.cluster.recovery import recover_dead_server
    except ImportError:  # the embedded cluster's log splitting is not available
        return None
    return recover_dead_server(source.fs, source.root, server)


def _forget_mark(zk: KazooClient, paths: ZNodePaths, server: str) -> None:
    DeadServerStorage(zk, paths).forget(server)


def _record(source: SourceCluster, outcome: ServerFailover) -> None:
    """The death's failover record: the run that moved queues writes it over any other; a run that found
    nothing to claim keeps one already there (another run's)."""
    store = MetricsStore(source.fs, source.root)
    store.record_failover(
        {
            "dead_server": outcome.server,
            "died_ms": outcome.first_seen_dead_ms,
            "claimed_ms": int(time.time() * 1000),
            "claimer": outcome.claimer,
            "moved": outcome.moved,
            "dropped": outcome.dropped,
            "wals_moved": outcome.wals_moved,
        },
        replace=bool(outcome.moved or outcome.dropped),
    )
