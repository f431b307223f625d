"""Seed a peer with tables that already have history, while the source keeps writing.

HBase's recipe is manual: add the peer DISABLED (its queues keep every WAL), snapshot, ExportSnapshot,
restore on the peer, enable. hbrep does the same in steps a DAG (or ``hbrep seed_peer``) can run, watch,
and resume:

1. ``start_seed``: the peer is added when it does not exist yet; a table the peer lacks is created there
   with the source's descriptor (an hbrep peer; a real HBase peer must have it). A helper peer
   ``seed.<peerId>`` (same cluster key and settings, table-cfs = the seeded tables) is added DISABLED,
   and the source's region servers give it queues at their current WALs: from then on every edit of
   those tables is tracked there and kept (the log cleaner keeps queued WALs). Only then is the seed
   mark written (``zk/seed_marks.py``): the peer's own cycles skip those tables' edits while it exists.
   The tables are cut into row-range chunks (boundaries sampled from the source's rows).
2. ``copy_chunk``: one chunk of one table is made the peer's, as ``hbrep repair`` does (hash buckets,
   the differing cells written as replicated edits with the source's cluster id); the finished chunk is
   recorded in the mark, so a seed that crashed resumes from the last finished chunk.
3. ``catch_up``: the helper peer is enabled and shipped by ordinary cycles from the positions its queues
   got at step 1. Under the peer's own ship lease (its cycles stop), a consistency token is taken on the
   helper and its cycles run until the token is satisfied: every edit of the seeded tables written before
   then is on the peer, including everything the peer's cycles skipped. Then the mark and the helper
   (with its queues) are removed and the lease released: the peer ships those tables from there.
   Edits applied twice (by the copy and the helper, or the helper and the peer) are harmless: cells are
   versioned and the helper replays in WAL order after the copy.
4. ``verify_seed``: VerifyReplication of every seeded table over the cells written before the token.

Departure: with a real HBase source (a shadow peer), HBase's snapshot and ExportSnapshot are the tools;
``start_seed`` refuses such a source with that one line (see the note in README's "With your HBase cluster").
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from replication.cluster.info import NoClusterInfo, read_cluster_info
from replication.cluster.source_cluster import SourceCluster, open_source
from replication.consistency import check_token, take_token
from replication.errors import HbrepError
from replication.fs import get_filesystem
from replication.source import lease
from replication.source.filters import table_name_str
from replication.source_tables import source_table
from replication.sync_table import SyncOptions
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.semantics import LATEST_TIMESTAMP
from replication.tls import zk_client_tls
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage, check_peer_id
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.seed_marks import (
    SeedMark,
    chunk_done,
    delete_seed,
    helper_peer_id,
    read_seed,
    write_seed,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from replication.config import Config

LOG = logging.getLogger(__name__)

DEFAULT_CHUNKS = 8
SAMPLED_ROWS_PER_CHUNK = 200


class SeedError(HbrepError):
    """A seed that cannot start, go on or finish (the message names what and what to do)."""


@dataclass
class SeedReport:
    """One seed: what was created and copied, how the helper caught up, and the final verify."""

    peer_id: str
    tables: list[str]
    created_on_peer: list[str] = field(default_factory=list)
    chunks: dict[str, int] = field(default_factory=dict)
    copied_cells: dict[str, int] = field(default_factory=dict)
    resumed_chunks: int = 0
    catch_up_cycles: int = 0
    through_ms: int = 0
    verify: dict[str, dict[str, int]] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------------
# 1. start


def _normalized(tables: list[str]) -> list[str]:
    names = sorted({table_name_str(t.strip().encode()) for t in tables if t.strip()})
    if not names:
        raise SeedError("give at least one table to seed")
    return names


def _peer_registry(key: ClusterKey, conf: Config) -> TableRegistry | None:
    """The peer's table registry when it is an hbrep cluster, None for a real HBase peer."""
    auth = conf.get_str("hbrep.zk.auth") or None
    with connected(key, timeout=15.0, auth=auth, tls=zk_client_tls(conf)) as peer_zk:
        try:
            info = read_cluster_info(peer_zk, ZNodePaths(conf, parent=key.znode_parent))
        except NoClusterInfo:
            return None
    fs, root = get_filesystem(info.root)
    return TableRegistry(fs, root)


def ensure_tables_on_peer(conf: Config, config: ReplicationPeerConfig, descriptors: list[TableDescriptor]) -> list[str]:
    """Create each table the peer lacks with the source's descriptor; the tables created. A real HBase
    peer is not written to: a missing table there is a SeedError naming it (create it with HBase's shell)."""
    key = ClusterKey.parse(config.cluster_key)
    registry = _peer_registry(key, conf)
    created = []
    for desc in descriptors:
        if registry is None:
            continue  # a real HBase peer: repair's scan of the peer reports a missing table with its name
        if not registry.exists(desc.name):
            registry.create(desc)
            created.append(desc.name)
    return created


def _sample_boundaries(spark: Any, root: str, table: str, chunks: int) -> list[str]:
    """``chunks - 1`` row keys that cut the table's rows into about equal chunks (hex), from a sample."""
    from pyspark.sql import functions as F  # pyspark loads only when a seed runs

    from replication.tables.spark_views import scan

    if chunks <= 1:
        return []
    rows = scan(spark, root, table, ordered=False).select("row").distinct()
    total = rows.count()
    if total <= chunks:
        return []
    fraction = min(1.0, SAMPLED_ROWS_PER_CHUNK * chunks / total)
    sample = sorted(bytes(r["row"]) for r in rows.sample(fraction=fraction, seed=17).collect())
    if not sample:
        sample = sorted(bytes(r["row"]) for r in rows.orderBy(F.rand(17)).limit(chunks * 10).collect())
    edges = sorted({sample[len(sample) * k // chunks] for k in range(1, chunks)})
    return [e.hex() for e in edges]


def _helper_config(config: ReplicationPeerConfig, descriptors: list[TableDescriptor]) -> ReplicationPeerConfig:
    """The helper peer's configuration: the peer's cluster key and settings, only the seeded tables' families
    the peer replicates."""
    table_cfs = {}
    for desc in descriptors:
        name = desc.name if desc.namespace != "default" else desc.qualifier
        families = sorted(f for f, cf in desc.families.items() if cf.scope != 0 and config.need_to_replicate(name, f))
        if not families:
            raise SeedError(f"table {name} has no column family replicated to this peer: nothing to seed")
        table_cfs[name] = families
    return ReplicationPeerConfig(
        cluster_key=config.cluster_key, replicate_all=False, table_cfs=table_cfs, bandwidth=config.bandwidth,
        configuration=dict(config.configuration),
    )  # fmt: skip


def _wait_for_helper_queues(zk: KazooClient, source: SourceCluster, helper: str, timeout_s: float) -> None:
    """Block until every live region server of the source has a queue for the helper peer (its peer
    watcher adds one at the server's current WAL), or SeedError after ``timeout_s``."""
    queues = ReplicationQueueStorage(zk, source.paths)
    deadline = time.monotonic() + timeout_s
    while True:
        live = zk.get_children(source.paths.rs) if zk.exists(source.paths.rs) else []
        missing = [s for s in live if helper not in queues.get_all_queues(s)]
        if not missing:
            return
        if time.monotonic() > deadline:
            raise SeedError(f"region servers {missing} made no queue for the seed's helper peer {helper} "
                            f"within {timeout_s:.0f} s (are they running?)")  # fmt: skip
        time.sleep(0.2)


def check_seed_request(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str],
    *,
    cluster_key: str | None = None,
    chunks: int = DEFAULT_CHUNKS,
) -> list[str]:
    """The seed's tables, normalized, once the request is known to be good (no Spark needed): an hbrep
    source, the tables there, the peer there or a valid cluster key to add it, chunks >= 1. SeedError,
    UnknownTable, BadPeerId or a cluster-key error otherwise, one line each."""
    return _checked_request(zk, key, conf, peer_id, tables, cluster_key, chunks)[0]


def _checked_request(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str],
    cluster_key: str | None,
    chunks: int,
) -> tuple[list[str], SourceCluster, list[TableDescriptor]]:
    """check_seed_request's checks; also the source and the tables' descriptors they read."""
    names = _normalized(tables)
    if chunks < 1:
        raise SeedError(f"--chunks {chunks} must be >= 1")
    source = open_source(zk, key, conf)
    if source.is_real_hbase:
        raise SeedError(
            f"{key} is a real HBase source: seed its peer with HBase's snapshot and ExportSnapshot (hbrep seeds "
            "from hbrep clusters only)"
        )
    descriptors = [source_table(source, table) for table in names]
    storage = ReplicationPeerStorage(zk, source.paths)
    if not storage.peer_exists(peer_id):
        if not cluster_key:
            raise SeedError(f"peer {peer_id} does not exist: give its cluster key (--cluster-key) to add it")
        check_peer_id(peer_id)
        ClusterKey.parse(cluster_key)
    return names, source, descriptors


def start_seed(
    spark: Any,
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str],
    *,
    cluster_key: str | None = None,
    chunks: int = DEFAULT_CHUNKS,
    queue_timeout_s: float = 60.0,
) -> tuple[SeedMark, list[str]]:
    """Start (or find, to resume) the seed of ``tables`` on ``peer_id``; the mark and the tables created
    on the peer. The peer is added with ``cluster_key`` when it does not exist. SeedError, PeerNotFound,
    UnknownTable (one line each) before anything is changed."""
    names, source, descriptors = _checked_request(zk, key, conf, peer_id, tables, cluster_key, chunks)
    storage = ReplicationPeerStorage(zk, source.paths)
    mark = read_seed(zk, source.paths, peer_id)
    if mark is not None:
        if mark.tables != names:
            raise SeedError(
                f"a seed of peer {peer_id} for tables {mark.tables} is in progress: run it again with those tables "
                "to finish it"
            )
        LOG.info("seed of peer %s resumes: %d chunks left", peer_id, len(mark.chunks_left()))
        return mark, []
    if not storage.peer_exists(peer_id):
        storage.add_peer(peer_id, ReplicationPeerConfig(cluster_key=str(cluster_key)))
        LOG.info("peer %s added (%s)", peer_id, cluster_key)
    config = storage.get_peer_config(peer_id)
    helper = helper_peer_id(peer_id)
    helper_config = _helper_config(config, descriptors)
    created = ensure_tables_on_peer(conf, config, descriptors)
    if not storage.peer_exists(helper):
        storage.add_peer(helper, helper_config, enabled=False)
    _wait_for_helper_queues(zk, source, helper, queue_timeout_s)
    from replication.cluster.client import ClusterClient

    with ClusterClient(str(key), conf) as client:  # the boundaries are sampled from the table files
        for table in names:
            client.flush(table)
    boundaries = {t: _sample_boundaries(spark, source.root_uri, t, chunks) for t in names}
    mark = SeedMark(peer_id, names, boundaries, int(time.time() * 1000))
    write_seed(zk, source.paths, mark)
    LOG.info("seed of peer %s started: tables %s, chunks %s", peer_id, names, {t: mark.chunk_count(t) for t in names})
    return mark, created


# ---------------------------------------------------------------------------------------------------
# 2. copy


def copy_chunk(spark: Any, zk: KazooClient, key: ClusterKey, conf: Config, peer_id: str, table: str, chunk: int) -> int:
    """Make one chunk of ``table`` on the peer the source's, then record it finished; the cells written
    (0 for a chunk finished before: a resumed seed skips it)."""
    from replication.repair import prepare_repair, run_repair  # Spark's side: only when a chunk is copied

    paths = open_source(zk, key, conf).paths
    mark = read_seed(zk, paths, peer_id)
    if mark is None:
        raise SeedError(f"no seed of peer {peer_id} is in progress (start it with seed_peer)")
    if table not in mark.tables or not 0 <= chunk < mark.chunk_count(table):
        raise SeedError(f"the seed of peer {peer_id} has no chunk {chunk} of table {table}")
    if chunk in mark.done.get(table, []):
        return 0
    start_row, stop_row = mark.row_range(table, chunk)
    options = SyncOptions(start_row=start_row, stop_row=stop_row)
    # No deletes while the source keeps writing: a cell its scan missed (still in a memstore a flush did not
    # reach) but the peer already has would get a Delete marker, and a marker masks the same cell when the
    # helper replays it. Cells only the peer holds show in the final verify; `hbrep repair` removes them.
    job = prepare_repair(zk, key, conf, peer_id=peer_id, table=table, options=options, deletes=False)
    report = run_repair(spark, job, conf, check_after=False)
    cells = int(report.written.get("cells", 0))
    left = chunk_done(zk, paths, peer_id, table, chunk).chunks_left()
    LOG.info("seed of peer %s: table %s chunk %d/%d copied (%d cells written); %d chunks left", peer_id, table,
             chunk + 1, mark.chunk_count(table), cells, len(left))  # fmt: skip
    return cells


# ---------------------------------------------------------------------------------------------------
# 3. catch up


def catch_up(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    *,
    run_helper_cycle: Any,
    timeout_s: float = 600.0,
) -> tuple[int, int]:
    """Ship the helper peer until it holds everything the peer's cycles skipped, then end the seed (the
    mark and the helper removed; the peer ships the tables again). ``run_helper_cycle(helper_id)`` runs
    one ship cycle of the helper. Returns (cycles run, the token's time: every seeded edit written before
    it is on the peer). SeedError when the helper does not catch up within ``timeout_s``."""
    source = open_source(zk, key, conf)
    paths = source.paths
    mark = read_seed(zk, paths, peer_id)
    if mark is None:
        raise SeedError(f"no seed of peer {peer_id} is in progress (start it with seed_peer)")
    if mark.chunks_left():
        raise SeedError(f"the seed of peer {peer_id} has {len(mark.chunks_left())} chunks left to copy")
    storage = ReplicationPeerStorage(zk, paths)
    helper = mark.helper
    if mark.stage != "catching-up":
        mark.stage = "catching-up"
        write_seed(zk, paths, mark)
    if not storage.is_peer_enabled(helper):
        storage.set_peer_state(helper, True)
    deadline = time.monotonic() + timeout_s
    cycles = 0
    # Ship the helper freely first (most of the backlog), then stop the peer's cycles and finish.
    run_helper_cycle(helper)
    cycles += 1
    owner = f"hbrep-seed-{peer_id}-{os.getpid()}-{int(time.time() * 1000)}"
    while not lease.acquire(zk, paths, peer_id, owner):
        if time.monotonic() > deadline:
            raise SeedError(f"peer {peer_id}'s ship lease stayed held for {timeout_s:.0f} s: the seed cannot finish")
        lease.wait_free(zk, paths, [peer_id], owner, timeout_s=min(5.0, max(0.1, deadline - time.monotonic())))
    try:
        record = take_token(zk, key, conf, helper)
        while True:
            result = check_token(zk, key, conf, record.token)
            if result.consistent:
                break
            if time.monotonic() > deadline:
                raise SeedError(
                    f"the seed's helper peer {helper} did not catch up within {timeout_s:.0f} s "
                    f"({len(result.pending)} WALs pending); run the seed again to go on"
                )
            run_helper_cycle(helper)
            cycles += 1
        delete_seed(zk, paths, peer_id)
        storage.remove_peer(helper)
    finally:
        lease.release(zk, paths, peer_id, owner)
    LOG.info("seed of peer %s caught up in %d cycles; its tables ship with the peer again", peer_id, cycles)
    return cycles, record.created_ms


def wait_for_peer(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str],
    *,
    run_cycle: Any,
    timeout_s: float = 600.0,
) -> int:
    """After the catch-up, until the peer itself has shipped the seeded tables' edits written up to now
    (a consistency token on the peer): an edit stamped before the helper's token but appended just after it
    is the peer's to ship, and the verify must not race it. ``run_cycle(peer_id)`` ships the peer once (a
    cycle that finds the peer leased by its DAG's run just waits for it). Returns the cycles run."""
    record = take_token(zk, key, conf, peer_id, tables)
    deadline = time.monotonic() + timeout_s
    cycles = 0
    while not check_token(zk, key, conf, record.token).consistent:
        if time.monotonic() > deadline:
            raise SeedError(f"peer {peer_id} did not ship the seeded tables' latest edits within {timeout_s:.0f} s")
        run_cycle(peer_id)
        cycles += 1
    return cycles


# ---------------------------------------------------------------------------------------------------
# 4. verify, and the whole seed


def verify_seed(
    spark: Any, zk: KazooClient, key: ClusterKey, conf: Config, peer_id: str, tables: list[str], through_ms: int
) -> dict[str, dict[str, int]]:
    """VerifyReplication of each seeded table over the cells written before ``through_ms``; SeedError
    naming the tables with BADROWS > 0."""
    from replication.peer_checks import verify_replication  # Spark's side

    counters = {}
    for table in _normalized(tables):
        end = through_ms if through_ms else LATEST_TIMESTAMP
        result = verify_replication(spark, zk, key, conf, peer_id=peer_id, table=table, end_ms=end)
        counters[table] = dict(result.counters)
    bad = {t: c["BADROWS"] for t, c in counters.items() if c.get("BADROWS")}
    if bad:
        raise SeedError(f"VerifyReplication after the seed of peer {peer_id}: BADROWS {bad}")
    return counters


def seed_peer(
    spark: Any,
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str],
    *,
    cluster_key: str | None = None,
    chunks: int = DEFAULT_CHUNKS,
    timeout_s: float = 600.0,
) -> SeedReport:
    """The whole seed in this process: start (or resume), copy every chunk left, catch up, verify."""
    from replication.jobs.launch import runner_for
    from replication.source.cycle import run_cycle

    started = time.monotonic()
    mark, created = start_seed(spark, zk, key, conf, peer_id, tables, cluster_key=cluster_key, chunks=chunks)
    report = SeedReport(peer_id, mark.tables, created, {t: mark.chunk_count(t) for t in mark.tables})
    report.resumed_chunks = sum(len(v) for v in mark.done.values())
    for table, chunk in mark.chunks_left():
        report.copied_cells[table] = report.copied_cells.get(table, 0) + copy_chunk(
            spark, zk, key, conf, peer_id, table, chunk
        )
    runner = runner_for(conf, spark)

    def helper_cycle(peer: str) -> None:
        run_cycle(zk, key, conf, runner=runner, peer_ids=[peer])

    report.catch_up_cycles, report.through_ms = catch_up(
        zk, key, conf, peer_id, run_helper_cycle=helper_cycle, timeout_s=timeout_s
    )
    wait_for_peer(zk, key, conf, peer_id, mark.tables, run_cycle=helper_cycle, timeout_s=timeout_s)
    report.verify = verify_seed(spark, zk, key, conf, peer_id, mark.tables, report.through_ms)
    report.elapsed_s = round(time.monotonic() - started, 3)
    return report
