"""Ship windows: one ship run keeps doing passes (snapshot → job → guarded commit) for up to a window.

With a batch engine a run does one pass, so an edit written just after the snapshot waits for the next
scheduled run. With a warm engine (a Spark Connect server) a pass costs about a second, so a run can
go on shipping: :func:`run_window` repeats passes for up to ``hbrep.ship.window.ms`` under the run's
per-peer lease, which it keeps from the first snapshot to the end of the window (renewed by every
snapshot, released once, at the end or on failure). Everything that holds for a cycle holds for a pass:
positions move only in the guarded commit of what the peer acknowledged; a failed or stuck queue
ends the window (the queue's own retries and backoff already ran inside the job); an exception in
the job releases the lease and propagates, leaving every position where the last commit put it.

Hand-off between runs (so that consecutive runs leave no gap: the ship DAG lets the next run start
while a window still runs). A window (not a window of 0) given its ``peer_ids`` that finds another run
holding a peer's lease registers as that lease's waiter and waits for it while its own window is open
(``ShipLease.waiting``, ``ShipLease.wait_free``); the holder looks for a waiter after each of its passes and,
when one waits, ends its window there ("successor waiting"), commits nothing more and releases the
lease, which the waiter then takes for its first pass. No two passes overlap (the lease), positions go
on from the holder's last commit, and the waiter drops its registration once the lease is free.

Stopping early (``stop_requested``, e.g. the Airflow task's ``on_kill`` when its worker is stopped): a
window looks at the request after each pass and while it idles or waits for a lease, and ends there
("stop requested"), so a stop waits for at most the pass in flight, whose commit completes; nothing is
left half-committed and the lease is released as at any other end.

A pass that finds nothing to ship starts no job and waits ``replication.source.sleepforretries`` (the
time HBase's WAL reader waits before looking again) before the next one. A new pass starts only while
the window is open, so a run lasts at most the window plus one pass. A window of 0 is one pass.

Each pass that ships is recorded in the metrics store (by the commit step, under its own cycle id), and
every pass is logged;
:class:`WindowReport` sums them up (passes, rows, bytes, the lag at the end) for the caller's
summary (an XCom, an asset event, the CLI). A pass's manifest folder is removed once it is committed
(a window makes many); a failed pass's folder is kept to look at.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import open_source
from replication.config import Config
from replication.monitoring.status import peer_replication_lag
from replication.source.cycle import QueueCycle, commit_step, ship_step, snapshot_step
from replication.source.job_runner import ShipJobRunner
from replication.source.manifest import remove_cycle_folder
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.lease import ShipLease, wait_until_free, waiting_for

LOG = logging.getLogger(__name__)


@dataclass
class PassRecord:
    """One pass of a window: what it shipped and how long it took."""

    number: int
    cycle_id: str
    started_ms: int
    seconds: float
    queues: int
    rows: int
    bytes: int
    failed_queues: int


@dataclass
class WindowReport:
    """What a ship window did: its passes, their totals, the peers' lag when it ended, why it ended."""

    owner: str
    window_ms: int
    passes: list[PassRecord] = field(default_factory=list)
    busy_peers: dict[str, str] = field(default_factory=dict)
    lag_ms_at_end: dict[str, int] = field(default_factory=dict)
    ended: str = ""
    failures: list[QueueCycle] = field(default_factory=list)
    disabled: str = ""  # why nothing was shipped (hbase.replication false), else ""

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.passes)

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.passes)

    @property
    def shipping_passes(self) -> int:
        """Passes that had queues to ship (and so ran a job)."""
        return sum(1 for p in self.passes if p.queues)

    def summary(self) -> dict[str, Any]:
        """The small dict for an XCom or an asset event: passes, rows, bytes, lag at end, why it ended."""
        return {
            "passes": len(self.passes),
            "shipping_passes": self.shipping_passes,
            "rows": self.rows,
            "bytes": self.bytes,
            "lag_ms_at_end": dict(self.lag_ms_at_end),
            "ended": self.ended,
            "window_ms": self.window_ms,
        }

    def as_dict(self) -> dict[str, Any]:
        """The summary plus the owner, busy peers, failures and every pass (``pass_records``)."""
        return {
            **self.summary(),
            "owner": self.owner,
            "busy_peers": dict(self.busy_peers),
            "failures": [q.as_dict() for q in self.failures],
            "disabled": self.disabled,
            "pass_records": [asdict(p) for p in self.passes],
        }


STOP_REQUESTED = "stop requested"


def _idle(
    seconds: float, clock: Callable[[], float], sleep: Callable[[float], None], stop_requested: Callable[[], bool]
) -> None:
    """Sleep ``seconds`` in slices of at most 0.2 s, returning early once a stop is requested."""
    end = clock() + seconds
    while not stop_requested() and (left := end - clock()) > 0:
        sleep(min(left, 0.2))


def _wait_for_leases(
    zk: KazooClient,
    paths: ZNodePaths,
    peer_ids: list[str],
    owner: str,
    timeout_s: float,
    stop_requested: Callable[[], bool],
) -> None:
    """Wait, registered as a waiter (so the holder ends its window), until the peers' leases are free for
    ``owner``, ``timeout_s`` passed or a stop is requested; the first snapshot then takes them (or finds
    them still busy)."""
    leases = [ShipLease(zk, paths, p, owner) for p in peer_ids]
    if all(lease.is_free() for lease in leases):
        return
    started = time.monotonic()
    with waiting_for(leases):
        free = wait_until_free(leases, timeout_s, stop_requested=stop_requested)
    LOG.info(
        "Waited %.3fs for the lease of peer(s) %s: %s", time.monotonic() - started, ",".join(peer_ids),
        "free" if free else "still held when the window closed",
    )  # fmt: skip


def run_window(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    runner: ShipJobRunner,
    *,
    owner: str,
    peer_ids: list[str] | None = None,
    work_dir: str | os.PathLike[str] | None = None,
    cycle_prefix: str | None = None,
    window_ms: int | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    stop_requested: Callable[[], bool] = lambda: False,
) -> WindowReport:
    """Passes of snapshot → ``ship_step`` on ``runner`` → commit for up to ``window_ms`` (see module doc).

    ``window_ms`` defaults to ``hbrep.ship.window.ms``. Raises whatever the runner raises (after the
    leases are released); queue failures end the window and are in ``report.failures``. Once
    ``stop_requested()`` is true the window ends after the pass in flight (``report.ended`` says so).
    """
    window_ms = conf.get_int("hbrep.ship.window.ms") if window_ms is None else window_ms
    idle_s = conf.get_int("replication.source.sleepforretries") / 1000
    prefix = cycle_prefix or f"window-{int(time.time() * 1000)}"
    report = WindowReport(owner, window_ms)
    deadline = clock() + window_ms / 1000
    leased: set[str] = set()
    paths = open_source(zk, key, conf).paths
    if window_ms and peer_ids:
        _wait_for_leases(zk, paths, peer_ids, owner, deadline - clock(), stop_requested)
    try:
        while True:
            if stop_requested():
                report.ended = STOP_REQUESTED
                break
            number = len(report.passes) + 1
            begun, started_ms = clock(), int(time.time() * 1000)
            outcome = snapshot_step(
                zk, key, conf, owner=owner, peer_ids=peer_ids, work_dir=work_dir, cycle_id=f"{prefix}-p{number}"
            )
            leased.update(outcome.peers)
            report.busy_peers.update(outcome.busy_peers)
            rows = size = 0
            failed: list[QueueCycle] = []
            if outcome.queues:  # nothing to ship: no job and nothing to commit
                ship_step(outcome.manifest_path, conf, runner=runner)
                cycle = commit_step(zk, key, conf, outcome.manifest_path, owner=owner, release=False)
                rows = sum(p.rows_shipped for p in cycle.peers.values())
                size = sum(p.bytes_shipped for p in cycle.peers.values())
                failed = cycle.failed_queues()
            record = PassRecord(
                number, outcome.cycle_id, started_ms, round(clock() - begun, 3), outcome.queues, rows, size, len(failed)
            )
            report.passes.append(record)
            LOG.info(
                "Pass %d (%s): %d queue(s), %d rows, %d bytes in %.3fs",
                number, record.cycle_id, record.queues, record.rows, record.bytes, record.seconds,
            )  # fmt: skip
            if not failed:
                # committed (or nothing to ship): the pass's manifest and result are no longer needed
                remove_cycle_folder(outcome.manifest_path)
            if outcome.disabled:
                report.ended = report.disabled = outcome.disabled
                break
            if failed:
                report.failures = failed
                report.ended = f"{len(failed)} queue(s) failed or stuck in pass {number}"
                break
            if not outcome.peers:
                report.ended = "every peer is leased by another run"
                break
            if window_ms and any(ShipLease(zk, paths, p, owner).successor_waiting() for p in sorted(leased)):
                report.ended = "successor waiting for the lease"
                break
            remaining = deadline - clock()
            if remaining <= 0:
                report.ended = "window over" if window_ms else "one pass (window 0)"
                break
            if not outcome.queues:
                _idle(min(idle_s, remaining), clock, sleep, stop_requested)
    finally:
        for peer_id in sorted(leased):
            ShipLease(zk, paths, peer_id, owner).release()
    # the window's own peers only: their queues and WALs, not the whole status of every peer
    report.lag_ms_at_end = peer_replication_lag(zk, key, conf, peer_ids)
    return report
