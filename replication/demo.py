"""``make demo`` / ``hbrep demo``: the embedded default, end to end, with a short report.

1. ZooKeeper from pyspark's jars; cluster ``/hbase-a`` (3 region servers) → ``/hbase-b`` (2), on loopback.
2. Table ``usertable`` with a replicated family ``cf`` (REPLICATION_SCOPE 1) and a local one ``local``
   (scope 0) on both clusters; peer ``1`` on a.
3. A write load; half-way a source region server is SIGKILLed (writes move to the others).
4. The DAGs run through Airflow (``airflow dags test``): ``hbrep_failover`` claims the dead server's
   queues, ``hbrep_ship`` ships every queue (on the Spark Connect server the demo starts),
   ``hbrep_verify`` runs VerifyReplication and
   the Great Expectations checks.
5. A report: rows written and shipped, lag, failovers, GOODROWS/BADROWS, where the GX Data Docs are.
Everything it started is stopped at the end, also on failure or Ctrl-C.

The demo runs Airflow as a subprocess; the library itself never imports Airflow.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from replication.airflow_stack import airflow_environment
from replication.config import Config
from replication.devstack.spark_connect import SparkConnectServer
from replication.zk.server import ZooKeeperServer, free_port

TABLE = "usertable"
PEER = "1"
DEMO_CONF = {
    # small numbers so a short demo shows rolls, batches and a failover
    "hbase.regionserver.hlog.blocksize": str(1024 * 1024),
    "replication.sleep.before.failover": "0",
    "replication.source.sleepforretries": "200",
    "replication.source.maxretriesmultiplier": "5",
}


def say(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def demo_environment(state: Path, source_key: str, spark_connect_port: int | None = None) -> dict[str, str]:
    """The embedded stack's Airflow environment, quieter, with the demo's settings and no ship deadline
    (Airflow 3.3.2's ``airflow dags test`` cannot finish a run of a DAG with a deadline alert); the ship
    DAG runs on the Spark Connect server at ``spark_connect_port`` when given (one pass per run)."""
    extra = {"AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING", "HBREP_SHIP_DEADLINE": "off"}
    extra.update({"HBREP__" + key.replace(".", "__"): value for key, value in DEMO_CONF.items()})
    return airflow_environment(state / "airflow", source_key, spark_connect_port=spark_connect_port, extra=extra)


def airflow(env: dict[str, str], *args: str, log: Path) -> float:
    """Run one ``airflow`` command (output appended to ``log``); returns seconds; raises on failure."""
    started = time.monotonic()
    with open(log, "a") as out:
        out.write(f"\n$ airflow {' '.join(args)}\n")
        out.flush()
        done = subprocess.run([str(Path(sys.executable).parent / "airflow"), *args], env=env, stdout=out,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise RuntimeError(f"airflow {' '.join(args)} exited with {done.returncode}; log {log}:\n{tail}")
    return time.monotonic() - started


def dag_run_state(env: dict[str, str], dag_id: str) -> str:
    """State of the newest run of ``dag_id`` (from the Airflow metadata database)."""
    done = subprocess.run([str(Path(sys.executable).parent / "airflow"), "dags", "list-runs", dag_id, "-o", "json"],
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)  # fmt: skip
    # Airflow prints warnings on stdout before the JSON; the JSON array is the line that starts with "[{".
    lines = [line for line in done.stdout.splitlines() if line.startswith(("[{", "[]"))]
    try:
        runs = json.loads(lines[-1])
    except (IndexError, ValueError):
        return "unknown"
    return str(runs[0].get("state", "unknown")) if runs else "none"


def write_load(cluster, rows: int, kill_at: int, killed: list[str], acked: list[int]) -> None:
    """Write ``rows`` rows in batches of 100 (cf and local families); SIGKILL a server at ``kill_at``."""
    from replication.wal.model import Cell, CellType

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


def run(rows: int, state: Path) -> dict[str, Any]:
    """The whole demo in ``state``; returns the report."""
    from replication.cluster.embedded import start_cluster
    from replication.fs import get_filesystem
    from replication.metrics import MetricsStore
    from replication.status import replication_status
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey
    from replication.zk.layout import ZNodePaths
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    report: dict[str, Any] = {"state": str(state)}
    log = state / "airflow.log"
    with contextlib.ExitStack() as stack:
        zk_server = ZooKeeperServer(state / "zk", free_port())
        say(f"starting ZooKeeper (pyspark's jars) on {zk_server.hosts}")
        zk_server.start()
        stack.callback(zk_server.stop)
        key_a, key_b = f"{zk_server.hosts}:/hbase-a", f"{zk_server.hosts}:/hbase-b"
        spark = SparkConnectServer(state / "spark", free_port())
        say(f"starting the Spark Connect server (pyspark's jars) on {spark.url}")
        spark.start()
        stack.callback(spark.stop)
        env = demo_environment(state, key_a, spark.port)
        migrate_log = stack.enter_context(open(log, "w"))
        migrate = subprocess.Popen(
            [str(Path(sys.executable).parent / "airflow"), "db", "migrate"],
            env=env,
            stdout=migrate_log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        stack.callback(lambda: migrate.poll() is None and migrate.kill())
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
        if migrate.wait() != 0:
            raise RuntimeError(f"airflow db migrate failed; see {log}")
        airflow(env, "pools", "set", "zookeeper", "4", "hbrep: ZooKeeper-touching tasks", log=log)
        cluster_a.wait_until_dead(killed[0])
        say(f"{killed[0]}'s ZooKeeper session expired; running the DAGs through Airflow (log: {log})")
        for dag_id, extra in (
            ("hbrep_failover", []),
            ("hbrep_ship", []),
            ("hbrep_verify", ["--conf", json.dumps({"peer": PEER, "table": TABLE, "start": 0,
                                                      "end": int(time.time() * 1000) + 3_600_000})]),
        ):  # fmt: skip
            if dag_id == "hbrep_verify":
                with cluster_b.client() as client:
                    client.flush(TABLE)
                with cluster_a.client() as client:
                    client.flush(TABLE)
            seconds = airflow(env, "dags", "test", dag_id, *extra, log=log)
            state_of_run = dag_run_state(env, dag_id)
            report.setdefault("dag_runs", {})[dag_id] = state_of_run
            say(f"airflow dags test {dag_id}: {state_of_run} in {seconds:.0f}s")
        with connected(source) as zk:
            status = replication_status(zk, source, conf)
        fs, root = get_filesystem(cluster_a.root)
        stored = MetricsStore(fs, root).load()
        # every queue ever shipped, recovered queues that drained and were deleted included
        report["rows_shipped"] = int(sum(q.get("shippedOps", 0) for q in stored["queues"].values()))
        report["edits_filtered"] = int(sum(q.get("logEditsFiltered", 0) for q in stored["queues"].values()))
        report["lag_ms"] = status["peers"][PEER]["replicationLag"]
        report["queues_left"] = [q["queue"] for q in status["queues"]]
        report["failovers"] = stored["failovers"]
        report["verify"] = stored["checks"].get(f"verify/{PEER}/{TABLE}", {})
        report["quality"] = stored["checks"].get(f"quality/{PEER}/{TABLE}", {})
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


def main(argv: list[str] | None = None) -> int:
    """Run the demo; exit 0 only when replication verified clean (BADROWS=0, GX passed)."""
    parser = argparse.ArgumentParser(prog="hbrep demo", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=3000, help="rows to write (default 3000)")
    parser.add_argument("--state", help="folder for all state (default: a new temporary folder)")
    args = parser.parse_args(argv)
    state = Path(args.state or tempfile.mkdtemp(prefix="hbrep-demo-")).resolve()
    state.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    report = run(args.rows, state)
    print_report(report)
    say(f"done in {time.monotonic() - started:.0f}s")
    counters = report.get("verify", {}).get("counters", {})
    ok = (
        counters.get("BADROWS") == 0
        and counters.get("GOODROWS") == report.get("rows_written")
        and report.get("quality", {}).get("success")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
