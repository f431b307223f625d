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
   the differing cells written as replicated edits with the source's cluster id; a range the peer holds
   nothing of, as on a first copy, skips the hashing and writes every source cell); the finished chunk is
   recorded in the mark, so a seed that crashed resumes from the last finished chunk.
3. ``catch_up``: the helper peer is enabled and shipped by ordinary cycles from the positions its queues
   got at step 1. Under the peer's own ship lease (its cycles stop), a consistency token is taken on the
   helper and its cycles run until the token is satisfied: every edit of the seeded tables written before
   then is on the peer, including everything the peer's cycles skipped. Then the mark and the helper
   (with its queues) are removed and the lease released: the peer ships those tables from there.
   Edits applied twice (by the copy and the helper, or the helper and the peer) are harmless: cells are
   versioned and the helper replays in WAL order after the copy.
4. ``verify_seed``: VerifyReplication of every seeded table over the cells written before the token.

Between real HBase clusters (a real HBase source whose peer is a shadow peer to another real HBase), the
copy is HBase's own: ``seed_snapshot.py`` takes a snapshot of each table on the source, copies it into the
peer's ``hbase.rootdir`` with ExportSnapshot and clones (or restores) it there; each table is one chunk.
The helper peer is then a shadow peer too (added through HBase's Admin, held DISABLED, shipped by hbrep).
A real HBase source with an hbrep peer is refused with one line: ExportSnapshot copies HBase's files, which
an hbrep cluster does not read.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from replication.checks.verify import PEER_THRIFT_KEY, replicated_families, resolve_target
from replication.cluster.hbase_source import read_hbase_source
from replication.cluster.info import NoClusterInfo, read_cluster_info
from replication.cluster.source_cluster import SourceCluster, open_source
from replication.cluster.source_tables import source_table
from replication.errors import HbrepError
from replication.fs import get_filesystem
from replication.hbase.shadow_peers import add_shadow_peer, remove_shadow_peer
from replication.jobs.launch import runner_for
from replication.operations.consistency import check_token, take_token
from replication.operations.seed_snapshot import SnapshotCopier, create_table, snapshot_name, table_exists
from replication.operations.sync_table import SyncOptions
from replication.source.cycle import run_cycle
from replication.source.filters import table_name_str
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.semantics import LATEST_TIMESTAMP
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.layout import ZNodePaths
from replication.zk.lease import ShipLease
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
from replication.zk.shadow_peer import SHADOW_KEY, is_shadow_peer

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
    with connected(key, timeout=15.0, **zk_options(conf)) as peer_zk:
        try:
            info = read_cluster_info(peer_zk, ZNodePaths(conf, parent=key.znode_parent))
        except NoClusterInfo:
            return None
    fs, root = get_filesystem(info.root)
    return TableRegistry(fs, root)


def ensure_tables_on_peer(conf: Config, config: ReplicationPeerConfig, descriptors: list[TableDescriptor]) -> list[str]:
    """Create each table the peer lacks with the source's descriptor (families, their scopes and versions);
    the tables created. An hbrep peer's registry is written; a real HBase peer is asked through its Admin."""
    key = ClusterKey.parse(config.cluster_key)
    registry = _peer_registry(key, conf)
    created = []
    for desc in descriptors:
        if registry is None:
            if not table_exists(key, desc.name, conf):
                create_table(key, desc, conf)
                created.append(desc.name)
        elif not registry.exists(desc.name):
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
        families = replicated_families(config, desc)
        if not families:
            raise SeedError(f"table {desc.name} has no column family replicated to this peer: nothing to seed")
        table_cfs[desc.name] = families
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
        live = LiveServerStorage(zk, source.paths).live()
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
    peer_rootdir: str | None = None,
) -> list[str]:
    """The seed's tables, normalized, once the request is known to be good (no Spark needed): the tables on
    the source, the peer there or a valid cluster key to add it, chunks >= 1; from a real HBase source, a
    real HBase peer that hbrep ships (a shadow peer) and its rootdir. SeedError, UnknownTable, BadPeerId or
    a cluster-key error otherwise, one line each."""
    return _checked_request(zk, key, conf, peer_id, tables, cluster_key, chunks, peer_rootdir)[0]


def seed_roots(
    zk: KazooClient, key: ClusterKey, conf: Config, peer_id: str, cluster_key: str | None = None
) -> tuple[str, ...]:
    """The roots whose table files a seed of ``peer_id`` (a request check_seed_request accepted) reads through
    Spark: the source's and the peer's (the cluster ``cluster_key`` names when the peer does not exist yet);
    the source's alone when ZooKeeper has no root of the new peer's; none from a real HBase source (HBase's
    snapshot tools copy, no Spark reads)."""
    source = open_source(zk, key, conf)
    if source.is_real_hbase:
        return ()
    storage = ReplicationPeerStorage(zk, source.paths)
    peer = peer_id if storage.peer_exists(peer_id) else str(cluster_key)
    try:
        target = resolve_target(zk, key, conf, peer)
    except NoClusterInfo:
        return (source.root_uri,)
    return (target.source_root, target.peer_root)


def _checked_request(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str],
    cluster_key: str | None,
    chunks: int,
    peer_rootdir: str | None = None,
) -> tuple[list[str], SourceCluster, list[TableDescriptor]]:
    """check_seed_request's checks; also the source and the tables' descriptors they read."""
    names = _normalized(tables)
    if chunks < 1:
        raise SeedError(f"--chunks {chunks} must be >= 1")
    source = open_source(zk, key, conf)
    if peer_rootdir and not source.is_real_hbase:
        raise SeedError(f"--peer-rootdir is for a seed from a real HBase source (ExportSnapshot); {key} is hbrep's")
    descriptors = [source_table(source, table) for table in names]
    storage = ReplicationPeerStorage(zk, source.paths)
    if storage.peer_exists(peer_id):
        config = storage.get_peer_config(peer_id)
    else:
        if not cluster_key:
            raise SeedError(f"peer {peer_id} does not exist: give its cluster key (--cluster-key) to add it")
        check_peer_id(peer_id)
        ClusterKey.parse(cluster_key)
        config = None
    if source.is_real_hbase:
        _check_snapshot_seed(zk, source, conf, peer_id, config, peer_rootdir)
    return names, source, descriptors


def _check_snapshot_seed(
    zk: KazooClient, source: SourceCluster, conf: Config, peer_id: str, config: ReplicationPeerConfig | None,
    peer_rootdir: str | None,
) -> None:  # fmt: skip
    """A seed from a real HBase source: the peer is a shadow peer to a real HBase, whose rootdir is given, and
    both Thrift servers are on record (the final VerifyReplication reads both tables through them)."""
    if config is None:
        raise SeedError(
            f"peer {peer_id} does not exist on the real HBase source {source.key}: add it first with add_peer "
            f"--shadow (and --config {PEER_THRIFT_KEY}=HOST:PORT, its Thrift server)"
        )
    if not is_shadow_peer(config):
        raise SeedError(
            f"peer {peer_id} is shipped by HBase itself, not hbrep (no {SHADOW_KEY}=true): seed it with HBase's "
            "recipe, or add the peer with add_peer --shadow"
        )
    peer_key = ClusterKey.parse(config.cluster_key)
    if _peer_registry(peer_key, conf) is not None:
        raise SeedError(
            f"peer {peer_id} ({peer_key}) is an hbrep cluster: a seed from a real HBase source copies HBase's files "
            "with ExportSnapshot, so its peer must be a real HBase cluster"
        )
    if not peer_rootdir:
        raise SeedError(
            f"a seed from a real HBase source needs the peer's hbase.rootdir (--peer-rootdir): ExportSnapshot "
            f"copies the snapshot there for peer {peer_id}"
        )
    registered = read_hbase_source(zk, source.paths)
    if registered is None or not registered.thrift:
        raise SeedError(
            f"the real HBase source {source.key} has no Thrift server on record (add_peer --shadow --thrift "
            "HOST:PORT): the seed's VerifyReplication reads the source through it"
        )
    if not config.configuration.get(PEER_THRIFT_KEY):
        raise SeedError(
            f"peer {peer_id} has no {PEER_THRIFT_KEY} (its Thrift server): the seed's VerifyReplication reads the "
            "peer through it (set it with update_peer_config)"
        )


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
    peer_rootdir: str | None = None,
) -> tuple[SeedMark, list[str]]:
    """Start (or find, to resume) the seed of ``tables`` on ``peer_id``; the mark and the tables created
    on the peer (for a seed by snapshot: those the peer lacks, which the restore will create). The peer is
    added with ``cluster_key`` when it does not exist. SeedError, PeerNotFound, UnknownTable (one line
    each) before anything is changed."""
    names, source, descriptors = _checked_request(zk, key, conf, peer_id, tables, cluster_key, chunks, peer_rootdir)
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
    if source.is_real_hbase:
        return _start_snapshot_seed(
            zk, key, conf, source, peer_id, names, descriptors, str(peer_rootdir), queue_timeout_s
        )
    adding = not storage.peer_exists(peer_id)
    config = ReplicationPeerConfig(cluster_key=str(cluster_key)) if adding else storage.get_peer_config(peer_id)
    # The tables first: once the peer exists its own cycles ship, and until the seed's mark is written they do
    # not skip these tables, so a table the peer lacked would fail their sink ("unknown table").
    created = ensure_tables_on_peer(conf, config, descriptors)
    if adding:
        storage.add_peer(peer_id, config)
        LOG.info("peer %s added (%s)", peer_id, cluster_key)
        config = storage.get_peer_config(peer_id)
    helper = helper_peer_id(peer_id)
    helper_config = _helper_config(config, descriptors)
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


def _start_snapshot_seed(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    source: SourceCluster,
    peer_id: str,
    names: list[str],
    descriptors: list[TableDescriptor],
    peer_rootdir: str,
    queue_timeout_s: float,
) -> tuple[SeedMark, list[str]]:
    """start_seed between real HBase clusters: the helper is a shadow peer added through HBase's Admin, like the
    peer (HBase queues their WALs, hbrep ships them); each table is one chunk, copied by snapshot."""
    storage = ReplicationPeerStorage(zk, source.paths)
    config = storage.get_peer_config(peer_id)
    helper = helper_peer_id(peer_id)
    peer_key = ClusterKey.parse(config.cluster_key)
    missing = [d.name for d in descriptors if not table_exists(peer_key, d.name, conf)]
    if not storage.peer_exists(helper):
        add_shadow_peer(key, zk, source.paths, helper, _helper_config(config, descriptors), None, conf=conf)
    _wait_for_helper_queues(zk, source, helper, queue_timeout_s)
    mark = SeedMark(peer_id, names, {t: [] for t in names}, int(time.time() * 1000), method="snapshot",
                    peer_rootdir=peer_rootdir)  # fmt: skip
    write_seed(zk, source.paths, mark)
    LOG.info("seed of peer %s started by snapshot: tables %s (missing on the peer: %s)", peer_id, names, missing)
    return mark, missing


# ---------------------------------------------------------------------------------------------------
# 2. copy


def copy_chunk(
    spark: Any,
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    table: str,
    chunk: int,
    *,
    copier: SnapshotCopier | None = None,
) -> int:
    """Make one chunk of ``table`` on the peer the source's, then record it finished; the cells written
    (0 for a chunk finished before: a resumed seed skips it). ``spark`` may be None for a seed by snapshot,
    which needs ``copier`` (HBase's snapshot tools; SeedError without one)."""
    from replication.operations.repair import prepare_repair, run_repair  # Spark's side: only when a chunk is copied

    source = open_source(zk, key, conf)
    paths = source.paths
    mark = read_seed(zk, paths, peer_id)
    if mark is None:
        raise SeedError(f"no seed of peer {peer_id} is in progress (start it with seed_peer)")
    if table not in mark.tables or not 0 <= chunk < mark.chunk_count(table):
        raise SeedError(f"the seed of peer {peer_id} has no chunk {chunk} of table {table}")
    if chunk in mark.done.get(table, []):
        return 0
    if mark.method == "snapshot":
        return _copy_by_snapshot(zk, key, source, mark, table, copier)
    start_row, stop_row = mark.row_range(table, chunk)
    options = SyncOptions(start_row=start_row, stop_row=stop_row)
    # No deletes while the source keeps writing: a cell its scan missed (still in a memstore a flush did not
    # reach) but the peer already has would get a Delete marker, and a marker masks the same cell when the
    # helper replays it. Cells only the peer holds show in the final verify; `hbrep repair` removes them.
    job = prepare_repair(zk, key, conf, peer_id=peer_id, table=table, options=options, deletes=False)
    report = run_repair(spark, job, conf, check_after=False, empty_peer_shortcut=True)
    cells = int(report.written.get("cells", 0))
    left = chunk_done(zk, paths, peer_id, table, chunk).chunks_left()
    LOG.info("seed of peer %s: table %s chunk %d/%d copied (%d cells written); %d chunks left", peer_id, table,
             chunk + 1, mark.chunk_count(table), cells, len(left))  # fmt: skip
    return cells


def _copy_by_snapshot(
    zk: KazooClient, key: ClusterKey, source: SourceCluster, mark: SeedMark, table: str, copier: SnapshotCopier | None
) -> int:
    """One table of a seed between real HBase clusters: HBase's snapshot, ExportSnapshot, clone or restore
    (``seed_snapshot.py``); recorded finished. Returns 0: HBase copies files, it counts no cells."""
    if copier is None:
        raise SeedError(
            f"the seed of peer {mark.peer_id} copies {table} with HBase's snapshot tools (ExportSnapshot, Java): "
            "run it with hbrep seed_peer or the hbrep_seed_peer DAG, which hand them in"
        )
    peer_key = ClusterKey.parse(ReplicationPeerStorage(zk, source.paths).get_peer_config(mark.peer_id).cluster_key)
    name = snapshot_name(mark.peer_id, table, mark.started_ms)
    started = time.monotonic()
    action = copier.copy_table(key, source.root_uri, peer_key, mark.peer_rootdir, table, name)
    chunk_done(zk, source.paths, mark.peer_id, table, 0)
    LOG.info("seed of peer %s: table %s %s on the peer from snapshot %s in %.1f s", mark.peer_id, table, action,
             name, time.monotonic() - started)  # fmt: skip
    return 0


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
    shadow_helper = is_shadow_peer(storage.get_peer_config(helper))
    if not shadow_helper and not storage.is_peer_enabled(helper):
        storage.set_peer_state(helper, True)  # a shadow helper ships while HBase holds it DISABLED
    deadline = time.monotonic() + timeout_s
    cycles = 0
    # Ship the helper freely first (most of the backlog), then stop the peer's cycles and finish.
    run_helper_cycle(helper)
    cycles += 1
    owner = f"hbrep-seed-{peer_id}-{os.getpid()}-{int(time.time() * 1000)}"
    peer_lease = ShipLease(zk, paths, peer_id, owner)
    while not peer_lease.acquire():
        if time.monotonic() > deadline:
            raise SeedError(f"peer {peer_id}'s ship lease stayed held for {timeout_s:.0f} s: the seed cannot finish")
        peer_lease.wait_free(timeout_s=min(5.0, max(0.1, deadline - time.monotonic())))
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
        if shadow_helper:
            remove_shadow_peer(key, helper, conf)  # through HBase's Admin: HBase drops the helper's queues
        else:
            storage.remove_peer(helper)
    finally:
        peer_lease.release()
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
    """VerifyReplication of each seeded table, over the families replicated to the peer and the cells written
    before ``through_ms``; SeedError naming the tables with BADROWS > 0 and their first bad rows."""
    from replication.checks.peer_checks import verify_replication  # Spark's side
    from replication.checks.verify import VerifyOptions

    source = open_source(zk, key, conf)
    config = ReplicationPeerStorage(zk, source.paths).get_peer_config(peer_id)
    counters, first_bad = {}, {}
    for table in _normalized(tables):
        # Only the replicated families: a seed by snapshot copies the whole table (HBase's files), so the
        # peer holds a scope-0 family's cells up to the snapshot and none written after it.
        options = VerifyOptions(end_time=through_ms or LATEST_TIMESTAMP, verbose=True, max_listed_bad_rows=3,
                                families=replicated_families(config, source_table(source, table)))  # fmt: skip
        result = verify_replication(spark, zk, key, conf, peer_id=peer_id, table=table, options=options)
        counters[table] = dict(result.counters)
        first_bad[table] = [f"{b.row!r} ({b.counter})" for b in result.bad_rows]
    bad = {t: c["BADROWS"] for t, c in counters.items() if c.get("BADROWS")}
    if bad:
        rows = "; ".join(f"{t}: {', '.join(first_bad[t])}" for t in bad)
        raise SeedError(f"VerifyReplication after the seed of peer {peer_id}: BADROWS {bad} (first bad rows {rows})")
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
    peer_rootdir: str | None = None,
    copier: SnapshotCopier | None = None,
) -> SeedReport:
    """The whole seed in this process: start (or resume), copy every chunk left, catch up, verify.
    ``copier``: HBase's snapshot tools, for a seed between real HBase clusters."""
    started = time.monotonic()
    mark, created = start_seed(spark, zk, key, conf, peer_id, tables, cluster_key=cluster_key, chunks=chunks,
                               peer_rootdir=peer_rootdir)  # fmt: skip
    report = SeedReport(peer_id, mark.tables, created, {t: mark.chunk_count(t) for t in mark.tables})
    report.resumed_chunks = sum(len(v) for v in mark.done.values())
    for table, chunk in mark.chunks_left():
        report.copied_cells[table] = report.copied_cells.get(table, 0) + copy_chunk(
            spark, zk, key, conf, peer_id, table, chunk, copier=copier
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
