"""``make demo`` / ``hbrep demo``: the embedded default, end to end, with a short report.

1. ZooKeeper from pyspark's jars; cluster ``/hbase-a`` (3 region servers) → ``/hbase-b`` (2), on loopback.
2. Table ``usertable`` with a replicated family ``cf`` (REPLICATION_SCOPE 1) and a local one ``local``
   (scope 0) on both clusters; peer ``1`` on a.
3. A write load; half-way a source region server is SIGKILLed (writes move to the others).
4. The DAGs run under Airflow's scheduler (``airflow standalone`` on a free loopback port, as ``make up``
   runs it), each triggered and waited for through the REST API: ``hbrep_failover`` claims the dead
   server's queues, ``hbrep_ship`` ships every queue (on the Spark Connect server the demo starts),
   ``hbrep_verify`` runs VerifyReplication and the Great Expectations checks.
5. A report: rows written and shipped, lag, failovers, GOODROWS/BADROWS, where the GX Data Docs are.
Everything it started is stopped at the end, also on failure or Ctrl-C.

The demo runs Airflow as subprocesses and talks HTTP to it; the library itself never imports Airflow.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from replication.cluster.embedded import EmbeddedCluster, start_cluster
from replication.config import Config
from replication.devstack.airflow_api import AirflowApi
from replication.devstack.airflow_stack import (
    AirflowStandalone,
    airflow_environment,
    launch_standalone,
    metadata_database,
)
from replication.devstack.secure_realm import SecureRealm
from replication.devstack.spark_connect import SparkConnectServer
from replication.devstack.zookeeper import ZooKeeperServer
from replication.fs import get_filesystem
from replication.monitoring.metrics import MetricsStore
from replication.monitoring.status import replication_status
from replication.net import free_port
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

TABLE = "usertable"
PEER = "1"
DEMO_CONF = {
    # small numbers so a short demo shows rolls, batches and a failover
    "hbase.regionserver.hlog.blocksize": str(1024 * 1024),
    "replication.sleep.before.failover": "0",
    "replication.source.sleepforretries": "200",
    "replication.source.maxretriesmultiplier": "5",
}


_STARTED = time.monotonic()


def say(message: str) -> None:
    """Print one line of the demo's story, with the seconds since the demo started."""
    print(f"[demo {time.monotonic() - _STARTED:4.0f}s] {message}", flush=True)


def demo_environment(
    state: Path,
    source_key: str,
    api_port: int,
    spark_connect_port: int | None = None,
    *,
    database: str,
    more: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The embedded stack's Airflow environment (metadata database at the SQLAlchemy URL ``database``),
    quieter, with the demo's settings and ``more`` variables; DAGs start paused (the
    demo unpauses the three it runs) and hbrep_verify starts today, so its scheduler adds no catchup runs.
    The ship DAG runs on the Spark Connect server at ``spark_connect_port`` when given (one pass per run)."""
    extra = {
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
        "HBREP_VERIFY_START": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    extra.update({"HBREP__" + key.replace(".", "__"): value for key, value in DEMO_CONF.items()})
    extra.update(more or {})
    return airflow_environment(
        state / "airflow",
        source_key,
        database=database,
        api_port=api_port,
        spark_connect_port=spark_connect_port,
        extra=extra,
    )


def run_dag(api: AirflowApi, dag_id: str, conf: dict[str, Any] | None = None, timeout: float = 900) -> dict[str, Any]:
    """Unpause ``dag_id``, trigger a run and wait for the scheduler to finish it; returns the run."""
    api.set_paused(dag_id, False)
    run_id = api.trigger(dag_id, conf)
    return api.wait_for_run(dag_id, run_id, timeout=timeout)


def wait_replicated(source: ClusterKey, conf: Config, timeout: float = 600) -> None:
    """Wait until every queue of ``source`` has shipped everything (pending bytes 0, lag 0), whichever ship
    run did it: the demo's own run skips a peer whose lease another run holds, such as the scheduled run
    that unpausing the DAG starts (on a busy machine that run could still be shipping when the demo's
    ended, and VerifyReplication then found rows missing). RuntimeError naming the queues left after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        with connected(source, **zk_options(conf)) as zk:
            queues = replication_status(zk, source, conf).queues
        left = {q.queue: q.pendingBytes for q in queues if q.pendingBytes or q.replicationLag}
        if not left:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"queues not shipped within {timeout:.0f}s (pending bytes): {left}")
        time.sleep(2)


def write_load(cluster: EmbeddedCluster, rows: int, kill_at: int, killed: list[str], acked: list[int]) -> None:
    """Write ``rows`` rows in batches of 100 (cf and local families); SIGKILL a server at ``kill_at``."""
    with cluster.client() as client:
        for start in range(0, rows, 100):
            if start >= kill_at and not killed:
                victim = cluster.servers[0]
                cluster.kill(victim)
                killed.append(victim)
            cells = []
            for i in range(start, min(rows, start + 100)):
                row = f"user{i:06d}".encode()
                cells.append(Cell(row, b"cf", b"field0", 0x7FFFFFFFFFFFFFFF, CellType.PUT, b"value-%d" % i))
                cells.append(Cell(row, b"local", b"note", 0x7FFFFFFFFFFFFFFF, CellType.PUT, b"stays-on-a"))
            client.batch(TABLE, cells)
            acked.append(min(rows, start + 100))


def start_services(
    stack: contextlib.ExitStack, state: Path, log: Path, realm: SecureRealm | None = None
) -> tuple[str, str, AirflowStandalone]:
    """ZooKeeper, PostgreSQL (Airflow's metadata database), Airflow (booting in the background) and the
    Spark Connect server, each stopped by ``stack``; the cluster keys ``/hbase-a`` and ``/hbase-b`` on
    that ZooKeeper, and Airflow. With ``realm``, ZooKeeper demands Kerberos of every client and Airflow's
    processes run hbrep as the realm's ``hbrep`` principal (its keytab)."""
    sasl = realm.zookeeper_sasl() if realm is not None else None
    zk_server = ZooKeeperServer(state / "zk", free_port(), sasl=sasl)
    say(f"starting ZooKeeper (pyspark's jars) on {zk_server.hosts}{' (SASL/Kerberos only)' if sasl else ''}")
    zk_server.start()
    stack.callback(zk_server.stop)
    key_a, key_b = f"{zk_server.hosts}:/hbase-a", f"{zk_server.hosts}:/hbase-b"
    spark = SparkConnectServer(state / "spark", free_port())
    database, postgres = metadata_database(state / "postgres", state / "airflow")
    if postgres is not None:
        say(f"started PostgreSQL on 127.0.0.1:{postgres.port}, Airflow's metadata database")
        stack.callback(postgres.stop)  # after Airflow's stop (callbacks run last first)
    more = realm.hbrep_environment() if realm is not None else None
    env = demo_environment(state, key_a, free_port(), spark.port, database=database, more=more)
    airflow = launch_standalone(env, log)  # boots (scheduler, API server, ...) while the clusters start
    stack.callback(airflow.stop)
    say(f"starting the Spark Connect server (pyspark's jars) on {spark.url}, the ship DAG's engine")
    spark.start()
    stack.callback(spark.stop)
    return key_a, key_b, airflow


def run(rows: int, state: Path) -> dict[str, Any]:
    """The whole demo in ``state``; returns the report."""
    report: dict[str, Any] = {"state": str(state)}
    log = state / "airflow.log"
    with contextlib.ExitStack() as stack:
        key_a, key_b, airflow = start_services(stack, state, log)
        conf = Config.load(env={}, overrides=DEMO_CONF)
        say("starting cluster a (/hbase-a, 3 region servers) and cluster b (/hbase-b, 2 region servers)")
        cluster_a = stack.enter_context(start_cluster(key_a, str(state / "a"), 3, conf=conf, name="a"))
        cluster_b = stack.enter_context(start_cluster(key_b, str(state / "b"), 2, conf=conf, name="b"))
        for cluster in (cluster_a, cluster_b):
            fs, root = get_filesystem(cluster.root)
            TableRegistry(fs, root).create(
                TableDescriptor.of(TABLE, ColumnFamilyDescriptor("cf", scope=1), ColumnFamilyDescriptor("local"))
            )
        say(f"table {TABLE}: family cf replicated (scope 1), family local kept local (scope 0), on both")
        source = ClusterKey.parse(key_a)
        with connected(source) as zk:
            ReplicationPeerStorage(zk, ZNodePaths(conf, parent="/hbase-a")).add_peer(
                PEER, ReplicationPeerConfig(cluster_key=key_b)
            )
        say(f"add_peer {PEER} {key_b}")
        killed: list[str] = []
        acked: list[int] = []
        writer = threading.Thread(target=write_load, args=(cluster_a, rows, rows // 2, killed, acked))
        started = time.monotonic()
        writer.start()
        writer.join()
        report["rows_written"] = acked[-1] if acked else 0
        say(f"wrote {report['rows_written']} rows in {time.monotonic() - started:.1f}s; "
            f"SIGKILLed region server {killed[0]} half-way")  # fmt: skip
        report["killed"] = killed[0]
        airflow.wait_ready(timeout=300)
        api = stack.enter_context(AirflowApi(airflow.url, "admin", airflow.admin_password()))
        api.call("POST", "/pools", json={"name": "zookeeper", "slots": 4, "description": "hbrep: ZooKeeper tasks"})
        for dag_id in ("hbrep_failover", "hbrep_ship", "hbrep_verify"):
            api.wait_for_dag(dag_id, timeout=180)
        cluster_a.wait_until_dead(killed[0])
        say(f"{killed[0]}'s ZooKeeper session expired; Airflow's scheduler runs the DAGs ({airflow.url}, "
            f"log: {log})")  # fmt: skip
        verify_conf = {"peer": PEER, "table": TABLE, "start": 0, "end": int(time.time() * 1000) + 3_600_000}
        for dag_id, run_conf in (("hbrep_failover", None), ("hbrep_ship", None), ("hbrep_verify", verify_conf)):
            if dag_id == "hbrep_verify":
                with cluster_b.client() as client:
                    client.flush(TABLE)
                with cluster_a.client() as client:
                    client.flush(TABLE)
            started_run = time.monotonic()
            run = run_dag(api, dag_id, run_conf)
            report.setdefault("dag_runs", {})[dag_id] = run["state"]
            say(f"{dag_id} run {run['dag_run_id']}: {run['state']} in {time.monotonic() - started_run:.0f}s")
            if dag_id == "hbrep_ship":
                wait_replicated(source, conf)
        with connected(source) as zk:
            status = replication_status(zk, source, conf)
        fs, root = get_filesystem(cluster_a.root)
        stored = MetricsStore(fs, root).load()
        # every queue ever shipped, recovered queues that drained and were deleted included
        report["rows_shipped"] = int(sum(q.get("shippedOps", 0) for q in stored.queues.values()))
        report["edits_filtered"] = int(sum(q.get("logEditsFiltered", 0) for q in stored.queues.values()))
        report["lag_ms"] = status.peers[PEER].replicationLag
        report["queues_left"] = [q.queue for q in status.queues]
        report["failovers"] = stored.failovers
        report["verify"] = stored.checks.get(f"verify/{PEER}/{TABLE}", {})
        report["quality"] = stored.checks.get(f"quality/{PEER}/{TABLE}", {})
        say("stopping everything it started")
    return report


def print_report(report: dict[str, Any]) -> None:
    counters = report.get("verify", {}).get("counters", {})
    quality = report.get("quality", {})
    failovers = report.get("failovers", [])
    lines = [
        "",
        "hbrep demo report",
        "-----------------",
        f"rows written to a        {report.get('rows_written')}",
        f"rows shipped to b        {report.get('rows_shipped')} (WAL edits filtered: {report.get('edits_filtered')})",
        f"replication lag          {report.get('lag_ms')} ms",
        f"region server killed     {report.get('killed')}",
        f"failovers                {len(failovers)}"
        + "".join(f"\n  {f['dead_server']} -> {f['claimer']}: {f['moved']}" for f in failovers),
        f"DAG runs                 {report.get('dag_runs')}",
        f"VerifyReplication        GOODROWS={counters.get('GOODROWS')} BADROWS={counters.get('BADROWS')}",
        f"GX checks                {'passed' if quality.get('success') else 'FAILED'} "
        f"(source rows {quality.get('source_rows')}, peer rows {quality.get('peer_rows')})",
        f"GX Data Docs             {quality.get('data_docs')}",
        f"state kept in            {report.get('state')}",
    ]
    print("\n".join(lines), flush=True)


def run_demo(
    argv: list[str] | None,
    *,
    prog: str,
    description: str,
    default_rows: int,
    run_fn: Callable[..., dict[str, Any]],
    report_fn: Callable[[dict[str, Any]], None],
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
    check_arguments: Callable[[dict[str, Any]], str | None] | None = None,
) -> dict[str, Any]:
    """Parse ``--rows``/``--state`` and the options ``add_arguments`` adds (passed to ``run_fn`` as keyword
    arguments; ``check_arguments`` says what is wrong with them together, refused as argparse refuses, before the
    state folder is made), run the demo in its state folder, print its report; the report."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--rows", type=int, default=default_rows, help=f"rows to write (default {default_rows})")
    parser.add_argument("--state", help="folder for all state (default: a new temporary folder)")
    if add_arguments is not None:
        add_arguments(parser)
    args = vars(parser.parse_args(argv))
    wrong = check_arguments(args) if check_arguments is not None else None
    if wrong:
        parser.error(wrong)
    rows, state_dir = args.pop("rows"), args.pop("state")
    state = Path(state_dir or tempfile.mkdtemp(prefix=f"hbrep-{prog.split()[-1]}-")).resolve()
    state.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    report = run_fn(rows, state, **args)
    report_fn(report)
    say(f"done in {time.monotonic() - started:.0f}s")
    return report


def main(argv: list[str] | None = None) -> int:
    """Run the demo; exit 0 only when replication verified clean (BADROWS=0, GX passed)."""
    description = __doc__.split("\n")[0]
    report = run_demo(
        argv, prog="hbrep demo", description=description, default_rows=3000, run_fn=run, report_fn=print_report
    )
    counters = report.get("verify", {}).get("counters", {})
    ok = (
        counters.get("BADROWS") == 0
        and counters.get("GOODROWS") == report.get("rows_written")
        and report.get("quality", {}).get("success")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
