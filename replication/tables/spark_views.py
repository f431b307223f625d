"""Spark views of the table files with HBase read semantics (same rules as ``semantics.py``).

Everything is DataFrame expressions (joins, aggregates, windows, higher-order functions): no Python
UDF runs per cell. ``scan_cells_df`` is the pure transformation, so callers holding a DataFrame of
cells (tests, jobs) can reuse it; ``scan`` adds reading the files and checking the table and families
against the descriptor. Output is ordered like an HBase scan: row, family, qualifier ascending
(unsigned bytes, as Spark compares binary), timestamp and type descending.

pyspark is imported inside the functions: importing this module does not load Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from replication.fs import get_filesystem
from replication.spark_tokens import FILESYSTEMS_KEY
from replication.tables.descriptors import TableRegistry
from replication.tables.hbase_thrift import is_thrift_root, thrift_scan
from replication.tables.semantics import (
    DELETE,
    DELETE_COLUMN,
    DELETE_FAMILY,
    DELETE_FAMILY_VERSION,
    LATEST_TIMESTAMP,
    PUT,
    check_scan_args,
)
from replication.tables.table_files import list_table_files

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

CELL_COLUMNS = ("row", "family", "qualifier", "timestamp", "type", "value", "sequence", "tags")
SCAN_COLUMNS = ("row", "family", "qualifier", "timestamp", "type", "value")


def cell_schema():
    """The Spark schema of the table files (row, family, qualifier, timestamp, type, value, sequence)."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    return StructType(
        [
            StructField("row", BinaryType(), False),
            StructField("family", BinaryType(), False),
            StructField("qualifier", BinaryType(), False),
            StructField("timestamp", LongType(), False),
            StructField("type", IntegerType(), False),
            StructField("value", BinaryType(), False),
            StructField("sequence", LongType(), False),
            StructField("tags", BinaryType(), True),  # null in files written before tags were kept
        ]
    )


def _spark_path(root: str, path: str) -> str:
    """A backend path as Spark should open it (the root's scheme and NameNode kept)."""
    parsed = urlparse(root)
    if parsed.scheme in ("", "file"):
        # named file://, not left bare: a Spark whose Hadoop configuration names an HDFS as fs.defaultFS (its
        # HADOOP_CONF_DIR) would look for a bare path there
        return f"file://{path}"
    # hbrep reads hdfs://nn:PORT as WebHDFS on the NameNode's HTTP port (fs/webhdfs.py); Spark's Hadoop
    # client would speak RPC to that port, so it is given the same port as webhdfs://
    scheme = "webhdfs" if parsed.scheme == "hdfs" else parsed.scheme
    return f"{scheme}://{parsed.netloc.rsplit('@', 1)[-1]}{path}"


def hadoop_filesystem(root: str) -> str | None:
    """The Hadoop file system Spark reads ``root``'s table files from (``webhdfs://nn:9870``), None for a local root
    or a Thrift one: what a Kerberized job asks delegation tokens for."""
    parsed = urlparse(root)
    if parsed.scheme in ("", "file") or is_thrift_root(root):
        return None
    return _spark_path(root, "")


def token_filesystems_conf(roots: Iterable[str]) -> dict[str, str]:
    """The Spark setting that names the Hadoop file systems of ``roots`` (:func:`hadoop_filesystem`), each once,
    in order, as ``spark.kerberos.access.hadoopFileSystems``: the file systems a Kerberized application gets
    delegation tokens for (Spark on YARN and Kubernetes, ``replication.spark.spark_session`` on a standalone
    master). ``{}`` when no root is on a Hadoop file system."""
    filesystems = list(dict.fromkeys(fs for fs in map(hadoop_filesystem, roots) if fs))
    return {FILESYSTEMS_KEY: ",".join(filesystems)} if filesystems else {}


def read_cells(spark: SparkSession, root: str, table: str) -> DataFrame:
    """Every stored cell of ``table`` (all versions and delete markers) with its sequence id.

    UnknownTable if the table has no descriptor; an empty DataFrame with the schema when it has no
    table files yet. The file list is taken once, when this is called.
    """
    fs, root_path = get_filesystem(root)
    TableRegistry(fs, root_path).get(table)
    files = list_table_files(fs, root_path, table)
    if not files:
        return spark.createDataFrame([], cell_schema())
    return spark.read.schema(cell_schema()).parquet(*[_spark_path(root, f.path) for f in files])


def scan(
    spark: SparkSession,
    root: str,
    table: str,
    *,
    start_ts: int = 0,
    end_ts: int = LATEST_TIMESTAMP,
    versions: int = 1,
    raw: bool = False,
    families: Iterable[str | bytes] | None = None,
    row_prefixes: Sequence[bytes] | None = None,
    ordered: bool = True,
    with_tags: bool = False,
) -> DataFrame:
    """What an HBase scan of ``table`` returns: DataFrame[row, family, qualifier, timestamp, type, value]
    (and ``tags``, each cell's raw tags block, with ``with_tags``).

    ``ordered=False`` skips the final sort into HBase cell order (a global sort: a sampling job and a
    shuffle) for callers that group or join the cells anyway, such as VerifyReplication.

    UnknownTable / UnknownFamily (from the descriptor) for a missing table or family; IllegalScan for
    a bad time range or versions. Non-raw scans cap versions by each family's VERSIONS.

    ``root`` may also be ``thrift://host:port``: a real HBase's table, read through its Thrift server.
    """
    check_scan_args(start_ts, end_ts, versions)
    if is_thrift_root(root):  # a real HBase table, through HBase's Thrift server (tables/hbase_thrift.py)
        return thrift_scan(
            spark, root, table, start_ts=start_ts, end_ts=end_ts, versions=versions, raw=raw, families=families,
            row_prefixes=row_prefixes, with_tags=with_tags,
        )  # fmt: skip
    fs, root_path = get_filesystem(root)
    desc = TableRegistry(fs, root_path).get(table)
    fams = None
    if families is not None:
        fams = [desc.family(f).name_bytes for f in families]
    return scan_cells_df(
        read_cells(spark, root, table),
        start_ts=start_ts,
        end_ts=end_ts,
        versions=versions,
        raw=raw,
        families=fams,
        row_prefixes=row_prefixes,
        family_max_versions=desc.max_versions_by_family(),
        ordered=ordered,
        with_tags=with_tags,
    )


def _selection(df: DataFrame, families: Iterable[bytes | str] | None, row_prefixes: Sequence[bytes] | None):
    from pyspark.sql import functions as F

    if families is not None:
        fams = [f.encode() if isinstance(f, str) else f for f in families]
        df = df.where(F.col("family").isin([F.lit(f) for f in fams]) if fams else F.lit(False))
    if row_prefixes:
        cond = None
        for prefix in row_prefixes:
            c = F.lit(True) if not prefix else F.substring(F.col("row"), 1, len(prefix)) == F.lit(bytes(prefix))
            cond = c if cond is None else cond | c
        df = df.where(cond)
    return df


def _newest_per_coordinates(df: DataFrame, keys: Sequence[str], with_tags: bool = False) -> DataFrame:
    """Collapse identical coordinates to the cell with the highest sequence (value, and tags, kept from it)."""
    from pyspark.sql import functions as F

    kept = ["value", "tags"] if with_tags else ["value"]
    return (
        df.groupBy(*keys)
        .agg(F.max(F.struct("sequence", *kept)).alias("_newest"))
        .select(*keys, *[F.col(f"_newest.{name}").alias(name) for name in kept])
    )


def scan_cells_df(
    cells: DataFrame,
    *,
    start_ts: int = 0,
    end_ts: int = LATEST_TIMESTAMP,
    versions: int = 1,
    raw: bool = False,
    families: Iterable[bytes | str] | None = None,
    row_prefixes: Sequence[bytes] | None = None,
    family_max_versions: Mapping[bytes, int] | None = None,
    ordered: bool = True,
    with_tags: bool = False,
) -> DataFrame:
    """Apply HBase scan semantics to a DataFrame of cells with CELL_COLUMNS (see semantics.py);
    ``ordered`` sorts the result into HBase cell order; ``with_tags`` keeps each cell's tags."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    check_scan_args(start_ts, end_ts, versions)
    sel = _selection(cells, families, row_prefixes)
    if with_tags:
        sel = sel.withColumn("tags", F.coalesce(F.col("tags"), F.lit(b"")))
    in_range = (F.col("timestamp") >= F.lit(start_ts)) & (F.col("timestamp") < F.lit(end_ts))
    column = ["row", "family", "qualifier"]
    order = [F.col("timestamp").desc(), F.col("type").desc()]
    if raw:
        cells_in = _newest_per_coordinates(sel.where(in_range), [*column, "timestamp", "type"], with_tags)
        window = Window.partitionBy(*column).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
        puts_seen = F.sum(F.when(F.col("type") == PUT, 1).otherwise(0)).over(window)
        out = cells_in.withColumn("_puts", puts_seen).where(F.col("_puts") <= versions)
    else:
        puts = _newest_per_coordinates(
            sel.where((F.col("type") == PUT) & in_range), [*column, "timestamp"], with_tags
        ).withColumn("type", F.lit(PUT))
        markers = sel.where(F.col("type").isin(DELETE, DELETE_FAMILY_VERSION, DELETE_COLUMN, DELETE_FAMILY)).select(
            F.col("row").alias("m_row"),
            F.col("family").alias("m_family"),
            F.col("qualifier").alias("m_qualifier"),
            F.col("timestamp").alias("m_ts"),
            F.col("type").alias("m_type"),
        )  # no distinct(): an anti join needs one match, and a shuffle less matters on small tables
        p_ts, m_ts, m_type = F.col("timestamp"), F.col("m_ts"), F.col("m_type")
        same_column = F.col("qualifier") == F.col("m_qualifier")
        masks = (
            ((m_type == DELETE_FAMILY) & (m_ts >= p_ts))
            | ((m_type == DELETE_FAMILY_VERSION) & (m_ts == p_ts))
            | ((m_type == DELETE_COLUMN) & same_column & (m_ts >= p_ts))
            | ((m_type == DELETE) & same_column & (m_ts == p_ts))
        )
        cond = (F.col("row") == F.col("m_row")) & (F.col("family") == F.col("m_family")) & masks
        alive = puts.join(markers, cond, "left_anti")
        window = Window.partitionBy(*column).orderBy(F.col("timestamp").desc())
        out = alive.withColumn("_n", F.row_number().over(window)).where(
            F.col("_n") <= _version_limit(versions, family_max_versions or {})
        )
    out = out.select(*SCAN_COLUMNS, *(["tags"] if with_tags else []))
    if not ordered:
        return out
    return out.orderBy("row", "family", "qualifier", F.col("timestamp").desc(), F.col("type").desc())


def _version_limit(versions: int, family_max_versions: Mapping[bytes, int]) -> Column:
    """min(scan versions, family VERSIONS) as a column expression."""
    from pyspark.sql import functions as F

    limit = F.lit(versions)
    for family, max_versions in family_max_versions.items():
        if max_versions < versions:
            limit = F.when(F.col("family") == F.lit(family), F.lit(max_versions)).otherwise(limit)
    return limit


def rows_df(scanned: DataFrame) -> DataFrame:
    """One row per row key: DataFrame[row, cells: array<struct<family, qualifier, timestamp, type,
    value>>, cell_count], cells in HBase order, rows ordered by key (a Result per row)."""
    from pyspark.sql import functions as F

    keyed = F.struct(
        F.col("family"),
        F.col("qualifier"),
        (-F.col("timestamp")).alias("neg_ts"),
        (-F.col("type")).alias("neg_type"),
        F.col("timestamp"),
        F.col("type"),
        F.col("value"),
    )
    grouped = scanned.groupBy("row").agg(F.sort_array(F.collect_list(keyed)).alias("_cells"))
    cells = F.transform(
        "_cells",
        lambda c: F.struct(
            c["family"].alias("family"),
            c["qualifier"].alias("qualifier"),
            c["timestamp"].alias("timestamp"),
            c["type"].alias("type"),
            c["value"].alias("value"),
        ),
    )
    return grouped.select("row", cells.alias("cells")).withColumn("cell_count", F.size("cells")).orderBy("row")


def latest_rows(
    spark: SparkSession,
    root: str,
    table: str,
    *,
    start_ts: int = 0,
    end_ts: int = LATEST_TIMESTAMP,
    versions: int = 1,
    raw: bool = False,
    families: Iterable[str | bytes] | None = None,
    row_prefixes: Sequence[bytes] | None = None,
) -> DataFrame:
    """``scan`` grouped per row key (see ``rows_df``): for VerifyReplication's row-by-row comparison
    and the GX checks (row key non-null and unique, row counts). Rows with no visible cell are absent."""
    return rows_df(
        scan(
            spark,
            root,
            table,
            start_ts=start_ts,
            end_ts=end_ts,
            versions=versions,
            raw=raw,
            families=families,
            row_prefixes=row_prefixes,
        )
    )
