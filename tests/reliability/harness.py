"""Helpers shared by the topology and reliability tests: clusters, tables, peers, cycles, verification.

Everything here drives real parts: region-server processes, the session ZooKeeper, the ship cycle in
the session's local[2] Spark, VerifyReplication in Spark. Sizes follow ``HBREP_CHAOS_LONG``: the short
form (``make test``) writes a few hundred rows per scenario, the long form (``make chaos``) more rows
and more rounds.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Sequence

from replication.checks.verify import VerifyOptions, VerifyResult, verify_tables
from replication.cluster.embedded import EmbeddedCluster, start_cluster
from replication.config import Config
from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import CycleReport, QueueCycle, run_cycle
from replication.source.filters import table_name_str
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType, Entry
from replication.wal.names import is_wal_name, old_wal_dir
from replication.wal.reader import open_wal
from replication.zk.client import connected
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

LONG = os.environ.get("HBREP_CHAOS_LONG", "") == "1"
ROWS = 2000 if LONG else 200  # rows written per scenario round
ROUNDS = 3 if LONG else 1  # rounds of each chaos scenario

# Small retry numbers so failing cycles fail fast; small WAL blocks so WALs roll during a load.
CHAOS_CONF = {
    "replication.source.sleepforretries": "50",
    "replication.source.maxretriesmultiplier": "4",
    "hbrep.source.ship.max.attempts": "4",
    "replication.sleep.before.failover": "0",
    "hbase.regionserver.hlog.blocksize": str(256 * 1024),
    "hbase.regionserver.optionalcacheflushinterval": "0",
    "zookeeper.session.timeout": "4000",
}
REPLICATED, LOCAL = "f1", "f0"


def chaos_conf(**extra: str) -> Config:
    """The tests' Config (``Config.load(env={})`` + CHAOS_CONF + ``extra``)."""
    return Config.load(env={}, overrides={**CHAOS_CONF, **extra})


def new_cluster(zk_server, tmp_path_factory, name: str, regionservers: int, conf: Config) -> EmbeddedCluster:
    """Start an embedded cluster ``/<name>-<random>`` with ``regionservers`` processes on a fresh root."""
    key = f"127.0.0.1:{zk_server.port}:/{name}-{uuid.uuid4().hex[:8]}"
    return start_cluster(key, str(tmp_path_factory.mktemp(name)), regionservers, conf=conf, name=name)


def key_of(cluster: EmbeddedCluster) -> ClusterKey:
    return ClusterKey.parse(cluster.cluster_key)


def paths_of(cluster: EmbeddedCluster) -> ZNodePaths:
    return ZNodePaths(cluster.conf, parent=key_of(cluster).znode_parent)


def cluster_id(cluster: EmbeddedCluster) -> uuid.UUID:
    """The cluster's id (``<parent>/hbaseid``)."""
    return read_cluster_id(cluster.zk, paths_of(cluster))


def create_table(clusters: Iterable[EmbeddedCluster], table: str, families: Sequence[tuple[str, int]] = ()) -> None:
    """Create ``table`` on every cluster: by default one replicated (f1, scope 1) and one local family (f0)."""
    families = families or ((REPLICATED, 1), (LOCAL, 0))
    for cluster in clusters:
        fs, root = get_filesystem(cluster.root)
        desc = TableDescriptor.of(table, *[ColumnFamilyDescriptor(f, scope=s) for f, s in families])
        TableRegistry(fs, root).create(desc)


def new_table(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


def add_peer(
    source: EmbeddedCluster,
    peer_id: str,
    peer: EmbeddedCluster,
    *,
    enabled: bool = True,
    table_cfs: dict[str, list[str]] | None = None,
    bandwidth: int = 0,
) -> None:
    """``add_peer`` on ``source`` for ``peer`` (replicate all, or only ``table_cfs``)."""
    config = ReplicationPeerConfig(
        cluster_key=peer.cluster_key,
        replicate_all=table_cfs is None,
        table_cfs=table_cfs,
        bandwidth=bandwidth,
    )
    ReplicationPeerStorage(source.zk, paths_of(source)).add_peer(peer_id, config, enabled=enabled)


def has_queue(cluster: EmbeddedCluster, peer_id: str) -> bool:
    """True once every region server started by ``cluster`` has a queue for ``peer_id``."""
    paths = paths_of(cluster)
    return all(cluster.zk.exists(paths.queue(server, peer_id)) for server in cluster.servers)


def set_peer_state(source: EmbeddedCluster, peer_id: str, enabled: bool) -> None:
    ReplicationPeerStorage(source.zk, paths_of(source)).set_peer_state(peer_id, enabled)


def cycle(source: EmbeddedCluster, spark, conf: Config | None = None, **kwargs) -> CycleReport:  # type: ignore[no-untyped-def]
    """One ship cycle of ``source`` (snapshot → ship in the given Spark session → commit)."""
    with connected(key_of(source)) as zk:
        conf = conf or source.conf
        return run_cycle(zk, key_of(source), conf, runner=runner_for(conf, spark), **kwargs)


def shipped_rows(report: CycleReport, peer_id: str | None = None) -> int:
    """Rows (HBase's shippedOps) a cycle shipped, to one peer or all."""
    return sum(p.rows_shipped for pid, p in report.peers.items() if peer_id is None or pid == peer_id)


def failed_queues(report: CycleReport) -> list[QueueCycle]:
    return [q for q in report.queues if q.status not in ("ok", "disabled")]


def drain(source: EmbeddedCluster, spark, *, max_cycles: int = 8, conf: Config | None = None) -> list[CycleReport]:
    """Run cycles until one ships nothing with every queue ok; return all reports (AssertionError if never)."""
    reports = []
    for _ in range(max_cycles):
        report = cycle(source, spark, conf)
        reports.append(report)
        if shipped_rows(report) == 0 and not failed_queues(report) and not report.busy_peers:
            return reports
    raise AssertionError(f"replication did not settle in {max_cycles} cycles: {reports[-1].queues}")


def row_cells(start: int, count: int, *, tag: str = "r", value: str = "v", ts: int | None = None) -> list[Cell]:
    """Rows ``<tag><start..start+count>``: one replicated cell and one local cell each."""
    cells = []
    for i in range(start, start + count):
        row = f"{tag}{i:06d}".encode()
        stamp = ts if ts is not None else 1_000_000 + i
        cells.append(Cell(row, REPLICATED.encode(), b"q", stamp, int(CellType.PUT), f"{value}{i}".encode()))
        cells.append(Cell(row, LOCAL.encode(), b"q", stamp, int(CellType.PUT), b"local"))
    return cells


def write_rows(cluster: EmbeddedCluster, table: str, start: int, count: int, *, batch: int = 50, **kw) -> int:  # type: ignore[no-untyped-def]
    """Write rows in client batches of ``batch`` rows; return the number of rows acknowledged."""
    done = 0
    with cluster.client() as client:
        for first in range(start, start + count, batch):
            n = min(batch, start + count - first)
            client.batch(table, row_cells(first, n, **kw))
            done += n
    return done


def flush(cluster: EmbeddedCluster, table: str) -> None:
    with cluster.client() as client:
        client.flush(table)


def verify(spark, source: EmbeddedCluster, peer: EmbeddedCluster, table: str) -> VerifyResult:  # type: ignore[no-untyped-def]
    """VerifyReplication of the replicated family after flushing both sides' memstores."""
    flush(source, table)
    flush(peer, table)
    options = VerifyOptions(families=[REPLICATED], verbose=True, max_listed_bad_rows=20)
    return verify_tables(spark, source.root, peer.root, table, options)


def row_keys(spark, cluster: EmbeddedCluster, table: str) -> set[bytes]:  # type: ignore[no-untyped-def]
    """The row keys of ``table``'s replicated family on ``cluster`` (after a flush), as a set."""
    from replication.tables.spark_views import scan

    flush(cluster, table)
    return {bytes(r.row) for r in scan(spark, cluster.root, table, families=[REPLICATED]).select("row").collect()}


def queue_state(source: EmbeddedCluster) -> dict:
    """Every queue of ``source``: ``{replicator: {queue id: {wal: position}}}``."""
    return ReplicationQueueStorage(source.zk, paths_of(source)).snapshot().as_dict()


def wal_paths(cluster: EmbeddedCluster) -> list[str]:
    """Every WAL file of the cluster (all servers' WALs/ directories and oldWALs/)."""
    out = []
    for base, _dirs, files in os.walk(os.path.join(cluster.root, "WALs")):
        out += [os.path.join(base, f) for f in files]
    old = old_wal_dir(cluster.root)
    if os.path.isdir(old):
        out += [os.path.join(old, f) for f in os.listdir(old) if is_wal_name(f)]
    return sorted(out)


def wal_entries(cluster: EmbeddedCluster, table: str) -> list[Entry]:
    """Every whole WAL entry of ``table`` in the cluster's WALs (live and archived)."""
    out = []
    for path in wal_paths(cluster):
        with open_wal(path) as reader:
            out += [item.entry for item in reader if table_name_str(item.entry.key.table_name) == table]
    return out


def replicated_cells_by_origin(cluster: EmbeddedCluster, table: str) -> dict[tuple, int]:
    """Replicated-family cells in ``cluster``'s WALs of ``table``, counted per cluster-id list of their key."""
    counts: dict[tuple, int] = {}
    for entry in wal_entries(cluster, table):
        n = sum(1 for c in entry.cells if c.family == REPLICATED.encode())
        if n:
            ids = tuple(entry.key.cluster_ids)
            counts[ids] = counts.get(ids, 0) + n
    return counts


def wait_for(predicate, timeout: float = 30.0, what: str = "condition") -> None:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` every 50 ms until true; AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


# -- chaos helpers ------------------------------------------------------------------------------------


def throttled(conf: Config, seconds: float, rows: int) -> Config:
    """A Config whose ship path takes about ``seconds`` for ``rows`` rows (per-peer bandwidth shared by the
    peer's queues, ``hbrep.source.bandwidth.split``, so the whole cluster's ship is paced; small batches)."""
    # One replicated cell of row_cells() as the throttler counts it: a pass of 200 rows counted 7,490 bytes
    # (the old estimate, 110, made every pass about 3x shorter than asked, and a kill could land after it).
    row_bytes = 37
    bandwidth = max(1024, int(rows * row_bytes / max(seconds, 0.1)))
    return conf.with_overrides(
        {
            "replication.source.per.peer.node.bandwidth": str(bandwidth),
            "hbrep.source.bandwidth.split": "true",
            "replication.source.size.capacity": "2048",
        }
    )


def peer_writes(cluster: EmbeddedCluster) -> int:
    """Mutations the cluster's live servers have applied so far (their ``write_count`` summed)."""
    total = 0
    with cluster.client() as client:
        for server in cluster.servers:
            try:
                total += int(client.server_info(server)["write_count"])
            except Exception:  # a server being killed right now
                continue
    return total


def ensure_servers(cluster: EmbeddedCluster, count: int) -> list[str]:
    """Start region servers until ``count`` of this cluster's processes run; return the new names."""
    started = []
    while len(cluster.servers) < count:
        started.append(cluster.start_region_server())
    return started


def fail_over(source: EmbeddedCluster, *, timeout: float = 60.0) -> list[dict]:
    """Run ``failover_once`` until no dead server of ``source`` has queues or WALs left; return its actions."""
    from replication.failover import failover_once

    actions: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        with connected(key_of(source)) as zk:
            report = failover_once(zk, key_of(source), source.conf)
        pending = [s for s in report.servers if s.action not in ("claimed", "nothing-to-claim")]
        actions += [{"server": s.server, "action": s.action, "error": s.error} for s in report.servers]
        if not pending:
            return actions
        if time.monotonic() > deadline:
            raise AssertionError(f"failover did not finish in {timeout:.0f}s: {pending}")
        time.sleep(0.5)


def expire_session(zk, hosts: str) -> None:  # type: ignore[no-untyped-def]
    """Expire ``zk``'s session: a second client opened with the same session id and password, then closed."""
    from kazoo.client import KazooClient
    from kazoo.protocol.states import KazooState

    states: list[str] = []
    zk.add_listener(lambda state: states.append(state))
    session_id, password = zk.client_id
    other = KazooClient(hosts=hosts, client_id=(session_id, password))
    other.start(timeout=15)
    other.stop()
    other.close()
    wait_for(lambda: KazooState.LOST in states, 20.0, "the session to be reported lost")
