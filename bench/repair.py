"""hbrep repair's comparison (HashTable/SyncTable in one Spark job) vs a full VerifyReplication, on two
tables of N cells where 0.1% of the peer's rows drifted. Engine only: one Spark local[2] session, the
tables generated straight into the table-file layout (bench/verify.py's generator), no cluster running.

The repair's figure is ``sync_table.plan_repair``: both scans, the bucket hashes, and the cell comparison
inside the differing buckets, ending with the cells it would write (counted). Writing those cells to a peer
(0.1% of the rows: a few thousand entries through a sink) is not in the figure.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.verify import CELLS_PER_ROW, _generate

NAME = "repair"
TITLE = "hbrep repair's comparison vs a full VerifyReplication (0.1% of rows drifted, Spark local[2])"
DRIFT = 0.001


def _drift(spark, root: str, cells: int) -> int:
    """Add a table file to the peer that changes one cell of every 1/DRIFT-th row (a newer sequence, so it
    wins); the drifted rows."""
    from pyspark.sql import functions as F

    from replication.tables.table_files import table_file_name

    rows = cells // CELLS_PER_ROW
    step = int(1 / DRIFT)
    drifted = spark.range(0, rows, step, numPartitions=1).select(
        F.format_string("row%010d", F.col("id")).cast("binary").alias("row"),
        F.lit(b"f").alias("family"),
        F.lit(b"q0").alias("qualifier"),
        (F.lit(1_700_000_000_000) + F.col("id") * CELLS_PER_ROW).alias("timestamp"),
        F.lit(4).cast("int").alias("type"),
        F.lit(b"drifted").alias("value"),
        F.lit(10 * cells).cast("long").alias("sequence"),
    )
    staging = Path(root) / "staging-drift"
    drifted.write.parquet(str(staging))
    region = Path(root) / "data" / "default" / "bench" / "region0001"
    existing = len(list(region.glob("*.parquet")))
    for i, part in enumerate(sorted(staging.glob("part-*.parquet")), start=existing + 1):
        os.replace(part, region / table_file_name(i))
    return len(range(0, rows, step))


def run(quick: bool) -> dict:
    """Generate two tables, drift 0.1% of the peer's rows, then time plan_repair and verify_tables."""
    from replication.checks.verify import CONTENT_DIFFERENT_ROWS, VerifyOptions, verify_tables
    from replication.operations.sync_table import ROWSWITHDIFFS, SyncOptions, plan_repair
    from replication.spark import spark_session
    from replication.tables.spark_views import read_cells

    cells = 100_000 if quick else 10_000_000
    spark = spark_session("hbrep-bench-repair", master="local[2]")
    with tempfile.TemporaryDirectory(prefix="hbrep-bench-repair-") as tmp:
        source, peer = str(Path(tmp) / "source"), str(Path(tmp) / "peer")
        _generate(spark, source, cells)
        _generate(spark, peer, cells)
        drifted = _drift(spark, peer, cells)
        read_cells(spark, source, "bench").count()  # warm-up (JIT, file listing), paid by neither timing

        t0 = time.perf_counter()
        plan = plan_repair(spark, source, peer, "bench", SyncOptions())
        repair_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        verified = verify_tables(spark, source, peer, "bench", VerifyOptions())
        verify_s = time.perf_counter() - t0
    if plan.counters[ROWSWITHDIFFS] != drifted or verified.counters[CONTENT_DIFFERENT_ROWS] != drifted:
        raise RuntimeError(f"bench/repair: wrong result: {plan.counters} {verified.counters} drifted={drifted}")
    if plan.cells_to_put != drifted:
        raise RuntimeError(f"bench/repair: {plan.cells_to_put} cells to put for {drifted} drifted rows")
    return {
        "title": TITLE,
        "command": "make bench (bench/repair.py)",
        "figures": {
            "cells per table": cells,
            "drifted rows": drifted,
            "buckets differing / all": f"{plan.counters['HASHES_NOT_MATCHED']} / "
            f"{plan.counters['HASHES_NOT_MATCHED'] + plan.counters['HASHES_MATCHED']}",
            "repair comparison, plan_repair (s)": round(repair_s, 2),
            "full VerifyReplication, verify_tables (s)": round(verify_s, 2),
        },
        "ratios": {"verify time / repair comparison time": round(verify_s / repair_s, 2)},
        "notes": [
            "Engine only (one Spark session, no Airflow, no cluster). Both read the same Parquet table files; "
            "the repair hashes every cell and joins (bucket, hash, count) triples, then compares cells in the "
            "differing buckets only; the verify groups every row's cells into arrays and joins all rows.",
            "Not measured here: writing the repair's cells to a peer (bench/seed_rate.py measures that write path: "
            "a seed's copy is a repair of an empty range).",
        ],
    }
