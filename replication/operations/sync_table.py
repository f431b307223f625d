"""SyncTable: find where a peer's copy of a table differs from the source, cheaply, and what would fix it.

HBase repairs a drifted peer with two MapReduce tools: HashTable hashes the source table in contiguous
row ranges (``--batchsize``), SyncTable hashes the same ranges on the target, and only the ranges whose
hashes differ are scanned again and compared cell by cell (``SyncTable.SyncMapper``). This is the same
plan in Spark, in one job:

1. Both sides are scanned with the same options (time range, families, every version a family keeps).
2. Each cell is hashed (``xxhash64`` of row, family, qualifier, timestamp, type, value) and each row
   falls into one of ``buckets`` buckets by the hash of its key; per bucket the cell hashes are combined
   with ``bit_xor`` and counted. Only (bucket, hash, count) triples meet in the join: no cell moves.
   Departure from HBase: HashTable's ranges are contiguous key ranges because its mappers stream sorted
   scans; Spark aggregates by key anyway, so hash buckets of rows serve the same purpose and need no
   first pass to find range boundaries.
3. The cells of the differing buckets only are joined on their coordinates (row, family, qualifier,
   timestamp): a cell the peer lacks or holds with another value is to be put; a cell only the peer
   has is to be deleted (a ``Delete`` marker of that version) when deletes are asked for.

The counters keep SyncTable's names (HASHES_MATCHED, TARGETMISSINGROWS, DIFFERENTCELLVALUES, ...).
``RepairPlan.fixes`` is the DataFrame of cells to write; ``replication.operations.repair`` writes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from replication.errors import HbrepError
from replication.tables.semantics import LATEST_TIMESTAMP
from replication.wal.model import CellType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# SyncTable's counters (org.apache.hadoop.hbase.mapreduce.SyncTable.SyncMapper.Counter), those that apply.
HASHES_MATCHED = "HASHES_MATCHED"
HASHES_NOT_MATCHED = "HASHES_NOT_MATCHED"
SOURCEMISSINGROWS = "SOURCEMISSINGROWS"
SOURCEMISSINGCELLS = "SOURCEMISSINGCELLS"
TARGETMISSINGROWS = "TARGETMISSINGROWS"
TARGETMISSINGCELLS = "TARGETMISSINGCELLS"
ROWSWITHDIFFS = "ROWSWITHDIFFS"
DIFFERENTCELLVALUES = "DIFFERENTCELLVALUES"
MATCHINGROWS = "MATCHINGROWS"
MATCHINGCELLS = "MATCHINGCELLS"
COUNTERS = (
    HASHES_MATCHED, HASHES_NOT_MATCHED, SOURCEMISSINGROWS, SOURCEMISSINGCELLS, TARGETMISSINGROWS,
    TARGETMISSINGCELLS, ROWSWITHDIFFS, DIFFERENTCELLVALUES, MATCHINGROWS, MATCHINGCELLS,
)  # fmt: skip

ALL_VERSIONS = 2**31 - 1  # every version each family keeps (non-raw scans cap it by VERSIONS)
DEFAULT_BUCKETS = 65536

_CELL = ("row", "family", "qualifier", "timestamp", "type", "value")
_COORDINATES = ("row", "family", "qualifier", "timestamp")


class RepairError(HbrepError):
    """Bad repair arguments, or a table that cannot be repaired (the message names what)."""


@dataclass
class SyncOptions:
    """What to compare and fix: HashTable's scan options (--starttime/--endtime, --families) and
    SyncTable's (--dryrun, --doDeletes) under hbrep's names."""

    start_time: int = 0
    end_time: int = LATEST_TIMESTAMP
    families: list[str] | None = None
    peer_table: str | None = None
    deletes: bool = True
    dry_run: bool = False
    buckets: int = DEFAULT_BUCKETS
    # HashTable's --startrow/--stoprow: only rows in [start_row, stop_row) (None: open), as a seed's chunk
    start_row: bytes | None = None
    stop_row: bytes | None = None

    def __post_init__(self) -> None:
        if self.start_time < 0:
            raise RepairError(f"--starttime {self.start_time} is negative")
        if self.end_time <= self.start_time:
            raise RepairError(f"--stoptime {self.end_time} is not after --starttime {self.start_time}")
        if self.buckets < 1:
            raise RepairError(f"--buckets {self.buckets} must be >= 1")
        if self.families is not None and not [f for f in self.families if f]:
            raise RepairError("--families is empty")
        if self.start_row is not None and self.stop_row is not None and self.stop_row <= self.start_row:
            raise RepairError(f"stop row {self.stop_row!r} is not after start row {self.start_row!r}")

    def as_dict(self) -> dict[str, Any]:
        raw = asdict(self)
        for name in ("start_row", "stop_row"):
            raw[name] = None if raw[name] is None else raw[name].hex()
        return raw


@dataclass
class RepairPlan:
    """The comparison's counters and, unless nothing differs, the cells to write (``fixes``:
    DataFrame[row, family, qualifier, timestamp, type, value], puts and ``Delete`` markers)."""

    table: str
    peer_table: str
    counters: dict[str, int]
    cells_to_put: int = 0
    cells_to_delete: int = 0
    bytes_to_write: int = 0
    fixes: Any = field(default=None, repr=False)

    @property
    def differs(self) -> bool:
        """True when some bucket's hash differs (the peer's copy is not the source's)."""
        return self.counters.get(HASHES_NOT_MATCHED, 0) > 0

    @property
    def changes(self) -> int:
        """Cells the repair writes (puts plus delete markers)."""
        return self.cells_to_put + self.cells_to_delete

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "peer_table": self.peer_table,
            "counters": dict(self.counters),
            "cells_to_put": self.cells_to_put,
            "cells_to_delete": self.cells_to_delete,
            "bytes_to_write": self.bytes_to_write,
        }


def bucket_hashes(cells: DataFrame, buckets: int) -> DataFrame:
    """DataFrame[bucket, hash, cells]: per bucket of rows, the ``bit_xor`` of its cells' hashes and their
    count (order-free, so the two sides' scans need no sort)."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    return (
        cells.withColumn("bucket", F.pmod(F.xxhash64("row"), F.lit(buckets)))
        .groupBy("bucket")
        .agg(F.bit_xor(F.xxhash64(*_CELL)).alias("hash"), F.count(F.lit(1)).alias("cells"))
    )


def differing_buckets(source: DataFrame, peer: DataFrame) -> DataFrame:
    """DataFrame[bucket, matched] over every bucket either side has: matched when both sides have it
    with the same hash and count."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    s, p = source.alias("s"), peer.alias("p")
    joined = s.join(p, F.col("s.bucket") == F.col("p.bucket"), "full_outer")
    matched = (F.col("s.hash") == F.col("p.hash")) & (F.col("s.cells") == F.col("p.cells"))
    return joined.select(
        F.coalesce(F.col("s.bucket"), F.col("p.bucket")).alias("bucket"),
        F.coalesce(matched, F.lit(False)).alias("matched"),
    )


def cell_differences(source: DataFrame, peer: DataFrame) -> DataFrame:
    """Full outer join of two cell frames on the coordinates: DataFrame[row, family, qualifier,
    timestamp, s_type, s_value, p_type, p_value, state] where state is ``match``, ``target_missing``
    (only the source has the cell), ``source_missing`` (only the peer) or ``different`` (another value)."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    s = source.select(*_COORDINATES, F.col("type").alias("s_type"), F.col("value").alias("s_value"))
    p = peer.select(*_COORDINATES, F.col("type").alias("p_type"), F.col("value").alias("p_value"))
    joined = s.join(p, on=list(_COORDINATES), how="full_outer")
    state = (
        F.when(F.col("p_type").isNull(), F.lit("target_missing"))
        .when(F.col("s_type").isNull(), F.lit("source_missing"))
        .when((F.col("s_type") == F.col("p_type")) & (F.col("s_value") == F.col("p_value")), F.lit("match"))
        .otherwise(F.lit("different"))
    )
    return joined.withColumn("state", state)


def row_counters(differences: DataFrame) -> dict[str, int]:
    """SyncTable's row and cell counters of a ``cell_differences`` frame."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    def n(state: str):
        return F.sum(F.when(F.col("state") == state, 1).otherwise(0))

    per_row = differences.groupBy("row").agg(
        n("match").alias("m"), n("target_missing").alias("tm"), n("source_missing").alias("sm"),
        n("different").alias("d"),
    )  # fmt: skip
    only_source = (F.col("sm") == 0) & (F.col("m") == 0) & (F.col("d") == 0)
    only_peer = (F.col("tm") == 0) & (F.col("m") == 0) & (F.col("d") == 0)
    row_state = (
        F.when(only_source, F.lit(TARGETMISSINGROWS))
        .when(only_peer, F.lit(SOURCEMISSINGROWS))
        .when((F.col("tm") + F.col("sm") + F.col("d")) > 0, F.lit(ROWSWITHDIFFS))
        .otherwise(F.lit(MATCHINGROWS))
    )
    totals = per_row.agg(
        F.sum("m").alias(MATCHINGCELLS), F.sum("tm").alias(TARGETMISSINGCELLS), F.sum("sm").alias(SOURCEMISSINGCELLS),
        F.sum("d").alias(DIFFERENTCELLVALUES),
    ).collect()[0]  # fmt: skip
    counters = {name: int(totals[name] or 0) for name in (MATCHINGCELLS, TARGETMISSINGCELLS, SOURCEMISSINGCELLS,
                                                          DIFFERENTCELLVALUES)}  # fmt: skip
    for name in (TARGETMISSINGROWS, SOURCEMISSINGROWS, ROWSWITHDIFFS, MATCHINGROWS):
        counters[name] = 0
    for r in per_row.groupBy(row_state.alias("s")).count().collect():
        counters[r["s"]] = int(r["count"])
    return counters


def fixes_of(differences: DataFrame, deletes: bool) -> DataFrame:
    """The cells that make the peer's copy the source's: the source's cell where the peer lacks it or holds
    another value, and with ``deletes`` a ``Delete`` marker for each version only the peer holds."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    puts = differences.where(F.col("state").isin("target_missing", "different")).select(
        *_COORDINATES, F.col("s_type").alias("type"), F.col("s_value").alias("value")
    )
    if not deletes:
        return puts
    removals = differences.where(F.col("state") == "source_missing").select(
        *_COORDINATES, F.lit(int(CellType.DELETE)).alias("type"), F.lit(b"").alias("value")
    )
    return puts.unionByName(removals)


def _bytes_written(F: Any) -> Any:
    """The sum of the bytes a repair writes per cell (row, family, qualifier, value and 12 of key)."""
    return F.sum(F.length("row") + F.length("family") + F.length("qualifier") + F.length("value") + 12)


def range_cells(spark: SparkSession, root: str, table: str, options: SyncOptions) -> DataFrame:
    """Every version of every cell of ``table`` under ``root`` within the options' time range, families and
    [start_row, stop_row): DataFrame[row, family, qualifier, timestamp, type, value]."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    from replication.tables.spark_views import scan

    scanned = scan(
        spark, root, table, start_ts=options.start_time, end_ts=options.end_time, versions=ALL_VERSIONS,
        families=options.families, ordered=False,
    )  # fmt: skip
    if options.start_row is not None:
        scanned = scanned.where(F.col("row") >= F.lit(options.start_row))
    if options.stop_row is not None:
        scanned = scanned.where(F.col("row") < F.lit(options.stop_row))
    return scanned.select(*_CELL)


def plan_copy_into_empty(
    spark: SparkSession, source_root: str, peer_root: str, table: str, options: SyncOptions
) -> RepairPlan | None:
    """The plan of a range the peer holds nothing of (a seed's chunk, first time): every source cell is to be
    put, so no bucket is hashed and no cell compared; None when the peer holds any cell there (then
    ``plan_repair`` compares). The counters are SyncTable's for such a range: every row TARGETMISSING."""
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    if range_cells(spark, peer_root, options.peer_table or table, options).limit(1).count():
        return None
    fixes = range_cells(spark, source_root, table, options)
    sizes = fixes.agg(
        F.count(F.lit(1)).alias("cells"), F.countDistinct("row").alias("rows"),
        _bytes_written(F).alias("bytes"),
    ).collect()[0]  # fmt: skip
    counters = {name: 0 for name in COUNTERS}
    counters[TARGETMISSINGROWS], counters[TARGETMISSINGCELLS] = int(sizes["rows"]), int(sizes["cells"])
    plan = RepairPlan(table, options.peer_table or table, counters)
    plan.cells_to_put, plan.bytes_to_write = int(sizes["cells"]), int(sizes["bytes"] or 0)
    plan.fixes = fixes if plan.cells_to_put else None
    return plan


def plan_repair(
    spark: SparkSession, source_root: str, peer_root: str, table: str, options: SyncOptions | None = None
) -> RepairPlan:
    """Compare ``table`` under ``source_root`` with its copy under ``peer_root`` (HashTable, then SyncTable
    inside the differing buckets only) and return the counters and the cells a repair would write.

    UnknownTable / UnknownFamily when either side lacks the table or a requested family.
    """
    from pyspark.sql import functions as F  # pyspark loads only when a repair runs

    options = options or SyncOptions()
    peer_table = options.peer_table or table

    def cells(root: str, name: str) -> DataFrame:
        return range_cells(spark, root, name, options).withColumn(
            "bucket", F.pmod(F.xxhash64("row"), F.lit(options.buckets))
        )

    source_cells, peer_cells = cells(source_root, table), cells(peer_root, peer_table)
    verdicts = differing_buckets(
        bucket_hashes(source_cells.drop("bucket"), options.buckets),
        bucket_hashes(peer_cells.drop("bucket"), options.buckets),
    )
    by_match = {bool(r["matched"]): int(r["count"]) for r in verdicts.groupBy("matched").count().collect()}
    counters = {name: 0 for name in COUNTERS}
    counters[HASHES_MATCHED], counters[HASHES_NOT_MATCHED] = by_match.get(True, 0), by_match.get(False, 0)
    plan = RepairPlan(table, peer_table, counters)
    if not counters[HASHES_NOT_MATCHED]:
        return plan
    # Only the differing buckets' cells are compared (a broadcast semi-join on the bucket ids).
    bad = F.broadcast(verdicts.where(~F.col("matched")).select("bucket"))
    differences = cell_differences(
        source_cells.join(bad, "bucket", "left_semi").drop("bucket"),
        peer_cells.join(bad, "bucket", "left_semi").drop("bucket"),
    ).localCheckpoint(eager=True)
    counters.update(row_counters(differences))
    fixes = fixes_of(differences, options.deletes).localCheckpoint(eager=True)
    sizes = fixes.agg(
        F.sum(F.when(F.col("type") == int(CellType.PUT), 1).otherwise(0)).alias("puts"),
        F.sum(F.when(F.col("type") == int(CellType.DELETE), 1).otherwise(0)).alias("deletes"),
        _bytes_written(F).alias("bytes"),
    ).collect()[0]
    plan.cells_to_put, plan.cells_to_delete = int(sizes["puts"] or 0), int(sizes["deletes"] or 0)
    plan.bytes_to_write, plan.fixes = int(sizes["bytes"] or 0), fixes
    return plan
