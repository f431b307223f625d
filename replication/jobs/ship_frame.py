"""The ship job through the DataFrame API: one partition per queue, ``mapInArrow`` shipping each queue.

It runs on any SparkSession, a Spark Connect one (where the RDD API does not exist) or a classic one:
``spark.range(0, n, 1, n)`` gives one row, and so one task, per queue of the manifest; each task ships
its queue with :func:`replication.source.replication_source.ship_queue` and returns one row: the queue's
index and its QueueResult as JSON (status, error, counters, per-WAL start/end positions, last sequence ids).
The driver turns the rows back into the same :class:`ShipResult` the other engines write, so the commit
step works unchanged.

The manifest travels inside the task's closure (it is only the queues to ship, their positions and the
peers' settings); nothing depends on the driver's files.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

from replication.errors import HbrepError
from replication.source.manifest import Manifest, QueueResult, ShipResult

# One row per queue: its index in the manifest and its QueueResult as JSON (every field, as the other
# engines write it in the ShipResult file). One text column, not a column per field: the worker builds it
# from buffers (replication.arrow_buffers) and so never imports pandas, which pyarrow's conversion of
# Python rows does (0.7 s of CPU per new Python worker on this machine, profiled at 8fb1217).
RESULT_DDL = "queue_index bigint, queue_result string"


class ShipJobIncomplete(HbrepError):
    """The ship job returned no row, or more than one, for some queue (nothing is committed then)."""


def result_batch(rows: list[tuple[int, QueueResult]]) -> Any:
    """The queues' results as one Arrow record batch of :data:`RESULT_DDL`."""
    import pyarrow as pa  # executor side only (see ship_partition)

    from replication.arrow_buffers import binary_array, fixed_width_array

    return pa.RecordBatch.from_arrays(
        [
            fixed_width_array(pa.int64(), "q", [index for index, _ in rows]),
            binary_array([result.to_json().encode() for _, result in rows], pa.string()),
        ],
        names=["queue_index", "queue_result"],
    )


def queue_result(row: dict[str, Any]) -> QueueResult:
    """The QueueResult of a result row (the inverse of :func:`result_batch`)."""
    return QueueResult.from_dict(json.loads(row["queue_result"]))


def ship_partition(manifest_json: str, batches: Iterator[Any]) -> Iterator[Any]:
    """Executor side: ship the queues whose indexes arrive in ``batches``; one result row each."""
    from replication.source.replication_source import ship_queue  # executor side only: the ship path

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    manifest = Manifest.from_json(manifest_json)
    for batch in batches:
        indexes = batch.column(0).to_pylist()
        yield result_batch([(index, ship_queue(manifest, manifest.queues[index])) for index in indexes])


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
