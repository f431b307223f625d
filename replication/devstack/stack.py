"""``make up`` / ``make down``: ZooKeeper, two embedded clusters (a → b, peer 1), the Spark Connect server
the ship DAG runs on, and ``airflow standalone``.

State lives in ``<state>/`` (default ``.hbrep/airflow-stack``): ``zk/`` (ZooKeeper), ``a/`` and ``b/`` (cluster
roots), ``spark/`` (Spark Connect), ``postgres/`` (Airflow's metadata database), ``airflow/`` (AIRFLOW_HOME),
``stack.json`` (what was started),
``airflow.log``. ``up`` starts Airflow under ``setsid`` so ``down`` can stop its whole session (scheduler,
api-server, triggerer, workers) with SIGTERM, and stops the region servers, Spark Connect, PostgreSQL and
ZooKeeper. Everything ``up`` starts outlives it (``HBREP_DETACHED``: no parent-death signal).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replication.cluster.embedded import start_cluster, stop_servers
from replication.config import Config
from replication.devstack.airflow_api import AirflowApi, AirflowApiError
from replication.devstack.airflow_stack import (
    DATABASE_ENV,
    admin_password,
    airflow_environment,
    fail_orphaned_task_instances,
    metadata_database,
    start_standalone,
    stop_session,
)
from replication.devstack.dist_stack import DistServices
from replication.devstack.postgres import PostgresServer
from replication.devstack.spark_connect import SparkConnectServer
from replication.devstack.zookeeper import ZooKeeperServer
from replication.fs import get_filesystem
from replication.net import port_in_use
from replication.processes import detached, start_time
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

DAG_IDS = ("hbrep_ship", "hbrep_failover", "hbrep_log_cleaner", "hbrep_verify", "hbrep_wait_for_peer")
# The embedded stack's ship schedule and window (docs/operations.md, "make up"; bench/scheduler.py measures them).
# The window is longer than the schedule's period: the next run's ship task starts while a window is
# open, waits for the lease, and the window hands over after its current pass (ship_window.py); the
# window's end is reached only when no next run comes (a paused DAG, a stalled scheduler).
SHIP_SCHEDULE = "* * * * *"
SHIP_WINDOW_MS = 120000
REPO = Path(__file__).resolve().parents[2]


def airflow_env(
    state: Path,
    source_key: str,
    port: int,
    spark_port: int | None,
    window_ms: int = SHIP_WINDOW_MS,
    *,
    database: str,
    more: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of every Airflow process of the stack (loopback only, 4 workers, the metadata
    database at the SQLAlchemy URL ``database``); the ship DAG runs on the Spark Connect server at
    ``spark_port``, or through spark-submit when it is None; ``more`` is added first (the distributed
    stack's executor and Spark master)."""
    extra = {
        **(more or {}),
        "HBREP_SHIP_SCHEDULE": SHIP_SCHEDULE,
        "HBREP__hbrep__ship__window__ms": str(window_ms),
        "HBREP_VERIFY_START": os.environ.get("HBREP_VERIFY_START") or verify_start(state),
    }
    return airflow_environment(
        state / "airflow", source_key, database=database, api_port=port, spark_connect_port=spark_port, extra=extra
    )


def verify_start(state: Path) -> str:
    """The day (``YYYY-MM-DD``, UTC) this stack's state was first brought up, kept in ``<state>/verify-start``.

    It is the daily verify DAG's first day: a new stack has no catch-up runs for days before it existed,
    while a stack brought up again catches up with the days it was down (the DAG's catchup).
    """
    marker = state / "verify-start"
    if not marker.exists():
        state.mkdir(parents=True, exist_ok=True)
        marker.write_text(datetime.now(UTC).strftime("%Y-%m-%d"))
    return marker.read_text().strip()


def up(
    state: Path,
    zk_port: int,
    port: int,
    spark_port: int,
    mode: str = "connect",
    window_ms: int = SHIP_WINDOW_MS,
    dist: bool = False,
) -> None:
    """Start everything (see module doc), to outlive this process, and print the UI address and how to log in.

    ``dist``: the distributed stack (devstack/dist_stack.py): HDFS (cluster a's root and the work dir),
    the Redis broker, a Spark standalone master with two workers and the Connect server on it, the
    CeleryExecutor and two Celery workers; Spark Connect's port is then ``spark_port`` as well."""
    if port_in_use(port):
        raise SystemExit(f"port {port} on 127.0.0.1 is already in use (Airflow's API server); pass --port N")
    with detached():  # no parent-death signal: the stack runs on after `make up` returns
        _up(state, zk_port, port, spark_port, mode, window_ms, dist)


def _up(state: Path, zk_port: int, port: int, spark_port: int, mode: str, window_ms: int, dist: bool) -> None:
    state.mkdir(parents=True, exist_ok=True)
    zk = ZooKeeperServer(state / "zk", zk_port)
    zk.start()
    stack: dict[str, object] = {"zk_dir": str(state / "zk"), "zk_port": zk_port, "roots": []}
    (state / "stack.json").write_text(json.dumps(stack))
    database, postgres = metadata_database(state / "postgres", state / "airflow")
    if postgres is not None:
        stack["postgres_dir"] = str(postgres.state_dir)
        (state / "stack.json").write_text(json.dumps(stack))
    services = DistServices(state / "dist", spark_port) if dist else None
    if services is not None:
        stack["dist_dir"] = str(services.state)
        (state / "stack.json").write_text(json.dumps(stack))
        services.start_shared()
        spark = services.connect
    else:
        spark = SparkConnectServer(state / "spark", spark_port)
        if mode == "connect":
            spark.start()
            stack["spark_dir"] = str(spark.state_dir)
            (state / "stack.json").write_text(json.dumps(stack))
    keys = {name: f"127.0.0.1:{zk_port}:/hbase-{name}" for name in ("a", "b")}
    roots = {"a": services.source_root() if services else str(state / "a"), "b": str(state / "b")}
    conf = Config.load()
    table = TableDescriptor.of("t1", ColumnFamilyDescriptor("f", scope=1))
    for name in ("b", "a"):
        cluster = start_cluster(keys[name], roots[name], 2 if name == "a" else 1, conf=conf, name=name)
        stack["roots"].append(cluster.root)  # type: ignore[union-attr]
        (state / "stack.json").write_text(json.dumps(stack))
        registry = TableRegistry(*get_filesystem(cluster.root))
        if not registry.exists("t1"):
            registry.create(table)
        if name == "a":
            peers = ReplicationPeerStorage(cluster.zk, cluster.paths)
            if "1" not in peers.list_peer_ids():
                peers.add_peer("1", ReplicationPeerConfig(cluster_key=keys["b"]))
        cluster.zk.stop()  # the processes stay up; `down` stops them by their pid files
    extra = services.airflow_extra() if services else {}
    env = airflow_env(
        state, keys["a"], port, spark_port if mode == "connect" else None, window_ms, database=database, more=extra
    )
    airflow = start_standalone(env, state / "airflow.log", timeout=240)
    stack["airflow_sid"] = airflow.proc.pid
    stack["airflow_started"] = start_time(airflow.proc.pid)
    stack["airflow_url"] = airflow.url
    (state / "stack.json").write_text(json.dumps(stack))
    if services is not None:
        services.start_workers(env)
    password_file = state / "airflow" / "simple_auth_manager_passwords.json.generated"
    password = airflow.admin_password()
    # The ZooKeeper pool, and DAGs paused earlier run again: through the API server just started (an `airflow
    # pools set` and an `airflow dags unpause` per DAG started Airflow afresh each time, and a `db migrate`
    # before them ran the migration the stack's own session runs first). A task of the pool queued before the
    # pool exists waits for it; a DAG not parsed yet is created unpaused (DAGS_ARE_PAUSED_AT_CREATION).
    with AirflowApi(airflow.url, "admin", password) as api:
        api.set_pool("zookeeper", 4, "protects the ZooKeeper ensemble")
        for dag_id in DAG_IDS:
            with contextlib.suppress(AirflowApiError):
                api.set_paused(dag_id, False)
    print(f"Airflow UI:        http://127.0.0.1:{port}/   (log in as admin / {password}; file {password_file})")
    print(f"Replication view:  http://127.0.0.1:{port}/hbrep/")
    if postgres is not None:
        print(f"Airflow database:  PostgreSQL on 127.0.0.1:{postgres.port}, database airflow "
              f"(user hbrep, password in {postgres.state_dir / 'password'})")  # fmt: skip
    else:
        print(f"Airflow database:  SQLite {state / 'airflow' / 'airflow.db'} ({DATABASE_ENV}=sqlite)")
    print(f"Source cluster a:  {keys['a']} (table t1, family f replicated to peer 1 = {keys['b']})")
    if mode == "connect":
        print(f"Spark Connect:     {spark.url} (the ship DAG's engine; hbrep spark status --state {spark.state_dir})")
    if services is not None:
        print(f"Spark master:      {services.spark.master_url} (2 workers; spark-submit mode submits here too)")
        print(f"Celery broker:     {services.redis.url}; workers {', '.join(w.name for w in services.workers)}")
        print(f"HDFS:              {services.source_root()} (cluster a's root, WALs and the ship work dir)")
    print("Stop everything:   make down")


def down(state: Path, clean: bool = False) -> None:
    """Stop what ``up`` started: the Airflow session, the region servers, Spark Connect, PostgreSQL, ZooKeeper.

    The clusters' state (ZooKeeper data, WALs, tables, Airflow's database) is kept for the next ``up``
    unless ``clean`` is set, which removes the whole state folder once everything is stopped.
    """
    path = state / "stack.json"
    if not path.exists():
        print("nothing to stop")
        _remove_state(state, clean)
        return
    stack = json.loads(path.read_text())
    sid = stack.get("airflow_sid")
    leader_started = start_time(int(sid)) if sid else None
    dist = DistServices(Path(stack["dist_dir"])) if stack.get("dist_dir") else None
    if sid and (leader_started is None or leader_started == stack.get("airflow_started", leader_started)):
        # The leader gone (None): what is left of the session is ours (Linux reuses no pid that still
        # names a session). A leader with another start time is a stranger that got the pid: left alone.
        stop_session(int(sid), before_api_stops=_before_api_stops(stack, state, dist))
    if dist is not None:  # (stopped already when the session was ours: stop() of a stopped worker does nothing)
        for worker in dist.workers:
            worker.stop()
    for root in stack.get("roots", []):
        stop_servers(root)
    if stack.get("spark_dir"):
        SparkConnectServer(stack["spark_dir"]).stop()
    if dist is not None:
        dist.stop()
    if stack.get("postgres_dir"):
        PostgresServer(stack["postgres_dir"]).stop()
    ZooKeeperServer(stack["zk_dir"], int(stack["zk_port"])).stop()
    path.unlink()
    print("stopped Airflow, the region servers, Spark Connect, PostgreSQL and ZooKeeper"
          + (", the Celery workers, Spark's master and workers, Redis and HDFS" if dist else ""))  # fmt: skip
    _remove_state(state, clean)


def _before_api_stops(stack: dict[str, Any], state: Path, dist: DistServices | None) -> Callable[[], None]:
    """What ``down`` runs with only the API server left of the Airflow session: the Celery workers of the
    distributed stack stopped (their tasks, ended by the SIGTERM, report their ends through the API server), then
    :func:`fail_orphaned_task_instances`, printing each task instance it marked (skipped for a stack that recorded
    no API address)."""

    def run() -> None:
        if dist is not None:
            for worker in dist.workers:
                worker.stop()
        url = stack.get("airflow_url")
        if url:
            with AirflowApi(str(url), "admin", admin_password(state / "airflow"), timeout=15) as api:
                for marked in fail_orphaned_task_instances(api):
                    print(f"marked failed (still running when its process was stopped): {marked}")

    return run


def _remove_state(state: Path, clean: bool) -> None:
    if clean and state.exists():
        shutil.rmtree(state)
        print(f"removed {state} (the next make up starts with empty clusters)")


def main(argv: list[str] | None = None) -> int:
    """``python -m replication.devstack.stack up|down [--state DIR] [--zk-port N] [--port N]``."""
    parser = argparse.ArgumentParser(prog="replication.devstack.stack")
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--state", default=str(REPO / ".hbrep" / "airflow-stack"))
    parser.add_argument("--zk-port", type=int, default=21810)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--spark-port", type=int, default=15002, help="Spark Connect's gRPC port")
    parser.add_argument("--spark-mode", choices=("connect", "submit"), default="connect",
                        help="the ship DAG's engine: the Spark Connect server, or spark-submit per run")  # fmt: skip
    parser.add_argument("--ship-window-ms", type=int, default=SHIP_WINDOW_MS, help="hbrep.ship.window.ms")
    parser.add_argument("--executor", help="up: Airflow's executor for the one-host stack (default hbrep_airflow's "
                        "PreloadingLocalExecutor; e.g. LocalExecutor)")  # fmt: skip
    parser.add_argument("--clean", action="store_true", help="down: also remove the state folder")
    parser.add_argument("--dist", action="store_true",
                        help="up: the distributed stack (Celery workers, Spark standalone cluster, HDFS)")  # fmt: skip
    args = parser.parse_args(argv)
    state = Path(args.state).resolve()
    if args.action == "up":
        if args.executor:
            os.environ["AIRFLOW__CORE__EXECUTOR"] = args.executor  # launch_standalone keeps a named executor
        up(state, args.zk_port, args.port, args.spark_port, args.spark_mode, args.ship_window_ms, args.dist)
    else:
        down(state, clean=args.clean)
    return 0


if __name__ == "__main__":
    sys.exit(main())
