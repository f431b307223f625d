"""Real HBase A → real HBase B, shipped twice at once: HBase's own replication and hbrep's DAGs.

The comparison of ``tests/native/`` and the bench's ``native_vs_hbrep`` section: two real HBase 2.6
clusters (N region servers each) on one ZooKeeper, table ``native_t`` and ``hbrep_t`` (family ``f``,
scope 1) on both, and on A two peers to B:

- ``native``: an ordinary HBase peer (table-cfs ``native_t``), added and enabled through HBase's own
  Admin API; HBase's ReplicationSource ships it;
- ``hbrep``: a shadow peer (table-cfs ``hbrep_t``) added with ``hbrep add_peer --shadow``; HBase keeps
  its queues and WALs, and hbrep's ``hbrep_ship`` DAG ships it under Airflow's real scheduler (the
  local executor, ship windows on a Spark Connect server), as ``make up`` runs it.

"Disabled" for hbrep is its ship DAG paused (``enable_peer`` refuses a shadow peer); :meth:`NativePair.enable_both`
enables the native peer and unpauses (and triggers) the ship DAG one after the other. Nothing here
imports Airflow: the stack is Airflow's command line and REST API.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replication.devstack.airflow_api import AirflowApi
from replication.devstack.airflow_stack import (
    AirflowStandalone,
    airflow_environment,
    launch_standalone,
    metadata_database,
)
from replication.devstack.hbase import RealHBase
from replication.devstack.maven import interop_tools_classpath
from replication.net import free_port

NATIVE_PEER, HBREP_PEER = "native", "hbrep"
NATIVE_TABLE, HBREP_TABLE = "native_t", "hbrep_t"
FAMILY = b"f"
SHIP_DAG = "hbrep_ship"
# A key of each side's table: the peer id that ships it
TABLE_OF = {NATIVE_PEER: NATIVE_TABLE, HBREP_PEER: HBREP_TABLE}


@dataclass
class NativePair:
    """The two real clusters, the Airflow stack shipping the shadow peer, and its REST client."""

    source: RealHBase
    peer: RealHBase
    source_key: str
    peer_key: str
    airflow: AirflowStandalone
    api: AirflowApi
    env: dict[str, str]

    def add_peers(self) -> None:
        """Both peers on A, neither shipping: ``native`` DISABLED through HBase's Admin, ``hbrep`` through
        ``hbrep add_peer --shadow`` (DISABLED in HBase, its ship DAG paused)."""
        self.api.set_paused(SHIP_DAG, True)
        native = {"id": NATIVE_PEER, "cluster_key": self.peer_key, "enabled": False, "replicate_all": False,
                  "table_cfs": {NATIVE_TABLE: []}}  # fmt: skip
        self.source.admin("add-peer", json.dumps(native))
        shadow = ["--shadow", "--rootdir", self.source.rootdir_uri, "--table-cfs", HBREP_TABLE]
        command = [sys.executable, "-m", "replication.cli", "--cluster", self.source_key, "add_peer", HBREP_PEER,
                   self.peer_key, *shadow]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, env=self.env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"hbrep add_peer {HBREP_PEER} --shadow: {done.stderr.strip()}")

    def enable_both(self) -> float:
        """Start both shipping: HBase's enable_replication_peer for ``native``, then the ship DAG unpaused
        and a run triggered for ``hbrep``; the monotonic time between the two (the start of the race)."""
        started = time.monotonic()
        self.source.admin("enable-peer", NATIVE_PEER)
        self.api.set_paused(SHIP_DAG, False)
        self.api.trigger(SHIP_DAG)
        return started

    def pause_hbrep(self) -> None:
        """Pause the ship DAG (hbrep's "disable_peer" of a shadow peer); a window in flight ends at its end."""
        self.api.set_paused(SHIP_DAG, True)


def load_rows(cluster: RealHBase, table: str, start: int, count: int, value: bytes, *, batch: int = 500) -> None:
    """Write rows ``start`` .. ``start + count - 1`` (``row_key``) of one cell ``f:q`` = ``value`` into ``table``
    through the cluster's Thrift server."""
    connection = cluster.happybase_connection()
    try:
        with connection.table(table).batch(batch_size=batch) as writer:
            for i in range(start, start + count):
                writer.put(row_key(i), {b"f:q": value})
    finally:
        connection.close()


def row_key(i: int) -> bytes:
    """The row key of row ``i`` (sorted as the numbers are)."""
    return b"row%09d" % i


def has_row(cluster: RealHBase, table: str, row: bytes) -> bool:
    """True once ``row`` is readable in ``table`` (a new Thrift connection per call)."""
    connection = cluster.happybase_connection()
    try:
        return bool(connection.table(table).row(row))
    finally:
        connection.close()


def table_cells(cluster: RealHBase, table: str) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every cell (row, family, qualifier, timestamp, value; latest version) of ``table``, through Thrift."""
    connection = cluster.happybase_connection()
    try:
        cells = set()
        for row, columns in connection.table(table).scan(include_timestamp=True, batch_size=2000):
            for column, (value, ts) in columns.items():
                family, qualifier = column.split(b":", 1)
                cells.add((row, family, qualifier, ts, value))
        return cells
    finally:
        connection.close()


@contextlib.contextmanager
def native_pair(
    state: Path,
    zk_port: int,
    spark_connect_port: int,
    api_port: int,
    *,
    regionservers: int = 1,
    heap_mb: int = 512,
    window_ms: int = 60_000,
    schedule: str = "* * * * *",
    tag: str = "native",
    compression: str = "",
    extra_site: Mapping[str, str] | None = None,
    peer_site: Mapping[str, str] | None = None,
) -> Iterator[NativePair]:
    """Start A and B (``regionservers`` each) on the ZooKeeper at ``zk_port`` (parents ``/<tag>-a``,
    ``/<tag>-b``), both tables on both, and Airflow (scheduler, DAG processor, triggerer, API server on
    ``api_port``) whose ship DAG runs windows of ``window_ms`` on the Spark Connect server at
    ``spark_connect_port`` on ``schedule``, DAGs paused. Airflow boots while the clusters start.
    ``compression`` (an HBase algorithm, e.g. GZ) compresses both tables' store files on both clusters;
    ``extra_site`` goes into both clusters' hbase-site.xml, ``peer_site`` (over it) into B's only. Everything
    started is stopped on exit."""
    interop_tools_classpath()
    source_key, peer_key = f"127.0.0.1:{zk_port}:/{tag}-a", f"127.0.0.1:{zk_port}:/{tag}-b"
    extra = {
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "HBREP_SHIP_SCHEDULE": schedule,
        "HBREP_VERIFY_START": time.strftime("%Y-%m-%d", time.gmtime()),
        "HBREP__hbrep__ship__window__ms": str(window_ms),
    }
    (state / "airflow").mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        database, postgres = metadata_database(state / "postgres", state / "airflow")
        if postgres is not None:
            stack.callback(postgres.stop)
        env = airflow_environment(state / "airflow", source_key, database=database, api_port=api_port,
                                  spark_connect_port=spark_connect_port, extra=extra)  # fmt: skip
        airflow = launch_standalone(env, state / "airflow.log")
        stack.callback(lambda: airflow.stop())
        source, peer = RealHBase(state / "hbase-a"), RealHBase(state / "hbase-b")
        stack.callback(stop_side_by_side, source, peer)

        def start(cluster: RealHBase, key: str, site: Mapping[str, str]) -> None:
            cluster.start(key, regionservers=regionservers, heap_mb=heap_mb, extra_site=site)
            options = [f"compression={compression}"] if compression else []
            for table in (NATIVE_TABLE, HBREP_TABLE):
                cluster.admin("create-table", table, "1", "f:1", *options)

        with ThreadPoolExecutor(2, thread_name_prefix="hbase-start") as starting:  # A and B side by side
            started = [starting.submit(start, source, source_key, dict(extra_site or {})),
                       starting.submit(start, peer, peer_key, {**(extra_site or {}), **(peer_site or {})})]  # fmt: skip
        for future in started:
            future.result()
        try:
            airflow.wait_ready(timeout=300)
        except RuntimeError as exc:
            if "address already in use" not in str(exc):
                raise
            # the API port was taken while Airflow booted (free_port only says it was free a moment ago)
            env = {**env, **airflow_environment(state / "airflow", source_key, database=database, api_port=free_port(),
                                                spark_connect_port=spark_connect_port, extra=extra)}  # fmt: skip
            airflow = launch_standalone(env, state / "airflow.log")
            airflow.wait_ready(timeout=300)
        api = stack.enter_context(AirflowApi(airflow.url, "admin", airflow.admin_password()))
        api.call("POST", "/pools", json={"name": "zookeeper", "slots": 4, "description": "hbrep: ZooKeeper tasks"})
        api.wait_for_dag(SHIP_DAG, timeout=180)
        yield NativePair(source, peer, source_key, peer_key, airflow, api, env)


def stop_side_by_side(*clusters: RealHBase) -> None:
    """Stop the clusters at the same time (each JVM's graceful stop may take seconds)."""
    with ThreadPoolExecutor(len(clusters), thread_name_prefix="hbase-stop") as stopping:
        for future in [stopping.submit(cluster.stop) for cluster in clusters]:
            future.result()


def wait_for_rows(pair: NativePair, last: bytes, timeout: float) -> dict[str, float]:
    """Poll B until both tables hold row ``last``; per peer id, the monotonic time it was first seen.
    TimeoutError naming the side(s) still missing it after ``timeout`` seconds."""
    seen: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    while len(seen) < len(TABLE_OF):
        for peer_id, table in TABLE_OF.items():
            if peer_id not in seen and has_row(pair.peer, table, last):
                seen[peer_id] = time.monotonic()
        if len(seen) < len(TABLE_OF):
            if time.monotonic() > deadline:
                missing = sorted(set(TABLE_OF) - set(seen))
                raise TimeoutError(f"row {last!r} not on B within {timeout:.0f}s for peer(s) {missing}")
            time.sleep(0.2)
    return seen


def run_states(api: AirflowApi) -> list[tuple[str, Any]]:
    """(run id, state) of the ship DAG's runs, oldest first (for a failure's message)."""
    return [(r["dag_run_id"], r["state"]) for r in api.runs(SHIP_DAG)]
