"""Real HBase A → real HBase B: HBase's own replication vs hbrep's shadow peer, same clusters, same run.

Two real HBase 2.6 clusters (one region server each) on one ZooKeeper. Each side drains the same
backlog: ROWS rows of 100-byte values written into A while nothing ships, then shipping starts and the
clock runs until B holds the last row (edits of one queue arrive in WAL order), after which B's row
count is checked.

- native: peer ``n`` (table-cfs: ``native_t``) added DISABLED, the rows written, then HBase's
  ``enable_replication_peer``; HBase's own ReplicationSource ships.
- hbrep: shadow peer ``s`` (table-cfs: ``hbrep_t``), the rows written, then hbrep ship cycles back to back
  (snapshot → Spark job in one running local[2] session → commit) until B holds the last row. This is
  the engine alone, not a DAG under Airflow's scheduler: per-run scheduling costs are measured in the
  scheduler section.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

NAME = "hbase_native"
TITLE = "Real HBase → real HBase: HBase's native replication vs hbrep (shadow peer), same backlog"
VALUE = b"v" * 100
ENGINE = "hbrep ship cycles back to back in one local[2] Spark session; HBase's own source for native"


def _load(cluster, table: str, rows: int) -> float:
    """Write ``rows`` rows into ``table`` through A's Thrift server; the seconds it took."""
    connection = cluster.happybase_connection()
    started = time.perf_counter()
    try:
        with connection.table(table).batch(batch_size=500) as batch:
            for i in range(rows):
                batch.put(b"row%08d" % i, {b"f:q": VALUE})
    finally:
        connection.close()
    return time.perf_counter() - started


def _has_row(cluster, table: str, row: bytes) -> bool:
    connection = cluster.happybase_connection()
    try:
        return bool(connection.table(table).row(row))
    finally:
        connection.close()


def _row_count(cluster, table: str) -> int:
    connection = cluster.happybase_connection()
    try:
        return sum(1 for _ in connection.table(table).scan(filter=b"FirstKeyOnlyFilter()", batch_size=2000))
    finally:
        connection.close()


def _wait_for_last_row(cluster, table: str, rows: int, step, timeout: float = 1800.0) -> float:
    """Call ``step()`` until B holds the last row; the seconds from the first call."""
    last = b"row%08d" % (rows - 1)
    started = time.perf_counter()
    while not _has_row(cluster, table, last):
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"{table}: the last row did not reach B within {timeout:.0f}s")
        step()
    return time.perf_counter() - started


def run(quick: bool) -> dict:
    """Rows/s of each side's drain of the same backlog, and hbrep / native."""
    from replication.config import Config
    from replication.devstack.hbase import RealHBase
    from replication.devstack.maven import interop_tools_classpath
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.hbase.shadow_peers import add_shadow_peer
    from replication.jobs.launch import runner_for
    from replication.net import free_port
    from replication.source.cycle import run_cycle
    from replication.spark import spark_session
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey
    from replication.zk.layout import ZNodePaths
    from replication.zk.peer_storage import ReplicationPeerConfig

    rows = 2_000 if quick else 50_000
    interop_tools_classpath()
    figures: dict[str, float] = {"rows per backlog": rows}
    with tempfile.TemporaryDirectory() as tmp:
        zk = ZooKeeperServer(Path(tmp) / "zk", free_port())
        zk.start()
        a, b = RealHBase(Path(tmp) / "a"), RealHBase(Path(tmp) / "b")
        spark = None
        try:
            a.start(f"127.0.0.1:{zk.port}:/bench-a", regionservers=1, heap_mb=768)
            b.start(f"127.0.0.1:{zk.port}:/bench-b", regionservers=1, heap_mb=768)
            key_a, key_b = a.layout().cluster_key, b.layout().cluster_key
            for cluster in (a, b):
                for table in ("native_t", "hbrep_t"):
                    cluster.admin("create-table", table, "1", "f:1")

            # native: HBase's own source drains the backlog once the peer is enabled
            a.admin("add-peer", json.dumps({"id": "n", "cluster_key": key_b, "enabled": False,
                                            "replicate_all": False, "table_cfs": {"native_t": []}}))  # fmt: skip
            figures["native: load s"] = _load(a, "native_t", rows)
            a.admin("enable-peer", "n")
            native_s = _wait_for_last_row(b, "native_t", rows, lambda: time.sleep(0.2))
            figures["native: rows on B"] = _row_count(b, "native_t")
            figures["native: rows/s"] = rows / native_s
            print(f"[hbase_native] native: {rows / native_s:,.0f} rows/s", flush=True)
            a.admin("remove-peer", "n")

            # hbrep: the shadow peer, cycles back to back
            source = ClusterKey.parse(key_a)
            conf = Config.load(env={})
            config = ReplicationPeerConfig(cluster_key=key_b, replicate_all=False, table_cfs={"hbrep_t": []})
            with connected(source) as zkc:
                paths = ZNodePaths(conf, parent=source.znode_parent)
                add_shadow_peer(source, zkc, paths, "s", config, a.rootdir_uri)
            figures["hbrep: load s"] = _load(a, "hbrep_t", rows)
            spark = spark_session("hbrep-bench-hbase-native", master="local[2]")
            runner = runner_for(conf, spark)
            cycles = []

            def cycle() -> None:
                with connected(source) as zkc:
                    report = run_cycle(zkc, source, conf, runner=runner)
                bad = [q for q in report.queues if q.status != "ok"]
                if bad:
                    raise RuntimeError(f"hbrep cycle: {bad}")
                cycles.append(report)

            hbrep_s = _wait_for_last_row(b, "hbrep_t", rows, cycle)
            figures["hbrep: cycles"] = len(cycles)
            figures["hbrep: rows on B"] = _row_count(b, "hbrep_t")
            figures["hbrep: rows/s"] = rows / hbrep_s
            print(f"[hbase_native] hbrep: {rows / hbrep_s:,.0f} rows/s in {len(cycles)} cycles", flush=True)
        finally:
            if spark is not None:
                spark.stop()
            for cluster in (a, b):
                cluster.stop()
            zk.stop()
    return {
        "title": TITLE,
        "engine": ENGINE,
        "command": "make bench (bench/hbase_native.py)",
        "figures": figures,
        "ratios": {"hbrep / native rows/s": figures["hbrep: rows/s"] / figures["native: rows/s"]},
        "notes": [
            f"Each side drains a backlog of {rows:,} rows of 100-byte values written into A through Thrift while"
            " nothing shipped; the clock runs from the start of shipping (enable_replication_peer returned;"
            " the first hbrep cycle) until B holds the last row; B's row count is then checked.",
            "One region server per cluster, both clusters and the load on this one 2-core machine; one round"
            " each, native first.",
        ],
    }
