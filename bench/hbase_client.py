"""hbrep's client of HBase's RPC against HBase's own clients on one real table: single Puts, batched Puts,
random Gets and a Scan, operations (or rows) per second, same run.

One real HBase 2.6.1 (one region server) on loopback. READ_ROWS rows of 100-byte values are loaded into
one table and flushed; then each client in turn writes its own rows (single Puts, then batches of 500)
and reads the same loaded rows (random Gets, one Scan of all of them):

- hbrep: ``replication.hbase.table_client`` in this process (ClientService over HBase's RPC: Mutate,
  Multi grouped per region server, Get, Scan with 1000 rows per call);
- happybase through HBase's Thrift server (what hbrep's interop tests compare with; one more hop);
- HBase's own Java client (``io.hbrep.interop.ClientBench``), timed inside its JVM (start not counted).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

NAME = "hbase_client"
TITLE = "hbrep's client of HBase's RPC vs happybase (Thrift) and HBase's Java client, same table"
VALUE_SIZE = 100
BATCH = 500


def _sizes(quick: bool) -> dict[str, int]:
    if quick:
        return {"puts": 300, "batch_rows": 5_000, "gets": 300, "read_rows": 10_000}
    return {"puts": 2_000, "batch_rows": 50_000, "gets": 2_000, "read_rows": 100_000}


def _hbrep(key: str, table: str, n: dict[str, int]) -> dict[str, float]:
    from replication.hbase.mutations import put_mutation
    from replication.hbase.table_client import HBaseTableClient, ScanOptions

    value = b"v" * VALUE_SIZE
    out: dict[str, float] = {}
    with HBaseTableClient(key) as client:
        client.get(table, b"row00000000")  # locate the region before the clock starts
        start = time.perf_counter()
        for i in range(n["puts"]):
            client.put(table, b"hbrep-%08d" % i, b"f", b"q", value)
        out["put_s"] = time.perf_counter() - start
        start = time.perf_counter()
        for first in range(0, n["batch_rows"], BATCH):
            last = min(first + BATCH, n["batch_rows"])
            client.multi(
                table, [put_mutation(b"hbrep-b%08d" % i, [(b"f", b"q", value, None)]) for i in range(first, last)]
            )
        out["batch_s"] = time.perf_counter() - start
        rng = random.Random(42)
        start = time.perf_counter()
        found = sum(1 for _ in range(n["gets"]) if client.get(table, b"row%08d" % rng.randrange(n["read_rows"])))
        out["get_s"], out["found"] = time.perf_counter() - start, found
        start = time.perf_counter()
        out["scanned"] = sum(1 for _ in client.scan(table, ScanOptions(b"row", b"rox", caching=1000)))
        out["scan_s"] = time.perf_counter() - start
    return out


def _happybase(cluster, table: str, n: dict[str, int]) -> dict[str, float]:
    value = b"v" * VALUE_SIZE
    out: dict[str, float] = {}
    connection = cluster.happybase_connection()
    try:
        htable = connection.table(table)
        htable.row(b"row00000000")
        start = time.perf_counter()
        for i in range(n["puts"]):
            htable.put(b"thrift-%08d" % i, {b"f:q": value})
        out["put_s"] = time.perf_counter() - start
        start = time.perf_counter()
        with htable.batch(batch_size=BATCH) as batch:
            for i in range(n["batch_rows"]):
                batch.put(b"thrift-b%08d" % i, {b"f:q": value})
        out["batch_s"] = time.perf_counter() - start
        rng = random.Random(42)
        start = time.perf_counter()
        found = sum(1 for _ in range(n["gets"]) if htable.row(b"row%08d" % rng.randrange(n["read_rows"])))
        out["get_s"], out["found"] = time.perf_counter() - start, found
        start = time.perf_counter()
        out["scanned"] = sum(1 for _ in htable.scan(row_start=b"row", row_stop=b"rox", batch_size=1000))
        out["scan_s"] = time.perf_counter() - start
    finally:
        connection.close()
    return out


def _java(cluster, table: str, n: dict[str, int]) -> dict[str, float]:
    args = [table, "java", *(str(n[k]) for k in ("puts", "batch_rows", "gets", "read_rows")), str(VALUE_SIZE)]
    return cluster.run_tool("io.hbrep.interop.ClientBench", args, parse_json=True, heap_mb=512,
                            jvm_options=["-XX:TieredStopAtLevel=4"])  # fmt: skip


def run(quick: bool) -> dict:
    """Each client's put, batched put, get and scan rates on the same table of one real HBase."""
    from replication.devstack.hbase import RealHBase
    from replication.devstack.maven import interop_tools_classpath
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.hbase.mutations import put_mutation
    from replication.hbase.table_client import HBaseTableClient
    from replication.net import free_port

    n = _sizes(quick)
    interop_tools_classpath()
    table = "bench_client"
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        zk = ZooKeeperServer(Path(tmp) / "zk", free_port())
        zk.start()
        cluster = RealHBase(Path(tmp) / "hbase")
        try:
            cluster.start(f"127.0.0.1:{zk.port}:/bench-client", regionservers=1, heap_mb=768)
            key = cluster.layout().cluster_key
            cluster.admin("create-table", table, "1", "f:0")
            value = b"v" * VALUE_SIZE
            with HBaseTableClient(key) as client:
                for first in range(0, n["read_rows"], 2000):
                    last = min(first + 2000, n["read_rows"])
                    client.multi(table, [put_mutation(b"row%08d" % i, [(b"f", b"q", value, None)])
                                         for i in range(first, last)])  # fmt: skip
            cluster.admin("flush", table)
            results["hbrep"] = _hbrep(key, table, n)
            print(f"[hbase_client] hbrep: {results['hbrep']}", flush=True)
            results["happybase"] = _happybase(cluster, table, n)
            print(f"[hbase_client] happybase: {results['happybase']}", flush=True)
            results["java"] = _java(cluster, table, n)
            print(f"[hbase_client] java: {results['java']}", flush=True)
        finally:
            cluster.stop()
            zk.stop()
    for name, r in results.items():
        assert r["scanned"] == n["read_rows"] and r["found"] == n["gets"], (name, r)
    labels = {"hbrep": "hbrep (HBase RPC)", "happybase": "happybase (Thrift)", "java": "HBase Java client"}
    figures: dict[str, float] = {**{k: float(v) for k, v in n.items()}, "value bytes": VALUE_SIZE}
    for name, r in results.items():
        label = labels[name]
        figures[f"{label}: single put (ops/s)"] = n["puts"] / r["put_s"]
        figures[f"{label}: batched put, {BATCH} per call (rows/s)"] = n["batch_rows"] / r["batch_s"]
        figures[f"{label}: get (ops/s)"] = n["gets"] / r["get_s"]
        figures[f"{label}: scan (rows/s)"] = n["read_rows"] / r["scan_s"]
    ratios = {}
    for other in ("happybase", "java"):
        for op, what in (("put_s", "single put"), ("batch_s", "batched put"), ("get_s", "get"), ("scan_s", "scan")):
            ratios[f"hbrep / {labels[other]}: {what}"] = results[other][op] / results["hbrep"][op]
    return {
        "title": TITLE,
        "command": "make bench ONLY=hbase_client, or alone: .venv/bin/python -m bench --only hbase_client",
        "figures": figures,
        "ratios": ratios,
        "notes": [
            "One real HBase 2.6.1 (master, one region server with a 768 MB heap, Thrift server) on loopback; "
            "one table, one region, family f, VERSIONS 1; values of 100 bytes. Each client runs alone, one "
            "after the other, one thread each: first puts of its own rows, then gets and a scan of the same "
            f"{n['read_rows']} loaded rows (flushed to a store file). A ratio > 1 means hbrep was faster.",
            "hbrep and happybase are Python 3.11 in this process; HBase's client is Java 17 timed inside its JVM "
            "(full JIT), its JVM start not counted. happybase goes through the Thrift server, one more hop.",
            f"1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine).",
        ],
    }
