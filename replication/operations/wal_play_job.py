"""``hbrep wal play`` as a Spark job: the WAL files spread over tasks, each file replayed whole, in order, by one.

The target is a cluster key: an hbrep cluster or a real HBase 2.x (told apart as the ship path tells its
peers apart, ``source/peer_protocol.py``). The replayed entries go out as ReplicateWALEntry batches through
the ship path's endpoint (``replication_source.open_peer_endpoint``: sink choice, retries, hbrep's or
HBase's RPC), each WALKey naming the target table and no cluster id, so the target writes them as its own
new edits (as WALPlayer's Puts and Deletes through a client are) and replicates them on to its peers.
Cells keep their timestamps and types; a replay run twice gives the same table (cells are versioned).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import asdict
from functools import partial
from typing import Any

from replication.cluster.errors import NoClusterInfo
from replication.cluster.info import read_cluster_info
from replication.config import Config
from replication.fs import get_filesystem
from replication.hbase.table_client import HBaseTableClient
from replication.operations.sync_writer import replicate_in_batches
from replication.operations.wal_play import PlayCounters, TableMap, TimeRange, WalPlayError, entries_in_range, replayed
from replication.source.filters import ShipEntry
from replication.source.manifest import PeerTask
from replication.source.peer_protocol import HBASE, detect_protocol
from replication.tables.descriptors import TableRegistry
from replication.tables.errors import TableError
from replication.wal.cell_codec import encode_cells
from replication.wal.reader import open_wal
from replication.zk.client import connected, zk_options
from replication.zk.cluster_id import ClusterIdNotFound, read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.layout import ZNodePaths
from replication.zk.queue_info import live_server_names

PLAYER_ID = "walplayer"  # the endpoint's peer id (logs and sink-choice messages name it)
RESULT_DDL = "WALEDITS bigint, CELLS_READ bigint, CELLS_WRITTEN bigint, PUTS bigint, DELETES bigint"


def resolve_target(key: ClusterKey, conf: Config) -> PeerTask:
    """The target cluster as the endpoint needs it (protocol, cluster id, root of an hbrep cluster, live region
    servers); WalPlayError when no cluster answers there or none of its region servers lives."""
    try:
        with connected(key, **zk_options(conf)) as zk:
            paths = ZNodePaths(conf, parent=key.znode_parent)
            protocol = detect_protocol(zk, key.znode_parent)
            cluster_id = str(read_cluster_id(zk, paths))
            root = read_cluster_info(zk, paths).root if protocol != HBASE else None
            sinks = live_server_names(LiveServerStorage(zk, paths).live())
    except (ClusterIdNotFound, NoClusterInfo):
        raise WalPlayError(f"no cluster at {key} (no cluster id under {key.znode_parent})") from None
    if not sinks:
        raise WalPlayError(f"no live region server at {key} to replay into")
    return PeerTask(PLAYER_ID, str(key), True, {}, cluster_id, root, sinks, protocol=protocol)


def check_tables(target: PeerTask, tables: TableMap, conf: Config) -> None:
    """WalPlayError naming the first target table the target cluster does not have."""
    if target.protocol == HBASE:
        with HBaseTableClient(target.cluster_key, conf) as client:
            for table in sorted(set(tables.targets.values())):
                try:
                    client.locator.regions(table)
                except TableError:
                    raise WalPlayError(f"table {table} does not exist at {target.cluster_key}") from None
        return
    fs, root = get_filesystem(target.peer_root or "")
    registry = TableRegistry(fs, root)
    for table in sorted(set(tables.targets.values())):
        if not registry.exists(table):
            raise WalPlayError(f"table {table} does not exist at {target.cluster_key}")


def replay_file(path: str, tables: TableMap, times: TimeRange, counters: PlayCounters) -> Iterator[ShipEntry]:
    """The entries of WAL ``path`` to ship, in file order (see ``wal_play.replayed``)."""
    fs, local = get_filesystem(path)
    for entry in entries_in_range((read.entry for read in open_wal(local, fs=fs)), times):
        out = replayed(entry, tables, counters)
        if out is not None:
            yield ShipEntry(out.key, len(out.cells), encode_cells(out.cells), rows=len({c.row for c in out.cells}))


def play_partition(target_json: str, conf_json: str, tables_json: str, times_json: str, batches: Iterator[Any]):
    """Executor side: replay each WAL of the partition into the target, in batches; one row of counters."""
    import pyarrow as pa  # executor side only

    from replication.source.replication_source import open_peer_endpoint

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    target = PeerTask(**json.loads(target_json))
    conf = Config.load(env={}, overrides=json.loads(conf_json))
    tables, times = TableMap(json.loads(tables_json)), TimeRange(**json.loads(times_json))
    max_entries = conf.get_int("replication.source.nb.capacity")
    max_bytes = conf.get_int("replication.source.size.capacity")
    counters = PlayCounters()
    endpoint, servers = open_peer_endpoint(target, conf, target.peer_cluster_id or "")
    try:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                replicate_in_batches(endpoint, replay_file(path, tables, times, counters), max_entries, max_bytes)
    finally:
        endpoint.close()
        servers.close()
    yield pa.RecordBatch.from_pylist(
        [counters.as_dict()], schema=pa.schema([(n, pa.int64()) for n in counters.as_dict()])
    )


def run_wal_play(
    spark: Any, files: list[str], tables: TableMap, times: TimeRange, target: PeerTask, conf: Config
) -> dict[str, int]:
    """Replay ``files`` (spread over Spark tasks, one partition per file asked) into ``target``; WALPlayer's
    counters summed over the tasks.
    A sink that keeps failing fails the job (ShipFailed): run it again, replayed cells are versioned."""
    counters = PlayCounters()
    if not files:
        return counters.as_dict()
    frame = spark.createDataFrame([(path,) for path in files], "path string").repartition(len(files))
    job = partial(
        play_partition,
        json.dumps(asdict(target)),
        json.dumps(conf.as_dict()),
        json.dumps(tables.targets),
        json.dumps(asdict(times)),
    )
    for row in frame.mapInArrow(job, RESULT_DDL).collect():
        counters.add(row.asDict())
    return counters.as_dict()
