"""The ship job: one Spark task per queue of a snapshot manifest, queues in parallel.

Run by ``spark-submit`` (``--py-files`` carries the ``replication`` package to the executors)::

    spark-submit --master local[2] --py-files hbrep.zip replication/jobs/ship.py --manifest M --result R

or in-process with :func:`run_ship_job` (tests, ``hbrep ship --once --in-process``). Each task reads
only the manifest (broadcast) and the WAL files; nothing depends on the driver's memory or files.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import asdict

from replication.source.manifest import Manifest, QueueResult, ShipResult, WalProgress, read_text, write_text


def _ship_one(manifest_json: str, index: int) -> str:
    """Executor side: ship queue ``index`` of the manifest and return its QueueResult as JSON."""
    # executor side only: the driver never ships, so it does not load the sink RPC client and kazoo
    from replication.source.replication_source import ship_queue

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    manifest = Manifest.from_json(manifest_json)
    return json.dumps(asdict(ship_queue(manifest, manifest.queues[index])))


def run_ship_job(spark, manifest):
    """Ship every queue of ``manifest`` on ``spark``; returns the ShipResult (one QueueResult per queue)."""
    started = int(time.time() * 1000)
    count = len(manifest.queues)
    if count == 0:
        return ShipResult(manifest.cycle_id, [], started, started)
    sc = spark.sparkContext
    payload = sc.broadcast(manifest.to_json())
    rows = sc.parallelize(range(count), numSlices=count).map(lambda i: _ship_one(payload.value, i)).collect()
    payload.unpersist()
    queues = []
    for row in rows:
        raw = json.loads(row)
        raw["wals"] = [WalProgress(**w) for w in raw["wals"]]
        queues.append(QueueResult(**raw))
    return ShipResult(manifest.cycle_id, queues, started, int(time.time() * 1000))


def main(argv: list[str] | None = None) -> int:
    """spark-submit entry: read the manifest, ship, write the result file."""
    parser = argparse.ArgumentParser(prog="ship.py")
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--result", required=True)
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession  # only the job's driver starts Spark

    manifest = Manifest.from_json(read_text(args.manifest))
    spark = SparkSession.builder.appName(f"hbrep-ship-{manifest.cycle_id}").getOrCreate()
    try:
        result = run_ship_job(spark, manifest)
    finally:
        spark.stop()
    write_text(args.result, result.to_json())
    failed = [q for q in result.queues if q.status in ("failed", "stuck")]
    print(f"shipped {len(result.queues)} queues of cycle {manifest.cycle_id}; {len(failed)} failed or stuck")
    return 0


if __name__ == "__main__":
    sys.exit(main())
