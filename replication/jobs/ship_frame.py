"""The ship job through the DataFrame API: one partition per queue, ``mapInArrow`` shipping each queue.

It runs on any SparkSession, a Spark Connect one (where the RDD API does not exist) or a classic one:
``spark.range(0, n, 1, n)`` gives one row, and so one task, per queue of the manifest; each task ships
its queue with :func:`replication.source.replication_source.ship_queue` and returns one row: the
queue's status, error, counters and per-WAL start/end positions. The driver turns the rows back into
the same :class:`ShipResult` the other engines write, so the commit step works unchanged.

The manifest travels inside the task's closure (it is only the queues to ship, their positions and the
peers' settings); nothing depends on the driver's files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import asdict
from functools import partial
from typing import Any

from replication.errors import HbrepError
from replication.source.manifest import Manifest, QueueResult, ShipResult, WalProgress

# One row per queue (Spark DDL; the Arrow schema below is the same, field for field).
RESULT_DDL = (
    "queue_index bigint, replicator string, queue_id string, peer_id string, status string, error string, "
    "drained boolean, metrics map<string, bigint>, "
    "wals array<struct<name: string, start_position: bigint, end_position: bigint, done: boolean, version: int>>"
)


class ShipJobIncomplete(HbrepError):
    """The ship job returned no row, or more than one, for some queue (nothing is committed then)."""


def _arrow_schema():
    import pyarrow as pa  # executor side only (see ship_partition)

    wal = pa.struct(
        [
            ("name", pa.string()),
            ("start_position", pa.int64()),
            ("end_position", pa.int64()),
            ("done", pa.bool_()),
            ("version", pa.int32()),
        ]
    )
    return pa.schema(
        [
            ("queue_index", pa.int64()),
            ("replicator", pa.string()),
            ("queue_id", pa.string()),
            ("peer_id", pa.string()),
            ("status", pa.string()),
            ("error", pa.string()),
            ("drained", pa.bool_()),
            ("metrics", pa.map_(pa.string(), pa.int64())),
            ("wals", pa.list_(wal)),
            ("last_seq_ids", pa.map_(pa.string(), pa.int64())),
        ]
    )


def result_row(index: int, result: QueueResult) -> dict[str, Any]:
    """One queue's result as a row of :data:`RESULT_DDL`."""
    raw = asdict(result)
    return {
        "queue_index": index,
        **{k: raw[k] for k in ("replicator", "queue_id", "peer_id", "status", "error", "drained")},
        "metrics": [(name, int(value)) for name, value in sorted(result.metrics.items())],
        "wals": raw["wals"],
        "last_seq_ids": sorted(result.last_seq_ids.items()),
    }


def queue_result(row: dict[str, Any]) -> QueueResult:
    """The QueueResult of a result row (the inverse of :func:`result_row`)."""
    metrics = row["metrics"]
    pairs = metrics.items() if isinstance(metrics, dict) else metrics
    seq_ids = row.get("last_seq_ids") or []
    seq_pairs = seq_ids.items() if isinstance(seq_ids, dict) else seq_ids
    return QueueResult(
        replicator=row["replicator"],
        queue_id=row["queue_id"],
        peer_id=row["peer_id"],
        status=row["status"],
        wals=[WalProgress(**wal) for wal in row["wals"]],
        error=row["error"],
        drained=bool(row["drained"]),
        metrics={name: value for name, value in pairs},
        last_seq_ids={region: int(seq) for region, seq in seq_pairs},
    )


def ship_partition(manifest_json: str, batches: Iterator[Any]) -> Iterator[Any]:
    """Executor side: ship the queues whose indexes arrive in ``batches``; one result row each."""
    import pyarrow as pa  # executor side only, with the ship path below (sink RPC client, kazoo)

    from replication.source.replication_source import ship_queue

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    manifest = Manifest.from_json(manifest_json)
    schema = _arrow_schema()
    for batch in batches:
        rows = []
        for index in batch.column(0).to_pylist():
            rows.append(result_row(index, ship_queue(manifest, manifest.queues[index])))
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def run_ship_frame_job(spark: Any, manifest: Manifest) -> ShipResult:
    """Ship every queue of ``manifest`` on ``spark`` (classic or Spark Connect); returns the ShipResult.

    Queue-level problems come back in the rows (status ``failed``/``stuck``); a Spark failure (a lost
    server, a killed worker) raises, and no result is returned, so no position moves.
    """
    started = int(time.time() * 1000)
    count = len(manifest.queues)
    if count == 0:
        return ShipResult(manifest.cycle_id, [], started, started)
    frame = spark.range(0, count, 1, count).mapInArrow(partial(ship_partition, manifest.to_json()), RESULT_DDL)
    rows = sorted(frame.toArrow().to_pylist(), key=lambda row: row["queue_index"])
    if [row["queue_index"] for row in rows] != list(range(count)):
        raise ShipJobIncomplete(
            f"ship job of cycle {manifest.cycle_id} returned {len(rows)} rows for {count} queues (nothing committed)"
        )
    return ShipResult(manifest.cycle_id, [queue_result(row) for row in rows], started, int(time.time() * 1000))
