"""VerifyReplication: compare a source table with its peer copy, row by row, in Spark (spec §8).

HBase runs a map-only job whose mappers merge-compare a source scanner with a peer scanner by row key
(``VerifyReplication.Verifier``). Here both tables are scanned with HBase scan semantics
(``replication.tables.spark_views.scan``: time range, versions, raw, families, row prefixes), grouped
into one Result per row (the sorted array of its cells), and full-outer-joined on the row key:

- both sides have the row, same cells (family, qualifier, timestamp, type, value; same count) → GOODROWS;
- both sides, cells differ → CONTENT_DIFFERENT_ROWS;
- only the source → ONLY_IN_SOURCE_TABLE_ROWS; only the peer → ONLY_IN_PEER_TABLE_ROWS;
- every failure also counts BADROWS.

Tags are compared with ``compare_tags`` (``--compare-tags``); by default they are not, since a peer
shipped with ``KeyValueCodec`` (hbase.replication.rpc.codec) legitimately has none.

With ``recompare_sleep_ms > 0`` the bad rows are kept (a checkpoint of their keys and first verdict),
the driver sleeps, then only those rows are read again from both clusters; a row that now matches
counts as GOODROWS, the others keep their first verdict (as HBase's ``logFailRowAndIncrementCounter``
does, which increments the original counter when the re-Get still differs). ``RECOMPARES`` (a 2.6
counter) reports how many rows were re-read.

Nothing is collected to the driver but the counters and, when asked, a bounded list of bad row keys.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from replication.cluster.errors import NoClusterInfo
from replication.cluster.hbase_source import read_hbase_source
from replication.cluster.info import read_cluster_info
from replication.cluster.source_cluster import open_source
from replication.cluster.source_tables import source_table, user_tables
from replication.errors import HbrepError
from replication.tables.hbase_thrift import is_thrift_root, thrift_root
from replication.tables.semantics import LATEST_TIMESTAMP
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

LOG = logging.getLogger(__name__)

if TYPE_CHECKING:
    from kazoo.client import KazooClient
    from pyspark.sql import DataFrame, SparkSession

    from replication.config import Config
    from replication.tables.descriptors import TableDescriptor

GOODROWS = "GOODROWS"
BADROWS = "BADROWS"
ONLY_IN_SOURCE_TABLE_ROWS = "ONLY_IN_SOURCE_TABLE_ROWS"
ONLY_IN_PEER_TABLE_ROWS = "ONLY_IN_PEER_TABLE_ROWS"
CONTENT_DIFFERENT_ROWS = "CONTENT_DIFFERENT_ROWS"
RECOMPARES = "RECOMPARES"
COUNTERS = (GOODROWS, BADROWS, ONLY_IN_SOURCE_TABLE_ROWS, ONLY_IN_PEER_TABLE_ROWS, CONTENT_DIFFERENT_ROWS)

# Verdict codes of one row (a Spark int column).
_GOOD, _ONLY_SOURCE, _ONLY_PEER, _DIFFERENT = 0, 1, 2, 3
_VERDICT_COUNTER = {
    _ONLY_SOURCE: ONLY_IN_SOURCE_TABLE_ROWS,
    _ONLY_PEER: ONLY_IN_PEER_TABLE_ROWS,
    _DIFFERENT: CONTENT_DIFFERENT_ROWS,
}


class VerifyError(HbrepError):
    """Bad VerifyReplication arguments (the message names the option)."""


@dataclass
class VerifyOptions:
    """VerifyReplication's options (HBase names in comments); defaults compare the newest version of all."""

    start_time: int = 0  # --starttime (inclusive)
    end_time: int = LATEST_TIMESTAMP  # --endtime (exclusive)
    families: list[str] | None = None  # --families a,b
    row_prefixes: list[str] | None = None  # --row-prefixes p,q
    recompare_sleep_ms: int = 0  # --recomparesleep
    peer_table: str | None = None  # --peerTableName
    versions: int = -1  # --versions (-1: the scan default, one version)
    raw: bool = False  # --raw (delete markers compared too)
    verbose: bool = False  # --verbose: list the bad row keys
    max_listed_bad_rows: int = 1000  # cap of the bad-row list brought to the driver
    # hbrep's own option: compare each cell's tags too (HBase's Result.compareResults matches tags; hbrep
    # compares them only when asked, since a peer shipped with KeyValueCodec keeps none)
    compare_tags: bool = False
    # --stoptime: the reference guide's spelling of --endtime (HBase's VerifyReplication parses only
    # --endtime=); folded into end_time at construction, so it is always None afterwards
    stop_time: int | None = None

    def __post_init__(self) -> None:
        end_name = "--endtime"
        if self.stop_time is not None:
            if self.end_time != LATEST_TIMESTAMP and self.end_time != self.stop_time:
                raise VerifyError(
                    f"--stoptime {self.stop_time} and --endtime {self.end_time} differ (they are one option)"
                )
            self.end_time, self.stop_time, end_name = self.stop_time, None, "--stoptime"
        if self.start_time < 0:
            raise VerifyError(f"--starttime {self.start_time} is negative")
        if self.end_time <= self.start_time:
            raise VerifyError(f"{end_name} {self.end_time} is not after --starttime {self.start_time}")
        if self.versions == 0 or self.versions < -1:
            raise VerifyError(f"--versions {self.versions} must be >= 1 (or -1 for the default)")
        if self.recompare_sleep_ms < 0:
            raise VerifyError(f"--recomparesleep {self.recompare_sleep_ms} is negative")
        if self.families is not None and not [f for f in self.families if f]:
            raise VerifyError("--families is empty")

    @property
    def scan_versions(self) -> int:
        """Versions per column the scans return (HBase: -1 leaves the Scan default of 1)."""
        return 1 if self.versions == -1 else self.versions

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> VerifyOptions:
        """Rebuild from ``as_dict()`` (unknown keys refused with VerifyError naming them)."""
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise VerifyError(f"unknown verify options {sorted(unknown)}")
        return cls(**raw)


@dataclass
class BadRow:
    """One row that failed verification: its key and which counter it went to."""

    row: bytes
    counter: str

    def as_dict(self) -> dict[str, str]:
        return {"row": self.row.decode("utf-8", "backslashreplace"), "row_hex": self.row.hex(), "counter": self.counter}


@dataclass
class VerifyResult:
    """Counters of one VerifyReplication run, plus (when asked) the bad row keys."""

    source_table: str
    peer_table: str
    counters: dict[str, int]
    bad_rows: list[BadRow] = field(default_factory=list)
    bad_rows_truncated: bool = False
    elapsed_s: float = 0.0

    @property
    def good_rows(self) -> int:
        return self.counters[GOODROWS]

    @property
    def bad_row_count(self) -> int:
        return self.counters[BADROWS]

    def counter_lines(self) -> list[str]:
        """``NAME=value``, one per counter, in HBase's order."""
        names = [*COUNTERS, *sorted(set(self.counters) - set(COUNTERS))]
        return [f"{name}={self.counters[name]}" for name in names if name in self.counters]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source_table": self.source_table,
            "peer_table": self.peer_table,
            "counters": dict(self.counters),
            "bad_rows": [b.as_dict() for b in self.bad_rows],
            "bad_rows_truncated": self.bad_rows_truncated,
            "elapsed_s": self.elapsed_s,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> VerifyResult:
        bad = [BadRow(bytes.fromhex(b["row_hex"]), b["counter"]) for b in raw.get("bad_rows", [])]
        return cls(
            raw["source_table"],
            raw["peer_table"],
            {k: int(v) for k, v in raw["counters"].items()},
            bad,
            bool(raw.get("bad_rows_truncated", False)),
            float(raw.get("elapsed_s", 0.0)),
        )


def _prefixes(options: VerifyOptions) -> list[bytes] | None:
    return [p.encode("utf-8") for p in options.row_prefixes] if options.row_prefixes else None


def _scan(spark: SparkSession, root: str, table: str, options: VerifyOptions) -> DataFrame:
    from replication.tables.spark_views import scan  # pyspark, pyarrow: only when a verify runs

    return scan(
        spark,
        root,
        table,
        start_ts=options.start_time,
        end_ts=options.end_time,
        versions=options.scan_versions,
        raw=options.raw,
        families=options.families,
        row_prefixes=_prefixes(options),
        ordered=False,  # rows are grouped and joined next: HBase cell order is not needed
        with_tags=options.compare_tags,
    )


def row_results(scanned: DataFrame, name: str) -> DataFrame:
    """One row per row key: DataFrame[row, <name>: array<struct<family, qualifier, timestamp, type,
    value[, tags]>>] with the cells in a fixed order, so two Results compare with ``==``
    (Result.compareResults); ``tags`` when the scan kept them (``VerifyOptions.compare_tags``)."""
    from pyspark.sql import functions as F  # pyspark loads only when a verify runs

    fields = ["family", "qualifier", "timestamp", "type", "value"]
    cell = F.struct(*fields, *(["tags"] if "tags" in scanned.columns else []))
    return scanned.groupBy("row").agg(F.sort_array(F.collect_list(cell)).alias(name))


def compare_rows(source_rows: DataFrame, peer_rows: DataFrame) -> DataFrame:
    """Full outer join of two ``row_results`` frames (columns ``src`` and ``peer``) on the row key:
    DataFrame[row, verdict] with verdict 0 good, 1 only in source, 2 only in peer, 3 content differs."""
    from pyspark.sql import functions as F  # pyspark loads only when a verify runs

    joined = source_rows.join(peer_rows, on="row", how="full_outer")
    verdict = (
        F.when(F.col("peer").isNull(), F.lit(_ONLY_SOURCE))
        .when(F.col("src").isNull(), F.lit(_ONLY_PEER))
        .when(F.col("src") == F.col("peer"), F.lit(_GOOD))
        .otherwise(F.lit(_DIFFERENT))
    )
    return joined.select("row", verdict.alias("verdict"))


def _verdicts(spark: SparkSession, source_root: str, peer_root: str, table: str, options: VerifyOptions) -> DataFrame:
    peer_table = options.peer_table or table
    src = row_results(_scan(spark, source_root, table, options), "src")
    peer = row_results(_scan(spark, peer_root, peer_table, options), "peer")
    return compare_rows(src, peer)


def _count_verdicts(verdicts: DataFrame) -> dict[int, int]:
    return {int(r["verdict"]): int(r["count"]) for r in verdicts.groupBy("verdict").count().collect()}


def verify_tables(
    spark: SparkSession,
    source_root: str,
    peer_root: str,
    table: str,
    options: VerifyOptions | None = None,
) -> VerifyResult:
    """Compare ``table`` under ``source_root`` with ``options.peer_table or table`` under ``peer_root``.

    Returns the five HBase counters (plus RECOMPARES when a recompare ran); ``bad_rows`` lists up to
    ``options.max_listed_bad_rows`` bad keys when ``options.verbose``. UnknownTable/UnknownFamily (from
    the table descriptors) when either side lacks the table or a requested family.
    """
    options = options or VerifyOptions()
    started = time.monotonic()
    peer_table = options.peer_table or table
    verdicts = _verdicts(spark, source_root, peer_root, table, options)
    by_verdict = _count_verdicts(verdicts)
    bad_total = sum(n for v, n in by_verdict.items() if v != _GOOD)
    counters = {name: 0 for name in COUNTERS}
    counters[GOODROWS] = by_verdict.get(_GOOD, 0)
    bad_rows: list[BadRow] = []
    truncated = False
    if bad_total and options.recompare_sleep_ms > 0:
        bad = verdicts.where(verdicts.verdict != _GOOD).localCheckpoint(eager=True)
        time.sleep(options.recompare_sleep_ms / 1000.0)
        from pyspark.sql import functions as F  # pyspark loads only when a verify runs

        # Re-read both tables (new table files included) and keep the verdicts of the bad rows only.
        # A row gone from both sides meanwhile has no new verdict: it keeps its first one, never GOOD.
        again = _verdicts(spark, source_root, peer_root, table, options).withColumnRenamed("verdict", "now")
        rechecked = bad.join(again, "row", "left")
        final = rechecked.select(
            "row",
            F.when(F.col("now") == F.lit(_GOOD), F.lit(_GOOD)).otherwise(F.col("verdict")).alias("verdict"),
        )
        still = _count_verdicts(final)
        counters[GOODROWS] += still.get(_GOOD, 0)
        for verdict, name in _VERDICT_COUNTER.items():
            counters[name] = still.get(verdict, 0)
        counters[RECOMPARES] = bad_total
        bad_frame = final.where(F.col("verdict") != _GOOD)
    else:
        for verdict, name in _VERDICT_COUNTER.items():
            counters[name] = by_verdict.get(verdict, 0)
        bad_frame = verdicts.where(verdicts.verdict != _GOOD)
    counters[BADROWS] = sum(counters[name] for name in _VERDICT_COUNTER.values())
    if options.verbose and counters[BADROWS]:
        limit = options.max_listed_bad_rows
        taken = bad_frame.orderBy("row").limit(limit + 1).collect()
        truncated = len(taken) > limit
        bad_rows = [BadRow(bytes(r["row"]), _VERDICT_COUNTER[int(r["verdict"])]) for r in taken[:limit]]
    return VerifyResult(table, peer_table, counters, bad_rows, truncated, round(time.monotonic() - started, 3))


# ---------------------------------------------------------------------------------------------------
# Resolving a peer id or cluster key to the filesystem roots of both clusters.


@dataclass(frozen=True)
class VerifyTarget:
    """Where the two tables live: the source and peer cluster keys and their filesystem roots."""

    source_key: str
    source_root: str
    peer_key: str
    peer_root: str
    peer_id: str | None
    # the source's file system root when source_root is a real HBase's thrift://host:port (metrics, Data Docs)
    source_state_root: str = ""

    @property
    def state_root(self) -> str:
        """Where the source keeps hbrep's state (metrics store, GX project): its file system root."""
        return self.source_state_root or self.source_root


def flush_both_sides(target: VerifyTarget, table: str, conf: Config, peer_table: str | None = None) -> list[str]:
    """Flush ``table``'s memstores on the source and the peer before comparing, so that every acknowledged
    edit is compared (HBase's VerifyReplication scans memstores too; hbrep's reads table files). A cluster
    that cannot be flushed (no live region server: a stopped cluster has flushed already) is compared as
    its files stand; the returned lines say which, and are logged."""
    from replication.cluster.client import ClusterClient

    notes = []
    for key, root, name in (
        (target.source_key, target.source_root, table),
        (target.peer_key, target.peer_root, peer_table or table),
    ):
        if is_thrift_root(root):
            continue  # a real HBase's scans read its memstores: nothing to flush
        try:
            with ClusterClient(key, conf) as client:
                client.flush(name)
        except Exception as exc:
            notes.append(f"{name} on {key} not flushed before the compare: {exc}")
            LOG.warning("%s", notes[-1])
    return notes


def looks_like_cluster_key(peer: str) -> bool:
    """True for ``quorum:port:/parent`` (VerifyReplication accepts a peer id or a quorum address)."""
    return ":" in peer and "/" in peer


def resolve_target(zk: KazooClient, source_key: ClusterKey, conf: Config, peer: str) -> VerifyTarget:
    """Resolve ``peer`` (a peer id of the source, or a cluster key) and both clusters' roots.

    The peer id is looked up in the source's peer storage (PeerNotFound when absent); each root comes
    from the cluster's ClusterInfo in ZooKeeper. A real HBase side is read through its Thrift server:
    a source registered by ``add_peer --shadow --thrift HOST:PORT``, a peer whose configuration has
    ``hbrep.peer.thrift=HOST:PORT``. NoClusterInfo naming the key when neither is there.
    """
    source_paths = ZNodePaths(conf, parent=source_key.znode_parent)
    source_root, source_state_root = _source_roots(zk, source_paths, source_key)
    peer_id: str | None = None
    peer_thrift = ""
    if looks_like_cluster_key(peer):
        peer_key = ClusterKey.parse(peer)
    else:
        peer_id = peer
        config = ReplicationPeerStorage(zk, source_paths).get_peer_config(peer)
        peer_key, peer_thrift = ClusterKey.parse(config.cluster_key), config.configuration.get(PEER_THRIFT_KEY, "")
    peer_paths = ZNodePaths(conf, parent=peer_key.znode_parent)
    if peer_key.hosts == source_key.hosts:
        peer_root = _peer_root(zk, peer_paths, peer_key, peer_thrift)
    else:
        with connected(peer_key, **zk_options(conf)) as peer_zk:
            peer_root = _peer_root(peer_zk, peer_paths, peer_key, peer_thrift)
    return VerifyTarget(str(source_key), source_root, str(peer_key), peer_root, peer_id, source_state_root)


PEER_THRIFT_KEY = "hbrep.peer.thrift"  # a real HBase peer's Thrift server (host:port), for verify and GX


def _source_roots(zk: KazooClient, paths: ZNodePaths, key: ClusterKey) -> tuple[str, str]:
    """(root verify scans, root hbrep keeps state under): the same for an hbrep cluster; the Thrift
    server and the rootdir for a real HBase source."""
    try:
        return read_cluster_info(zk, paths).root, ""
    except NoClusterInfo:
        registered = read_hbase_source(zk, paths)
        if registered is None:
            raise
    if not registered.thrift:
        raise VerifyError(
            f"the real HBase source {key} has no Thrift server on record: "
            "add_peer --shadow --thrift HOST:PORT names the one verify reads its tables through"
        )
    return thrift_root(registered.thrift), registered.rootdir


def _peer_root(zk: KazooClient, paths: ZNodePaths, key: ClusterKey, thrift: str) -> str:
    try:
        return read_cluster_info(zk, paths).root
    except NoClusterInfo:
        if not thrift:
            raise NoClusterInfo(
                f"no hbrep cluster at {key}; for a real HBase peer set {PEER_THRIFT_KEY}=HOST:PORT "
                "(its Thrift server) with update_peer_config"
            ) from None
        return thrift_root(thrift)


def split_list(text: str | None) -> list[str] | None:
    """``"a,b"`` → ``["a", "b"]`` (blank items dropped); None or "" → None."""
    if not text:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    return items or None


def replicated_families(config: ReplicationPeerConfig, desc: TableDescriptor) -> list[str]:
    """The families of ``desc`` replicated to the peer of ``config``, sorted: REPLICATION_SCOPE != 0 and let
    through by the peer's table-cfs (what a ship delivers; a scope-0 family never reaches the peer)."""
    return sorted(f for f, cf in desc.families.items() if cf.scope != 0 and config.need_to_replicate(desc.name, f))


def verify_targets(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    *,
    peer: str | None,
    table: str | None,
    families: list[str] | None,
    start_ms: int,
    end_ms: int,
) -> list[dict[str, Any]]:
    """(peer, table) pairs to verify: the named ones, else every peer × every table it replicates.

    A table is replicated to a peer when one of its families has REPLICATION_SCOPE != 0 and the
    peer's table-cfs let it through (``need_to_replicate``). Unknown peer/table names raise.
    """
    source = open_source(zk, key, conf)
    storage = ReplicationPeerStorage(zk, source.paths)
    peer_ids = sorted(storage.list_peer_ids())
    if peer is not None:
        if peer not in peer_ids:
            raise HbrepError(f"verify: peer {peer} does not exist on {key}")
        peer_ids = [peer]
    tables = [source_table(source, table)] if table is not None else user_tables(source)
    targets = []
    for peer_id in peer_ids:
        config = storage.get_peer_config(peer_id)
        for desc in tables:
            wanted = [f for f in replicated_families(config, desc) if not families or f in families]
            if table is None and not wanted:
                continue
            targets.append(
                {
                    "peer_id": peer_id,
                    "table": desc.name,
                    "families": sorted(families) if families else sorted(wanted),
                    "start_ms": start_ms,
                    "end_ms": end_ms,
                }
            )
    return targets
