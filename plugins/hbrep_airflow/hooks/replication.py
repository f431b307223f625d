"""ReplicationHook: the ``replication`` library's steps for one source cluster named by a ZooKeeper connection.

Every method opens its own ZooKeeper session (tasks run in separate processes), calls exactly one
library function and returns plain JSON-able data for XCom.

The ``replication`` library is imported inside the methods, never at the top: operators and DAG files
import this module when a DAG file is parsed, and DAG parsing must not load the library (kazoo, Spark).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

_CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"  # pyspark.sql.utils.is_remote() reads it

if TYPE_CHECKING:
    from replication.config import Config
    from replication.monitoring.status_models import ReplicationStatus

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def airflow_secret(kind: str, name: str) -> str | None:
    """A peer secret held by Airflow (``replication.secrets.SecretLookup``): a variable's value or a
    connection's password, through Airflow's secrets backends; None when Airflow does not have it."""
    from airflow.sdk import Variable

    try:
        if kind == "airflow-var":
            return Variable.get(name)
        if kind == "airflow-conn":
            return BaseHook.get_connection(name).password
    except Exception:  # not found in any backend: replication.secrets reports it in one line
        return None
    return None


def safe_name(text: str) -> str:
    """``text`` with every run of characters unsafe in a file name replaced by ``_``."""
    return _UNSAFE.sub("_", text).strip("_") or "x"


class ReplicationHook(BaseHook):
    """Snapshot, commit, release, failover, clean, status, lag and consistency tokens of the source cluster of a
    connection."""

    def __init__(
        self,
        zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
        conf_overrides: Mapping[str, object] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.zookeeper_conn_id = zookeeper_conn_id
        self.conf_overrides = dict(conf_overrides or {})
        self.zk_hook = ZooKeeperHook(zookeeper_conn_id)

    def get_conn(self) -> Any:
        """A started kazoo client (see ZooKeeperHook.get_conn)."""
        return self.zk_hook.get_conn()

    @property
    def conf(self) -> Config:
        """hbase-site.xml (``HBREP_CONF``) ← ``HBREP__`` env ← the hook's overrides (+ the connection's auth)."""
        from replication.config import Config

        overrides = dict(self.conf_overrides)
        if self.zk_hook.auth:
            overrides.setdefault("hbrep.zk.auth", self.zk_hook.auth)
        return Config.load(overrides=overrides)

    @property
    def cluster_key(self) -> Any:
        return self.zk_hook.cluster_key

    # -- reading ----------------------------------------------------------------------------------
    def list_peer_ids(self) -> list[str]:
        """Every peer id of the source cluster (enabled and disabled), sorted."""
        from replication.zk.layout import ZNodePaths
        from replication.zk.peer_storage import ReplicationPeerStorage

        with self.zk_hook.connected() as zk:
            paths = ZNodePaths(self.conf, parent=self.cluster_key.znode_parent)
            return sorted(ReplicationPeerStorage(zk, paths).list_peer_ids())

    def cluster_name(self) -> str:
        """The source's name in asset URIs (``replication.cluster.source_cluster.source_name``): an hbrep
        cluster's recorded name, or ``hbase-<cluster id>`` for a real HBase source."""
        from replication.cluster.source_cluster import source_name

        with self.zk_hook.connected() as zk:
            return source_name(zk, self.cluster_key, self.conf)

    def status(self) -> ReplicationStatus:
        """``replication.monitoring.status.replication_status``: peers, queues (lag, stuck), failovers, cycles."""
        from replication.monitoring.status import replication_status

        with self.zk_hook.connected() as zk:
            return replication_status(zk, self.cluster_key, self.conf)

    # -- consistency tokens -----------------------------------------------------------------------
    def consistency_token(self, peer_id: str, tables: list[str] | None = None) -> dict[str, Any]:
        """``replication.operations.consistency.take_token``: a token for everything written to the source until now."""
        from replication.operations.consistency import take_token

        with self.zk_hook.connected() as zk:
            return take_token(zk, self.cluster_key, self.conf, peer_id, tables).as_dict()

    def check_consistency(self, token: str) -> dict[str, Any]:
        """``operations.consistency.check_token``: ``consistent`` and what is still pending (queue, WAL, bytes).

        Raises ConsistencyTokenError for a malformed, unknown or expired token.
        """
        from replication.operations.consistency import check_token

        with self.zk_hook.connected() as zk:
            return check_token(zk, self.cluster_key, self.conf, token).as_dict()

    # -- the ship cycle ---------------------------------------------------------------------------
    def snapshot(self, peer_id: str, *, owner: str, cycle_id: str) -> dict[str, Any]:
        """Lease ``peer_id`` and write its manifest (``snapshot_step``); returns the outcome + py-files zip.

        ``busy`` is set (and no manifest queues are taken) when another cycle holds the peer's lease.
        """
        from replication.cluster.source_cluster import open_source
        from replication.jobs.launch import pyfiles_for
        from replication.source.cycle import snapshot_step
        from replication.source.manifest import result_path_for, shared_work_dir

        conf = self.conf
        with self.zk_hook.connected() as zk:
            source = open_source(zk, self.cluster_key, conf)
            # the root as recorded (webhdfs://... for a root on HDFS): the work dir on the cluster's own
            # filesystem, which workers on other hosts share; ``.root`` is a path of that filesystem only
            work = shared_work_dir(conf, source.root_uri or source.root)
            outcome = snapshot_step(
                zk,
                self.cluster_key,
                conf,
                owner=owner,
                peer_ids=[peer_id],
                work_dir=work,
                cycle_id=cycle_id,
                secret_lookup=airflow_secret,
            )
        pyfiles = pyfiles_for(outcome.manifest_path) if outcome.queues else None
        return {
            "peer_id": peer_id,
            "owner": owner,
            "cycle_id": outcome.cycle_id,
            "manifest": outcome.manifest_path,
            "result": result_path_for(outcome.manifest_path),
            "queues": outcome.queues,
            "leased": peer_id in outcome.peers,
            "busy": outcome.busy_peers.get(peer_id),
            "disabled": outcome.disabled,
            "pyfiles": str(pyfiles) if pyfiles else None,
            "spark_master": conf.get_str("hbrep.spark.master"),
        }

    def preload_engine_client(self) -> bool:
        """True when the Spark Connect client is already imported in this process (inherited from the
        executor); else start importing it in the background and return False at once, so that a ship
        window's first job waits less for it (``replication.jobs.connect.preload_client``)."""
        from replication.jobs.connect import preload_client

        return preload_client()

    def ship_window(
        self,
        peer_id: str,
        *,
        owner: str,
        cycle_prefix: str,
        connect_url: str,
        stop_requested: Callable[[], bool] = lambda: False,
    ) -> dict[str, Any]:
        """Passes of snapshot → ship on the Spark Connect server at ``connect_url`` → commit, for up to
        ``hbrep.ship.window.ms`` or until ``stop_requested()`` (``replication.jobs.ship_window.run_window``);
        returns the window's report."""
        from replication.cluster.source_cluster import open_source
        from replication.jobs.connect import ConnectShipRunner
        from replication.jobs.ship_window import run_window
        from replication.source.manifest import shared_work_dir

        conf = self.conf
        with self.zk_hook.connected() as zk:
            source = open_source(zk, self.cluster_key, conf)
            work = shared_work_dir(conf, source.root_uri or source.root)  # on HDFS for a root there (snapshot)
            with ConnectShipRunner(conf, work, url=connect_url, owner=owner) as runner:
                report = run_window(
                    zk, self.cluster_key, conf, runner, owner=owner, peer_ids=[peer_id], work_dir=work,
                    cycle_prefix=cycle_prefix, stop_requested=stop_requested,
                )  # fmt: skip
        return report.as_dict()

    def commit(self, manifest_path: str, *, owner: str) -> dict[str, Any]:
        """``commit_step``: positions, finished WALs, metrics, lease release. Idempotent."""
        from replication.source.cycle import commit_step

        with self.zk_hook.connected() as zk:
            return commit_step(zk, self.cluster_key, self.conf, manifest_path, owner=owner).as_dict()

    def release(self, peer_id: str, *, owner: str) -> bool:
        """Drop ``owner``'s lease on ``peer_id`` (True if it held it); a no-op otherwise."""
        from replication.zk.layout import ZNodePaths
        from replication.zk.lease import ShipLease

        with self.zk_hook.connected() as zk:
            paths = ZNodePaths(self.conf, parent=self.cluster_key.znode_parent)
            return ShipLease(zk, paths, peer_id, owner).release()

    # -- chores -----------------------------------------------------------------------------------
    def failover(self) -> dict[str, Any]:
        """``failover_once``: claim the queues of dead region servers."""
        from replication.failover import failover_once

        with self.zk_hook.connected() as zk:
            return failover_once(zk, self.cluster_key, self.conf).as_dict()

    def clean(self, *, explain: bool = False) -> dict[str, Any]:
        """``clean_once``: delete old WALs no queue holds and past the TTL."""
        from replication.cleaner import clean_once

        with self.zk_hook.connected() as zk:
            return clean_once(zk, self.cluster_key, self.conf, explain=explain).as_dict()

    def record_lag_alert(self, alert: dict[str, Any]) -> None:
        """``monitoring.alerts.record_lag_alert``: keep the alert where status and the Replication view show it."""
        from replication.monitoring.alerts import record_lag_alert

        with self.zk_hook.connected() as zk:
            record_lag_alert(zk, self.cluster_key, self.conf, alert)

    def replicated_through(self, peer_id: str) -> dict[str, Any]:
        """``replication.monitoring.replicated_through.record_and_sample``: the peer's replicated-through times now,
        kept, with the values they replace (``*_before``: the interval that became replicated)."""
        from replication.monitoring.replicated_through import record_and_sample

        with self.zk_hook.connected() as zk:
            return record_and_sample(zk, self.cluster_key, self.conf, peer_id)

    def lag_alert_ms(self) -> int:
        """The alert threshold ``hbrep.lag.alert.ms``."""
        return self.conf.get_int("hbrep.lag.alert.ms")

    # -- verify -----------------------------------------------------------------------------------
    def verify_targets(
        self,
        *,
        peer: str | None,
        table: str | None,
        families: list[str] | None,
        start_ms: int,
        end_ms: int,
    ) -> list[dict[str, Any]]:
        """``replication.checks.verify.verify_targets``: the (peer, table, families) to verify over the window."""
        from replication.checks.verify import verify_targets

        with self.zk_hook.connected() as zk:
            return verify_targets(
                zk, self.cluster_key, self.conf, peer=peer, table=table, families=families,
                start_ms=start_ms, end_ms=end_ms,
            )  # fmt: skip

    @contextmanager
    def check_session(self, app_name: str, connect_url: str | None = None) -> Iterator[Any]:
        """The Spark session a check runs on: the Spark Connect server at ``connect_url`` when given (the
        warm engine of ``hbrep.spark.mode=connect``, a server-side session of its own beside the ship jobs'),
        else a local session in this worker, as spark-submit mode has always run them."""
        if connect_url:
            from replication.jobs.connect import connect_session
            from replication.source.manifest import work_dir_for

            # pyspark.sql.functions build Spark Connect columns only while this is set, as
            # SparkSession.builder.remote() sets it; restored after, for a local session later in this process
            prior = os.environ.get(_CONNECT_MODE)
            os.environ[_CONNECT_MODE] = "1"
            try:
                with connect_session(connect_url, self.conf, work_dir_for(self.conf), purpose="checks") as spark:
                    yield spark
            finally:
                if prior is None:
                    os.environ.pop(_CONNECT_MODE, None)
                else:
                    os.environ[_CONNECT_MODE] = prior
        else:
            from replication.spark import spark_session

            yield spark_session(app_name)

    def verify(
        self,
        *,
        peer_id: str,
        table: str,
        families: list[str],
        start_ms: int,
        end_ms: int,
        connect_url: str | None = None,
    ) -> dict[str, Any]:
        """VerifyReplication of one (peer, table) over [start_ms, end_ms): the HBase counters.

        Calls ``replication.checks.peer_checks.verify_replication`` (which also records the verdict for status),
        on the Spark Connect server at ``connect_url`` when given (:meth:`check_session`).
        """
        from replication.checks.peer_checks import verify_replication

        app = f"hbrep-verify-{safe_name(peer_id)}-{safe_name(table)}"
        with self.check_session(app, connect_url) as spark, self.zk_hook.connected() as zk:
            result = verify_replication(
                spark, zk, self.cluster_key, self.conf, peer_id=peer_id, table=table,
                start_ms=start_ms, end_ms=end_ms, families=families or None,
            )  # fmt: skip
        return dict(result.counters)

    def quality(
        self,
        *,
        peer_id: str,
        table: str,
        start_ms: int = 0,
        end_ms: int | None = None,
        connect_url: str | None = None,
    ) -> dict[str, Any]:
        """The Great Expectations checkpoint of the replicated table on the peer (``checks.peer_checks``), on the
        Spark Connect server at ``connect_url`` when given (:meth:`check_session`)."""
        from replication.checks.peer_checks import check_replicated_table
        from replication.tables.semantics import LATEST_TIMESTAMP

        app = f"hbrep-quality-{safe_name(peer_id)}-{safe_name(table)}"
        with self.check_session(app, connect_url) as spark, self.zk_hook.connected() as zk:
            report = check_replicated_table(
                spark, zk, self.cluster_key, self.conf, peer_id=peer_id, table=table,
                start_ms=start_ms, end_ms=LATEST_TIMESTAMP if end_ms is None else end_ms,
            )  # fmt: skip
        return report.as_dict()

    # -- repair -----------------------------------------------------------------------------------
    def repair(
        self,
        *,
        peer_id: str,
        table: str,
        families: list[str] | None = None,
        start_ms: int = 0,
        end_ms: int | None = None,
        dry_run: bool = False,
        deletes: bool | None = None,
    ) -> dict[str, Any]:
        """``replication.operations.repair``: make the peer's copy of ``table`` the source's (the report as a dict)."""
        from replication.operations.repair import prepare_repair, run_repair
        from replication.operations.sync_table import SyncOptions
        from replication.spark import spark_session
        from replication.tables.semantics import LATEST_TIMESTAMP

        options = SyncOptions(
            start_time=start_ms, end_time=LATEST_TIMESTAMP if end_ms is None else end_ms, families=families or None,
            dry_run=dry_run,
        )  # fmt: skip
        with self.zk_hook.connected() as zk:
            job = prepare_repair(zk, self.cluster_key, self.conf, peer_id=peer_id, table=table, options=options,
                                 deletes=deletes)  # fmt: skip
            spark = spark_session(f"hbrep-repair-{safe_name(peer_id)}-{safe_name(table)}")
            return run_repair(spark, job, self.conf).as_dict()

    # -- seed -------------------------------------------------------------------------------------
    def seed_start(
        self, *, peer_id: str, tables: list[str], cluster_key: str | None, chunks: int, peer_rootdir: str | None = None
    ) -> list[dict]:
        """``replication.operations.seed.start_seed`` (or its resume): the (table, chunk) pairs left to copy."""
        from replication.operations.seed import check_seed_request, start_seed
        from replication.spark import spark_session

        with self.zk_hook.connected() as zk:
            check_seed_request(zk, self.cluster_key, self.conf, peer_id, tables, cluster_key=cluster_key,
                               chunks=chunks, peer_rootdir=peer_rootdir)  # fmt: skip
            spark = spark_session(f"hbrep-seed-{safe_name(peer_id)}")
            mark, _ = start_seed(spark, zk, self.cluster_key, self.conf, peer_id, tables, cluster_key=cluster_key,
                                 chunks=chunks, peer_rootdir=peer_rootdir)  # fmt: skip
        return [{"table": t, "chunk": k} for t, k in mark.chunks_left()]

    def seed_copy(self, *, peer_id: str, table: str, chunk: int) -> int:
        """``replication.operations.seed.copy_chunk``: the cells written for one chunk (0 when it was done before).
        A seed between real HBase clusters copies with HBase's snapshot tools (Java, on this worker)."""
        from replication.devstack.hbase_snapshots import JavaSnapshotCopier
        from replication.operations.seed import copy_chunk
        from replication.spark import spark_session
        from replication.zk.layout import ZNodePaths
        from replication.zk.seed_marks import read_seed

        with self.zk_hook.connected() as zk:
            mark = read_seed(zk, ZNodePaths(self.conf, parent=self.cluster_key.znode_parent), peer_id)
            by_snapshot = mark is not None and mark.method == "snapshot"  # HBase's tools copy: no Spark needed
            spark = None if by_snapshot else spark_session(f"hbrep-seed-{safe_name(peer_id)}")
            copier = JavaSnapshotCopier(self.conf) if by_snapshot else None
            return copy_chunk(spark, zk, self.cluster_key, self.conf, peer_id, table, chunk, copier=copier)

    def seed_catch_up(self, *, peer_id: str, timeout_s: float, connect_url: str | None = None) -> dict[str, Any]:
        """``replication.operations.seed.catch_up``, the helper shipped by cycles run from here (on the Spark Connect
        server at ``connect_url``, else by spark-submit); then until the peer shipped the tables' latest
        edits. The cycles, the token's time and the tables."""
        from replication.jobs.connect import ConnectShipRunner
        from replication.jobs.launch import SparkSubmitRunner
        from replication.operations.seed import catch_up, wait_for_peer
        from replication.source.cycle import run_cycle
        from replication.zk.layout import ZNodePaths
        from replication.zk.seed_marks import read_seed

        conf = self.conf
        runner = ConnectShipRunner(conf, url=connect_url) if connect_url else SparkSubmitRunner()
        with self.zk_hook.connected() as zk, ExitStack() as stack:
            if connect_url:
                stack.enter_context(runner)

            def ship_once(peer: str) -> None:
                run_cycle(zk, self.cluster_key, conf, runner=runner, peer_ids=[peer])

            mark = read_seed(zk, ZNodePaths(conf, parent=self.cluster_key.znode_parent), peer_id)
            tables = mark.tables if mark else []
            cycles, through = catch_up(zk, self.cluster_key, conf, peer_id, run_helper_cycle=ship_once,
                                       timeout_s=timeout_s)  # fmt: skip
            cycles += wait_for_peer(zk, self.cluster_key, conf, peer_id, tables, run_cycle=ship_once,
                                    timeout_s=timeout_s)  # fmt: skip
        return {"cycles": cycles, "through_ms": through, "tables": tables}

    def seed_verify(self, *, peer_id: str, tables: list[str], through_ms: int) -> dict[str, dict[str, int]]:
        """``operations.seed.verify_seed``: VerifyReplication counters per seeded table (SeedError on BADROWS)."""
        from replication.operations.seed import verify_seed
        from replication.spark import spark_session

        spark = spark_session(f"hbrep-seed-{safe_name(peer_id)}")
        with self.zk_hook.connected() as zk:
            return verify_seed(spark, zk, self.cluster_key, self.conf, peer_id, tables, through_ms)


def default_owner(dag_id: str, run_id: str, peer_id: str) -> str:
    """The lease owner of one peer branch of one DAG run (stable across task retries)."""
    return f"airflow:{dag_id}:{run_id}:{peer_id}"
