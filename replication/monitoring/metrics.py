"""Replication metrics with HBase's names (spec §7), kept where ``hbrep status`` and Prometheus read them.

Layout under ``<root>/.hbrep/metrics/``, chosen so that every file has one writer at a time (no lost
updates without a lock):

- ``peer-<id>.json``: the cumulative per-queue counters of one peer's queues and its recent cycles,
  written by the commit step, which holds that peer's ship lease (``replication.zk.lease``);
  a cycle is folded in once per cycle id, so a retried commit does not count twice;
- ``failovers/<died>-<server>.json``: one file per death's failover (its first-seen-dead time);
- ``checks/<kind>--<peer>--<table>.json``: the latest VerifyReplication / GX outcome of a (peer, table);
- ``alerts/<time>-<source>.json``: one file per lag alert (a ship run that missed its deadline);
- ``lag-history/peer-<id>.json``: the peer's replicated-through samples (per table too) of the last
  ``KEEP_HISTORY_MS``, written by the commit of that peer (which holds its lease).

``sizeOfLogQueue`` and replication lag are computed at read time from ZooKeeper and the WALs by
``replication.monitoring.status`` (:func:`size_of_log_queue`); ``ageOfLastShippedOp`` is set when a ship task
ships, as HBase's ``MetricsSource`` sets it, and kept here per queue (:func:`_fold_age`).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from replication.fs import FileSystem, FileSystemError
from replication.monitoring.age_histogram import record_age

METRICS_DIR = ".hbrep/metrics"
KEEP_CYCLES = 200
KEEP_FAILOVERS = 100
KEEP_ALERTS = 100
KEEP_HISTORY_MS = 6 * 3600 * 1000  # the Replication view's lag history: the last six hours
KEEP_HISTORY_SAMPLES = 5000

# The per-queue counters a ship task reports (source/metrics.py counts them), by their HBase suffix
# (``source.<queueId>.<suffix>``).
COUNTERS = (
    "logEditsRead",
    "logEditsFiltered",
    "logReadInBytes",
    "shippedBatches",
    "failedBatches",
    "shippedOps",
    "shippedBytes",
    "completedLogs",
    "completedRecoverQueues",
    "uncleanlyClosedLogs",
    "ignoredUncleanlyClosedLogContentsInBytes",
    "restartedLogReading",
)

# Numeric fields of a queue's entry that are not counters (never summed into the global source.* totals)
NOT_SUMMED = ("lastShippedWriteTime", "lastShippedAt", "updated_ms", "ageOfLastShippedOp")


def size_of_log_queue(wal_count: int) -> int:
    """HBase 2.x's ``sizeOfLogQueue``: every WAL in the queue, the one being read included.

    ``ReplicationSourceLogQueue.enqueueLog`` calls ``MetricsSource.incrSizeOfLogQueue`` for each WAL put in
    the queue, and ``remove`` (the head, once the reader has finished it and moved on) calls
    ``decrSizeOfLogQueue``; the WAL being read stays in the queue until then. (The reference guide's
    "excludes the one which is being processed" describes 1.x, whose source polled the WAL off the queue.)
    A queue's znode lists the same WALs: finished ones are removed when their position is committed.
    """
    return max(0, wal_count)


def age_of_last_shipped_op(ages: Iterable[int | None]) -> int | None:
    """``ageOfLastShippedOp`` over several sources (a peer's queues, or all of them): the largest age
    of the sources that have one (None when none has).

    Each source's age is the value its ship task set (:func:`_fold_age`), never recomputed at read time.
    HBase's per-server gauges (``source.<peerId>.`` and the global ``source.``) hold the last value any of
    the server's sources set; across a cluster's replicators the largest is the one to alarm on.
    """
    known = [age for age in ages if age is not None]
    return max(known) if known else None


@dataclass
class StoredMetrics:
    """What the metrics store holds (:meth:`MetricsStore.load`); each entry is the JSON record its writer
    stored (several writers, read back as records: the status passes them through)."""

    queues: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per queue key ``<replicator>/<queueId>``: its cumulative counters (:data:`COUNTERS`), last shipped
    write time, status and error."""
    cycles: list[dict[str, Any]] = field(default_factory=list)
    """Every peer's recent cycles, oldest first."""
    failovers: list[dict[str, Any]] = field(default_factory=list)
    """The last :data:`KEEP_FAILOVERS` failover events, oldest first."""
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The latest outcome per ``<kind>/<peer>/<table>``."""
    alerts: list[dict[str, Any]] = field(default_factory=list)
    """The last :data:`KEEP_ALERTS` alerts, oldest first."""
    lag_history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per peer, its replicated-through samples of the last :data:`KEEP_HISTORY_MS`."""


def _fold_age(entry: dict[str, Any], result: Any, now: int) -> None:
    """Keep a queue's ``ageOfLastShippedOp`` and last shipped write time as HBase's ``MetricsSource`` does.

    - the ship task set an age (``setAgeOfLastShippedOp`` at ship time: a batch shipped, or an empty
      batch moved the position and the age went to 0): that value is kept as it was set;
    - the pass failed (``failed``/``stuck``): ``refreshAgeOfLastShippedOp``, now − the write time of the
      last shipped entry when one was ever shipped (the endpoint's "didn't ship anything, but must still
      age the last time we did"); otherwise unchanged;
    - otherwise (nothing read): unchanged, so a caught-up idle queue keeps its last age.

    Each age set is also added to the queue's histogram (``age_histogram.record_age``), as HBase's
    ``setLastShippedAge`` adds it to its ``MutableHistogram``.
    """
    metrics = result.metrics
    shipped_at = int(metrics.get("lastShippedWriteTime", 0))
    if shipped_at:
        entry["lastShippedWriteTime"] = shipped_at
        entry["lastShippedAt"] = now
    if metrics.get("ageOfLastShippedOp") is not None:
        entry["ageOfLastShippedOp"] = int(metrics["ageOfLastShippedOp"])
    elif result.status in ("failed", "stuck") and entry.get("lastShippedWriteTime", 0) > 0:
        entry["ageOfLastShippedOp"] = max(0, now - int(entry["lastShippedWriteTime"]))
    else:
        return
    record_age(entry, entry["ageOfLastShippedOp"])  # every set age is one value of HBase's histogram


def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="")


class MetricsStore:
    """Cumulative per-queue source counters, failover events and check verdicts of one cluster."""

    def __init__(self, fs: FileSystem, root: str):
        self.fs = fs
        self.dir = fs.join(root, METRICS_DIR)

    # -- files ----------------------------------------------------------------------------------
    def _read(self, path: str) -> dict[str, Any]:
        try:
            value = json.loads(self.fs.read_range(path, 0).decode("utf-8"))
        except Exception:
            return {}
        return value if isinstance(value, dict) else {}

    def _write(self, path: str, value: dict[str, Any]) -> None:
        self.fs.write_atomic(path, json.dumps(value, sort_keys=True, indent=1).encode("utf-8"))

    def _peer_path(self, peer_id: str) -> str:
        return self.fs.join(self.dir, f"peer-{_quote(peer_id)}.json")

    # -- reading --------------------------------------------------------------------------------
    def load(self) -> StoredMetrics:
        """Everything the store holds: per-queue counters, cycles, failovers, checks, alerts, lag history."""
        data = StoredMetrics()
        for status in self.fs.list(self.dir):
            if status.name.startswith("peer-") and status.name.endswith(".json"):
                peer = self._read(status.path)
                data.queues.update(peer.get("queues", {}))
                data.cycles.extend(peer.get("cycles", []))
        data.cycles.sort(key=lambda c: c.get("finished_ms", 0))
        events = sorted(self.fs.list(self.fs.join(self.dir, "failovers")), key=lambda s: s.name)
        data.failovers = [self._read(s.path) for s in events[-KEEP_FAILOVERS:]]
        alerts = sorted(self.fs.list(self.fs.join(self.dir, "alerts")), key=lambda s: s.name)
        data.alerts = [self._read(s.path) for s in alerts[-KEEP_ALERTS:]]
        for status in self.fs.list(self.fs.join(self.dir, "lag-history")):
            history = self._read(status.path)
            if history.get("peer_id") is not None:
                data.lag_history[history["peer_id"]] = history.get("samples", [])
        for status in self.fs.list(self.fs.join(self.dir, "checks")):
            check = self._read(status.path)
            if check:
                data.checks[f"{check['kind']}/{check['peer_id']}/{check['table']}"] = check
        return data

    # -- writing --------------------------------------------------------------------------------
    def record_cycle(self, cycle_id: str, results: Iterable[Any], summary: dict[str, Any]) -> bool:
        """Fold a cycle's queue results into each peer's file (once per cycle id); False if seen before.

        The caller holds the ship lease of every peer whose results it passes.
        """
        by_peer: dict[str, list[Any]] = {}
        for result in results:
            by_peer.setdefault(result.peer_id, []).append(result)
        for peer_id in summary.get("peers", {}):
            by_peer.setdefault(peer_id, [])
        recorded = False
        now = int(time.time() * 1000)
        for peer_id, peer_results in by_peer.items():
            path = self._peer_path(peer_id)
            data = self._read(path)
            cycles = data.setdefault("cycles", [])
            if any(c.get("cycle_id") == cycle_id for c in cycles):
                continue
            queues = data.setdefault("queues", {})
            for result in peer_results:
                entry = queues.setdefault(result.key, {name: 0 for name in COUNTERS})
                for name in COUNTERS:
                    entry[name] = entry.get(name, 0) + int(result.metrics.get(name, 0))
                _fold_age(entry, result, now)
                entry.update(peer_id=peer_id, status=result.status, error=result.error, cycle_id=cycle_id,
                             updated_ms=now)  # fmt: skip
            peer_summary = summary.get("peers", {}).get(peer_id, {})
            cycles.append({"cycle_id": cycle_id, "finished_ms": now, "peer_id": peer_id,
                           "spark_job": summary.get("spark_job"), **peer_summary})  # fmt: skip
            data["cycles"] = cycles[-KEEP_CYCLES:]
            self._write(path, data)
            recorded = True
        return recorded

    def record_lag_sample(self, peer_id: str, at_ms: int, through_ms: int, tables: dict[str, int]) -> None:
        """Add one replicated-through sample of a peer (and its tables) to its history; older than
        ``KEEP_HISTORY_MS`` is dropped. The caller holds the peer's ship lease."""
        path = self.fs.join(self.dir, "lag-history", f"peer-{_quote(peer_id)}.json")
        samples = [s for s in self._read(path).get("samples", []) if s.get("at_ms", 0) > at_ms - KEEP_HISTORY_MS]
        samples.append({"at_ms": at_ms, "through_ms": through_ms, "tables": dict(tables)})
        self._write(path, {"peer_id": peer_id, "samples": samples[-KEEP_HISTORY_SAMPLES:]})

    def record_failover(self, event: dict[str, Any], *, replace: bool = True) -> bool:
        """Keep a failover event (dead server, claimer, queues moved) in a file of its own: one per death
        (``died_ms`` and the server name it), so two runs handling one death keep one record. ``replace``
        False keeps a record already there (and returns False); True overwrites it (the run that moved the
        queues)."""
        now = int(time.time() * 1000)
        died = int(event.get("died_ms") or now)
        name = f"{died:015d}-{_quote(str(event.get('dead_server', 'unknown')))}.json"
        path = self.fs.join(self.dir, "failovers", name)
        value = {"at_ms": now, **event}
        if replace:
            self._write(path, value)
            return True
        try:
            with self.fs.create(path, overwrite=False) as stream:
                stream.write(json.dumps(value, sort_keys=True, indent=1).encode("utf-8"))
        except FileSystemError:
            return False
        return True

    def record_check(self, kind: str, peer_id: str, table: str, outcome: dict[str, Any]) -> None:
        """Keep the latest ``verify`` / ``quality`` outcome of (peer, table)."""
        name = f"{_quote(kind)}--{_quote(peer_id)}--{_quote(table)}.json"
        self._write(self.fs.join(self.dir, "checks", name), {
            "kind": kind, "peer_id": peer_id, "table": table, "at_ms": int(time.time() * 1000), **outcome,
        })  # fmt: skip

    def record_alert(self, event: dict[str, Any]) -> None:
        """Keep an alert (``kind``, ``source`` naming what raised it, ``message``) in a file of its own."""
        now_ns = time.time_ns()
        # nanoseconds in the name: two alerts of one millisecond still list in the order they were raised
        # (names of the older 15-digit millisecond form sort before these)
        name = f"{now_ns:020d}-{_quote(str(event.get('source', 'unknown')))}.json"
        self._write(self.fs.join(self.dir, "alerts", name), {"at_ms": now_ns // 1_000_000, **event})
