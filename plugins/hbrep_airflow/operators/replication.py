"""Thin operators over ReplicationHook: snapshot, commit, release, lag check, claim (failover), clean, verify.

Each ``execute`` is one library call plus the Airflow-side decision (skip, fail, emit an asset event).
XCom carries only small JSON: manifest paths, peer ids, counters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook
from airflow.sdk import Asset, AssetAlias, BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException, AirflowSkipException

from hbrep_airflow.hooks.replication import ReplicationHook, default_owner, safe_name
from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

PEER_ASSET_ALIAS = "hbrep-peers"
WINDOW_SUMMARY_KEYS = ("passes", "shipping_passes", "rows", "bytes", "lag_ms_at_end", "ended", "window_ms")


def peer_asset_uri(cluster: str, peer_id: str) -> str:
    """``hbrep://<cluster>/peer/<id>``: the asset updated each time a peer's positions are committed."""
    return f"hbrep://{safe_name(cluster)}/peer/{peer_id}"


def _run_id(context: Any) -> str:
    return str(context["run_id"])


def _dag_id(context: Any) -> str:
    return str(context["ti"].dag_id)


class _HbrepOperator(BaseOperator):
    """Base: a ZooKeeper connection id and config overrides; ``self.hook`` is a ReplicationHook."""

    def __init__(
        self,
        *,
        zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
        conf_overrides: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.zookeeper_conn_id = zookeeper_conn_id
        self.conf_overrides = conf_overrides or {}

    @property
    def hook(self) -> ReplicationHook:
        return ReplicationHook(self.zookeeper_conn_id, self.conf_overrides)


class _CheckOperator(_HbrepOperator):
    """Base of the checks (VerifyReplication, GX): on the Spark Connect server of the
    ``spark_connect_conn_id`` connection when ``hbrep.spark.mode`` is ``connect`` (the engine the ship DAG
    keeps warm), else on a local Spark session in the worker."""

    def __init__(self, *, spark_connect_conn_id: str = SparkConnectHook.default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spark_connect_conn_id = spark_connect_conn_id

    def connect_url(self, hook: ReplicationHook) -> str | None:
        """The Spark Connect server's URL in connect mode, else None (a local session)."""
        if hook.conf.get_str("hbrep.spark.mode") != "connect":
            return None
        return SparkConnectHook(self.spark_connect_conn_id).get_connection_url()


class ListPeersOperator(_HbrepOperator):
    """Return every peer id of the source cluster (the map of the per-peer branches)."""

    def execute(self, context: Any) -> list[str]:
        peers = self.hook.list_peer_ids()
        self.log.info("Peers of %s: %s", self.hook.cluster_key, peers or "none")
        return peers


class SnapshotOperator(_HbrepOperator):
    """Lease one peer and write its manifest; skip the branch when there is nothing to ship or it is busy.

    Returns ``{"manifest", "result", "pyfiles", "owner", "cycle_id", "queues", ...}`` for ship and commit.
    """

    template_fields: Sequence[str] = ("peer_id",)

    def __init__(self, *, peer_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.peer_id = peer_id

    def execute(self, context: Any) -> dict[str, Any]:
        hook = self.hook
        owner = default_owner(_dag_id(context), _run_id(context), self.peer_id)
        cycle_id = safe_name(f"{_run_id(context)}-{self.peer_id}")
        outcome = hook.snapshot(self.peer_id, owner=owner, cycle_id=cycle_id)
        if outcome.get("disabled"):
            raise AirflowSkipException(f"peer {self.peer_id}: nothing shipped, {outcome['disabled']}")
        if outcome["busy"]:
            raise AirflowSkipException(f"peer {self.peer_id}: {outcome['busy']}")
        if not outcome["queues"]:
            hook.release(self.peer_id, owner=owner)
            raise AirflowSkipException(f"peer {self.peer_id}: nothing to ship (no queue has unshipped data)")
        self.log.info("Peer %s: %d queue(s) to ship, manifest %s", self.peer_id, outcome["queues"], outcome["manifest"])
        return outcome


class CommitOperator(_HbrepOperator):
    """Commit what the ship job acknowledged for one peer (idempotent: a retry is a no-op).

    Emits an asset event ``hbrep://<cluster>/peer/<id>`` through the ``hbrep-peers`` alias; fails
    (without retry) when a queue failed or is stuck, after committing the others.
    """

    template_fields: Sequence[str] = ("peer_id", "snapshot_task_id")

    def __init__(self, *, peer_id: str, snapshot_task_id: str, **kwargs: Any) -> None:
        kwargs.setdefault("outlets", [AssetAlias(PEER_ASSET_ALIAS)])
        super().__init__(**kwargs)
        self.peer_id = peer_id
        self.snapshot_task_id = snapshot_task_id

    def execute(self, context: Any) -> dict[str, Any]:
        ti = context["ti"]
        snap = ti.xcom_pull(task_ids=self.snapshot_task_id, map_indexes=ti.map_index)
        if not snap:
            raise AirflowFailException(f"peer {self.peer_id}: no snapshot from task {self.snapshot_task_id}")
        hook = self.hook
        report = hook.commit(snap["manifest"], owner=snap["owner"])
        peer = report["peers"].get(self.peer_id, {})
        self.log.info("Peer %s committed: %s", self.peer_id, peer)
        context["outlet_events"][AssetAlias(PEER_ASSET_ALIAS)].add(
            Asset(peer_asset_uri(hook.cluster_name(), self.peer_id)),
            extra={
                "peer_id": self.peer_id,
                "cycle_id": report["cycle_id"],
                "entries_shipped": int(peer.get("entries_shipped", 0)),
                "positions_advanced": int(peer.get("positions_advanced", 0)),
                **hook.replicated_through(self.peer_id),
            },
        )
        failed = [q for q in report["queues"] if q["status"] in ("failed", "stuck")]
        if failed:
            first = failed[0]
            raise AirflowFailException(
                f"peer {self.peer_id}: queue {first['queue']} {first['status']}: {first['error']}"
                + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
            )
        return report


class ShipWindowOperator(_HbrepOperator):
    """Ship one peer on the Spark Connect server: passes of snapshot → job → commit for up to
    ``hbrep.ship.window.ms`` under the run's lease (one pass when it is 0).

    The server's URL comes from the Spark provider's ``spark_connect`` connection (SparkConnectHook).
    Skips when no pass had anything to ship or another run holds the peer; fails (without retry) when a
    queue failed or is stuck, after committing what the peer acknowledged; emits the peer's asset event
    with the window's summary (passes, rows, bytes, lag at end), which it also returns for XCom.

    ``on_kill`` (the task's SIGTERM: its worker or the scheduler stopped, or the task marked failed) ends the
    window after the pass in flight, whose commit completes, and the task fails saying so: Airflow 3 only
    calls ``on_kill`` and lets the task go on, so without it a stop would wait out the whole window. (A task
    marked failed is SIGKILLed by its supervisor 5 s later whatever it does; see docs/deployment.md.)
    """

    template_fields: Sequence[str] = ("peer_id",)

    def __init__(
        self, *, peer_id: str, spark_connect_conn_id: str = SparkConnectHook.default_conn_name, **kwargs: Any
    ) -> None:
        kwargs.setdefault("outlets", [AssetAlias(PEER_ASSET_ALIAS)])
        super().__init__(**kwargs)
        self.peer_id = peer_id
        self.spark_connect_conn_id = spark_connect_conn_id
        self._kill_requested = False

    def on_kill(self) -> None:
        # Called in the task's SIGTERM handler: only a flag (no lock), read by the window between passes.
        self._kill_requested = True

    def execute(self, context: Any) -> dict[str, Any]:
        hook = self.hook
        if hook.preload_engine_client():
            self.log.info("Spark Connect client: inherited from the executor's pre-import")
        else:  # imported in the background, beside the connection lookup, ZooKeeper, the lease and the snapshot
            self.log.info("Spark Connect client: importing (the executor did not pre-import it)")
        url = SparkConnectHook(self.spark_connect_conn_id).get_connection_url()
        ti = context["ti"]
        report = hook.ship_window(
            self.peer_id,
            owner=default_owner(_dag_id(context), _run_id(context), self.peer_id),
            cycle_prefix=safe_name(f"{_run_id(context)}-{self.peer_id}-try{ti.try_number}"),
            connect_url=url,
            stop_requested=lambda: self._kill_requested,
        )
        summary = {key: report[key] for key in WINDOW_SUMMARY_KEYS}
        for one in report["pass_records"]:
            self.log.info("Pass %(number)d (%(cycle_id)s): %(queues)d queue(s), %(rows)d rows, %(bytes)d bytes, "
                          "%(seconds).3fs", one)  # fmt: skip
        self.log.info("Peer %s window on %s: %s", self.peer_id, url.split(";")[0], summary)
        if report["failures"]:
            first = report["failures"][0]
            raise AirflowFailException(
                f"peer {self.peer_id}: queue {first['queue']} {first['status']}: {first['error']}"
                + (f" (and {len(report['failures']) - 1} more)" if len(report["failures"]) > 1 else "")
            )
        if self._kill_requested:
            raise AirflowException(
                f"peer {self.peer_id}: the task was stopped; the window ended after {len(report['pass_records'])} "
                f"pass(es), every one committed ({report['rows']} rows)"
            )
        if not report["shipping_passes"]:
            why = (
                report.get("disabled")
                or report["busy_peers"].get(self.peer_id)
                or "nothing to ship (no queue has unshipped data)"
            )
            raise AirflowSkipException(f"peer {self.peer_id}: {why}")
        context["outlet_events"][AssetAlias(PEER_ASSET_ALIAS)].add(
            Asset(peer_asset_uri(hook.cluster_name(), self.peer_id)),
            extra={"peer_id": self.peer_id, **summary, **hook.replicated_through(self.peer_id)},
        )
        return summary


class ReleaseLeaseOperator(_HbrepOperator):
    """Release this run's lease on a peer if it still holds it (after a failed ship); else a no-op."""

    template_fields: Sequence[str] = ("peer_id",)

    def __init__(self, *, peer_id: str, **kwargs: Any) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        super().__init__(**kwargs)
        self.peer_id = peer_id

    def execute(self, context: Any) -> bool:
        released = self.hook.release(
            self.peer_id, owner=default_owner(_dag_id(context), _run_id(context), self.peer_id)
        )
        if released:
            self.log.warning("Peer %s: released a lease the branch left behind", self.peer_id)
        return released


class LagCheckOperator(_HbrepOperator):
    """Fail loudly (no retry) when a (peer, table) is over its lag target (``hbrep set_lag_target``; the
    miss is also kept as an alert) or any enabled peer's queue lags more than ``hbrep.lag.alert.ms``.

    Returns ``{peer_id: max lag ms}`` when every queue is within the threshold.
    """

    def execute(self, context: Any) -> dict[str, int]:
        # not at the top: DAG parsing must not load the library
        from replication.monitoring.status import lag_violations

        hook = self.hook
        status = hook.status()
        threshold = hook.lag_alert_ms()
        lags = {pid: int(p.replicationLag) for pid, p in status.peers.items()}
        over = lag_violations(status, threshold)
        # worst first over every peer (each peer's own list already is)
        missed = sorted((m for p in status.peers.values() for m in p.missed_lag_targets), key=lambda m: -m.over_ms)
        if missed:
            worst = missed[0]
            where = f"table {worst.table} of peer {worst.peer_id}" if worst.table else f"peer {worst.peer_id}"
            message = (f"lag target missed: {where} lags {worst.lag_ms} ms, target {worst.target_ms} ms"
                       + (f"; {len(missed) - 1} more over their targets" if len(missed) > 1 else ""))  # fmt: skip
            hook.record_lag_alert({"kind": "lag_target", "source": f"{_dag_id(context)}/{_run_id(context)}",
                                   "missed": [m.to_json() for m in missed], "message": message})  # fmt: skip
            raise AirflowFailException(message)
        if over:
            worst = over[0]
            raise AirflowFailException(
                f"replication lag {worst.replicationLag} ms on queue {worst.queue} (peer {worst.peer_id}) "
                f"passes hbrep.lag.alert.ms={threshold}"
                + (f"; {len(over) - 1} more queue(s) over" if len(over) > 1 else "")
            )
        self.log.info("Replication lag per peer (ms): %s (alert at %d)", lags, threshold)
        return lags


class ClaimQueuesOperator(_HbrepOperator):
    """One failover pass: claim the replication queues of dead region servers (``failover_once``).

    A run started by an asset event (a region server's death seen in ZooKeeper) waits out
    ``replication.sleep.before.failover`` of the servers it found dead, up to ``event_wait_s``, and passes
    again, so the claim follows the death by that sleep rather than by the next scheduled run.
    """

    def __init__(self, *, event_wait_s: float = 60.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.event_wait_s = event_wait_s

    def execute(self, context: Any) -> dict[str, Any]:
        import time

        report = self.hook.failover()
        run_type = getattr(context.get("dag_run"), "run_type", None)
        if str(getattr(run_type, "value", run_type)) == "asset_triggered":
            deadline = time.monotonic() + self.event_wait_s
            outcomes = {s["server"]: s for s in report["servers"]}  # per server, its last pass's outcome
            while True:
                waits = [s["wait_ms"] for s in report["servers"] if s["action"] == "waiting"]
                if not waits or time.monotonic() + min(waits) / 1000 > deadline:
                    break
                self.log.info("waiting %d ms (replication.sleep.before.failover) before claiming", min(waits))
                time.sleep(min(waits) / 1000 + 0.05)
                report = self.hook.failover()
                outcomes.update({s["server"]: s for s in report["servers"]})
            report["servers"] = list(outcomes.values())
        if report.get("disabled"):
            self.log.warning("No replication queue claimed: %s", report["disabled"])
        for server in report["servers"]:
            self.log.info("Dead server %s: %s %s", server["server"], server["action"], server.get("moved") or "")
        errors = [s for s in report["servers"] if s["action"] in ("error", "no-live-server")]
        if errors:
            raise AirflowFailException(f"failover of {errors[0]['server']}: {errors[0]['error']}")
        return report


class CleanLogsOperator(_HbrepOperator):
    """One log-cleaner pass (``clean_once``); fails when the queues could not be read (nothing deleted)."""

    def execute(self, context: Any) -> dict[str, Any]:
        report = self.hook.clean(explain=True)
        self.log.info("Deleted %d old WAL(s), %d bytes", len(report["deleted"]), report["bytes_freed"])
        if report["error"]:
            raise AirflowFailException(report["error"])
        return report


def _ms(value: Any) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        return int(text)
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class VerifyTargetsOperator(_HbrepOperator):
    """The (peer, table) pairs a verify run checks: the params' peer/table/families/start/end, else all.

    Time range: params ``start``/``end`` (epoch ms or ISO-8601) when given, else the run's data interval.
    """

    def execute(self, context: Any) -> list[dict[str, Any]]:
        params = context["params"]
        start = _ms(params.get("start"))
        end = _ms(params.get("end"))
        if start is None:
            start = _ms(context.get("data_interval_start")) or 0
        if end is None:
            end = _ms(context.get("data_interval_end")) or 2**63 - 1
        families = params.get("families") or None
        if isinstance(families, str):
            families = [f.strip() for f in families.split(",") if f.strip()]
        targets = self.hook.verify_targets(
            peer=params.get("peer") or None,
            table=params.get("table") or None,
            families=families,
            start_ms=start,
            end_ms=end,
        )
        if not targets:
            raise AirflowSkipException("no (peer, table) pair to verify")
        self.log.info("Verifying %s", [(t["peer_id"], t["table"]) for t in targets])
        return targets


class ReplicatedIntervalTargetsOperator(_HbrepOperator):
    """The (peer, table) pairs an asset-triggered verify run checks: for each peer asset event that
    triggered the run, each table over the interval that event made replicated
    (``[replicated_through_before_ms, replicated_through_ms)`` of that table)."""

    def execute(self, context: Any) -> list[dict[str, Any]]:
        windows: dict[tuple[str, str], list[int]] = {}
        for events in (context.get("triggering_asset_events") or {}).values():
            for event in events:
                extra = event.extra or {}
                peer_id = extra.get("peer_id")
                for table, through in (extra.get("tables") or {}).items():
                    before = (extra.get("tables_before") or {}).get(table)
                    if peer_id is None or before is None or through <= before:
                        continue
                    start, end = windows.setdefault((peer_id, table), [before, through])
                    windows[(peer_id, table)] = [min(start, before), max(end, through)]
        targets = []
        for (peer_id, table), (start, end) in sorted(windows.items()):
            targets += self.hook.verify_targets(peer=peer_id, table=table, families=None, start_ms=start, end_ms=end)
        if not targets:
            raise AirflowSkipException("no interval became replicated in the triggering events")
        self.log.info("Verifying %s", [(t["peer_id"], t["table"], t["start_ms"], t["end_ms"]) for t in targets])
        return targets


class VerifyReplicationOperator(_CheckOperator):
    """VerifyReplication of one (peer, table) over a time range; fails when BADROWS > 0."""

    template_fields: Sequence[str] = ("peer_id", "table", "families", "start_ms", "end_ms")

    def __init__(
        self, *, peer_id: str, table: str, families: list[str], start_ms: int, end_ms: int, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.peer_id, self.table, self.families = peer_id, table, families
        self.start_ms, self.end_ms = start_ms, end_ms

    def execute(self, context: Any) -> dict[str, Any]:
        hook = self.hook
        report = hook.verify(
            peer_id=self.peer_id,
            table=self.table,
            families=list(self.families or []),
            start_ms=int(self.start_ms),
            end_ms=int(self.end_ms),
            connect_url=self.connect_url(hook),
        )
        bad = int(report.get("BADROWS", report.get("bad_rows", 0)))
        self.log.info("VerifyReplication %s on peer %s: %s", self.table, self.peer_id, report)
        if bad:
            offer = repair_offer(self.peer_id, self.table, list(self.families or []), int(self.start_ms),
                                 int(self.end_ms))  # fmt: skip
            context["ti"].xcom_push(key="repair_conf", value=offer)
            self.log.error("To repair: trigger the hbrep_repair DAG with conf %s (dry_run first to see the plan)",
                           json.dumps(offer))  # fmt: skip
            raise AirflowFailException(
                f"VerifyReplication {self.table} on peer {self.peer_id}: BADROWS={bad}; repair with the "
                f"hbrep_repair DAG, conf {json.dumps(offer)}"
            )
        return report


def repair_offer(peer_id: str, table: str, families: list[str], start_ms: int, end_ms: int) -> dict[str, Any]:
    """The hbrep_repair DAG's conf that repairs what a failed verify found (its peer, table and window)."""
    return {"peer": peer_id, "table": table, "families": families or None, "start": start_ms, "end": end_ms,
            "dry_run": False}  # fmt: skip


class RepairOperator(_HbrepOperator):
    """hbrep repair of one (peer, table) over a time range; fails when cells still differ afterwards."""

    template_fields: Sequence[str] = ("peer_id", "table", "families", "start_ms", "end_ms", "dry_run", "deletes")

    def __init__(
        self,
        *,
        peer_id: str,
        table: str,
        families: Any = None,
        start_ms: Any = None,
        end_ms: Any = None,
        dry_run: Any = False,
        deletes: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.peer_id, self.table, self.families = peer_id, table, families
        self.start_ms, self.end_ms, self.dry_run, self.deletes = start_ms, end_ms, dry_run, deletes

    def execute(self, context: Any) -> dict[str, Any]:
        families = self.families
        if isinstance(families, str):
            families = [f.strip() for f in families.split(",") if f.strip()]
        report = self.hook.repair(
            peer_id=str(self.peer_id),
            table=str(self.table),
            families=list(families or []) or None,
            start_ms=_ms(self.start_ms) or 0,
            end_ms=_ms(self.end_ms),
            dry_run=_flag(self.dry_run),
            deletes=None if self.deletes in (None, "", "None") else _flag(self.deletes),
        )
        before = report["before"]
        self.log.info("repair plan of %s on peer %s: %s", self.table, self.peer_id, before["counters"])
        self.log.info("cells to put %s, delete markers %s, bytes %s; written %s", before["cells_to_put"],
                      before["cells_to_delete"], before["bytes_to_write"], report["written"])  # fmt: skip
        if report["remaining"]:
            raise AirflowFailException(
                f"repair of {self.table} on peer {self.peer_id}: {report['remaining']} cells still differ: "
                f"{report['why_remaining']}"
            )
        return report


def _flag(value: Any) -> bool:
    """A DAG param or template as a boolean (``True``, ``"true"``, ``1``)."""
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


class QualityCheckOperator(_CheckOperator):
    """The Great Expectations checks of a replicated table on its peer; fails when a check fails."""

    template_fields: Sequence[str] = ("peer_id", "table", "families", "start_ms", "end_ms")

    def __init__(
        self,
        *,
        peer_id: str,
        table: str,
        families: list[str] | None = None,
        start_ms: int | None = None,
        end_ms: int | None = None,
        **kwargs: Any,
    ) -> None:
        # families is accepted so one verify-target list maps both tasks; GX checks whole rows.
        super().__init__(**kwargs)
        self.peer_id, self.table, self.families = peer_id, table, families
        self.start_ms, self.end_ms = start_ms, end_ms

    def execute(self, context: Any) -> dict[str, Any]:
        hook = self.hook
        report = hook.quality(
            peer_id=self.peer_id,
            table=self.table,
            start_ms=int(self.start_ms or 0),
            end_ms=None if self.end_ms is None else int(self.end_ms),
            connect_url=self.connect_url(hook),
        )
        self.log.info("GX checks of %s on peer %s; Data Docs: %s", self.table, self.peer_id,
                      report.get("data_docs_index"))  # fmt: skip
        if not report.get("success", False):
            failed = [o.get("expectation") for o in report.get("outcomes", []) if not o.get("success")]
            raise AirflowFailException(f"quality checks of {self.table} on peer {self.peer_id} failed: {failed}")
        return report


def _tables(value: Any) -> list[str]:
    """A DAG param naming tables: a list, or ``"a,b"``."""
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    return [str(t) for t in value or []]


class SeedStartOperator(_HbrepOperator):
    """Start (or resume) the seed of tables on a peer; returns the (table, chunk) pairs left to copy."""

    template_fields: Sequence[str] = ("peer_id", "tables", "cluster_key", "chunks", "peer_rootdir")

    def __init__(
        self,
        *,
        peer_id: Any,
        tables: Any,
        cluster_key: Any = None,
        chunks: Any = 8,
        peer_rootdir: Any = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.peer_id, self.tables, self.cluster_key, self.chunks = peer_id, tables, cluster_key, chunks
        self.peer_rootdir = peer_rootdir

    def execute(self, context: Any) -> list[dict[str, Any]]:
        left = self.hook.seed_start(
            peer_id=str(self.peer_id), tables=_tables(self.tables), cluster_key=self.cluster_key or None,
            chunks=int(self.chunks or 8), peer_rootdir=self.peer_rootdir or None,
        )  # fmt: skip
        self.log.info("seed of peer %s: %d chunks to copy", self.peer_id, len(left))
        return [{"peer_id": str(self.peer_id), **item} for item in left]


class SeedCopyOperator(_HbrepOperator):
    """Copy one chunk of one table to the peer (mapped: one task per chunk, the seed's progress)."""

    template_fields: Sequence[str] = ("peer_id", "table", "chunk")

    def __init__(self, *, peer_id: str, table: str, chunk: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.peer_id, self.table, self.chunk = peer_id, table, chunk

    def execute(self, context: Any) -> int:
        # str(): a DAG rendering templates as native objects turns a peer id such as "2" into an int
        cells = self.hook.seed_copy(peer_id=str(self.peer_id), table=str(self.table), chunk=int(self.chunk))
        self.log.info("seed of peer %s: table %s chunk %s copied, %d cells written", self.peer_id, self.table,
                      self.chunk, cells)  # fmt: skip
        return cells


class SeedCatchUpOperator(_HbrepOperator):
    """Ship what the peer skipped during the copy (the seed's helper peer), then end the seed."""

    template_fields: Sequence[str] = ("peer_id",)

    def __init__(
        self,
        *,
        peer_id: Any,
        timeout_s: float = 600.0,
        spark_connect_conn_id: str = SparkConnectHook.default_conn_name,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.peer_id, self.timeout_s, self.spark_connect_conn_id = peer_id, timeout_s, spark_connect_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        hook = self.hook
        url = None
        if hook.conf.get_str("hbrep.spark.mode") == "connect":  # the ship DAG's engine, through its connection
            url = SparkConnectHook(self.spark_connect_conn_id).get_connection_url()
        outcome = hook.seed_catch_up(peer_id=str(self.peer_id), timeout_s=self.timeout_s, connect_url=url)
        self.log.info("seed of peer %s caught up: %s", self.peer_id, outcome)
        return outcome


class SeedVerifyOperator(_HbrepOperator):
    """VerifyReplication of the seeded tables over what was written before the catch-up; fails on BADROWS."""

    template_fields: Sequence[str] = ("peer_id", "caught_up")

    def __init__(self, *, peer_id: Any, caught_up: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.peer_id, self.caught_up = peer_id, caught_up

    def execute(self, context: Any) -> dict[str, Any]:
        outcome = self.caught_up or {}
        try:
            return self.hook.seed_verify(
                peer_id=str(self.peer_id), tables=list(outcome.get("tables") or []),
                through_ms=int(outcome.get("through_ms") or 0),
            )  # fmt: skip
        except Exception as exc:
            raise AirflowFailException(str(exc)) from None
