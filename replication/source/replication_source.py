"""ReplicationSource for one queue inside a ship task: read → filter → batch → ship → progress.

``ship_queue`` needs nothing but the manifest: it opens the source filesystem, builds the filter chain
for the queue's peer, chooses sinks from the peer's region servers (re-reading the peer's ``rs`` znode
from the task when sinks fail), ships every batch until the peer acknowledges it, and reports per-WAL
end positions. Positions move only for batches the peer acknowledged.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from collections.abc import Callable
from contextlib import suppress

from kazoo.client import KazooClient

from replication.cluster.info import cluster_token
from replication.config import Config
from replication.errors import HbrepError
from replication.fs import get_filesystem
from replication.kerberos import kerberos_identity, login
from replication.source.bulk_load import PeerHFileRefs, source_hfile_dirs
from replication.source.endpoint import ReplicationEndpoint, ShipFailed
from replication.source.filters import EntryFilter, table_name_str
from replication.source.manifest import Manifest, PeerTask, QueueResult, QueueTask, WalProgress
from replication.source.metrics import SourceMetrics
from replication.source.peer_protocol import HBREP, configured_protocol, sink_client_factory
from replication.source.peer_servers import PeerRegionServers
from replication.source.read_ahead import ReadAhead
from replication.source.serial_replication import serial_checker_from_dict
from replication.source.shipper import ReplicationSourceShipper
from replication.source.sink_manager import ReplicationSinkManager
from replication.source.throttler import ReplicationThrottler, source_bandwidth
from replication.source.wal_reader import ReplicationSourceWALReader, WALMissing, ZeroLengthWAL
from replication.tables.descriptors import TableRegistry
from replication.wal.errors import WALError
from replication.zk.client import connect, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig

LOG = logging.getLogger(__name__)

# A queue is stuck (not merely failed) when its WAL itself is the problem: retrying cannot help until an
# operator acts. Corrupt or unsupported (compressed/encrypted) WALs belong here, as in HBase where the
# reader keeps failing on the same file.
STUCK_ERRORS = (WALMissing, ZeroLengthWAL, WALError)


def manifest_conf(manifest: Manifest) -> Config:
    """The configuration the snapshot recorded (the executor's environment does not leak in). With
    ``hbase.security.authentication=kerberos`` the process logs in as its identity first, so that the source
    root (WebHDFS with SPNEGO) is read as the configured principal, not as whatever ticket cache it has."""
    conf = Config.load(env={}, overrides=manifest.conf)
    identity = kerberos_identity(conf)
    if identity is not None:
        login(identity)
    return conf


def peer_config_of(peer: PeerTask):
    """The peer's ReplicationPeerConfig rebuilt from its manifest form."""

    return ReplicationPeerConfig.from_bytes(base64.b64decode(peer.config["peer_bytes"]), f"peer {peer.peer_id}")


def peer_region_servers(peer: PeerTask, conf: Config) -> PeerRegionServers:
    """The peer's live region servers for one ship task: the snapshot's list, then a watch on ``rs``."""
    key = ClusterKey.parse(peer.cluster_key)

    def connect_to_peer() -> KazooClient:
        auth = peer_secrets(peer).get("hbrep.zk.auth") or conf.get_str("hbrep.zk.auth", "")
        return connect(key, timeout=10.0, **{**zk_options(conf), "auth": auth or None})

    return PeerRegionServers(
        peer.peer_id, list(peer.sinks), connect_to_peer, ZNodePaths(conf, parent=key.znode_parent).rs
    )


def peer_secrets(peer: PeerTask) -> dict[str, str]:
    """The peer's secrets as the snapshot resolved them (``replication/secrets.py``); ShipFailed if it could not,
    or if the snapshot found the peer unshippable (``peer_error``: a shadow peer that HBase enabled)."""
    if peer.config.get("peer_error"):
        raise ShipFailed(peer.config["peer_error"])
    if peer.config.get("secret_error"):
        raise ShipFailed(peer.config["secret_error"])
    return dict(peer.config.get("secrets") or {})


def peer_token(peer: PeerTask, conf: Config) -> str:
    """The token the peer's sinks expect: the peer's own (its configuration names the secret), then
    ``hbrep.cluster.token``, then the token file in the peer's root (embedded clusters)."""
    token = peer_secrets(peer).get("hbrep.cluster.token") or conf.get_str("hbrep.cluster.token", "")
    if token or not peer.peer_root:
        return token

    fs, root = get_filesystem(peer.peer_root)
    return cluster_token(fs, root)


def shipped_tables(peer: PeerTask, peer_conf: ReplicationPeerConfig) -> Callable[[str, str | None], bool]:
    """The peer's table-cfs test, less the tables a seed is copying now (``paused_tables``: their edits
    are tracked by the seed's helper peer and shipped when the copy is done, replication/operations/seed.py)."""
    paused = {table_name_str(t.encode()) for t in peer.config.get("paused_tables") or ()}
    if not paused:
        return peer_conf.need_to_replicate
    return lambda table, family: table not in paused and peer_conf.need_to_replicate(table, family)


def open_peer_endpoint(
    peer: PeerTask,
    conf: Config,
    source_cluster_id: str,
    *,
    client_factory: Callable[[str, str, float], object] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    drop_entries_of_missing_table: Callable[[str], bool] | None = None,
    source_root: str | None = None,
) -> tuple[ReplicationEndpoint, PeerRegionServers]:
    """The endpoint that ships to ``peer`` (its sinks chosen by HBase's rules, its token, its RPC) and the
    watch on the peer's region servers behind it; the caller closes both. ShipFailed when the snapshot
    found the peer unshippable or unreachable. ``source_root``: the source's root dir, sent to an HBase
    peer with bulk-load markers (``source/bulk_load.py``)."""
    peer_secrets(peer)  # a secret the snapshot could not resolve: its one line
    if not peer.peer_cluster_id:
        raise ShipFailed(f"peer {peer.peer_id} at {peer.cluster_key} is unreachable (no cluster id read)")
    peer_servers = peer_region_servers(peer, conf)
    sinks = ReplicationSinkManager(
        peer.peer_id,
        peer_servers.fetch,
        conf.get_float("replication.source.ratio"),
        conf.get_int("replication.bad.sink.threshold"),
        servers_changed=peer_servers.changed,
    )
    try:
        endpoint = ReplicationEndpoint(
            peer.peer_id,
            sinks,
            peer_token(peer, conf) if peer.protocol == HBREP else "",
            conf,
            source_cluster_id,
            client_factory=client_factory
            or sink_client_factory(peer.protocol, conf, source_hfile_dirs(source_root) if source_root else None),
            sleep=sleep,
            drop_entries_of_missing_table=drop_entries_of_missing_table,
        )
    except BaseException:
        peer_servers.close()
        raise
    return endpoint, peer_servers


def ship_queue(
    manifest: Manifest,
    queue: QueueTask,
    *,
    client_factory: Callable[[str, str, float], object] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> QueueResult:
    """Ship one queue as far as it goes; never raises for queue-level problems (they are in the result)."""
    result = QueueResult(queue.replicator, queue.queue_id, queue.peer_id, status="ok")
    progress = {w.name: WalProgress(w.name, w.position, w.position, False, w.version) for w in queue.wals}
    result.wals = list(progress.values())
    peer = manifest.peers.get(queue.peer_id)
    if peer is None:
        result.status, result.error = "skipped", f"peer {queue.peer_id} no longer exists"
        return result
    if not peer.enabled:
        result.status = "disabled"
        return result
    metrics = SourceMetrics()
    entry_filter = None
    endpoint = None
    peer_servers = None
    hfile_refs = None
    try:
        conf = manifest_conf(manifest)
        warn_on_long_queue(queue, conf)
        fs, root = get_filesystem(manifest.source_root)
        peer_conf = peer_config_of(peer)
        peer_secrets(peer)  # a secret the snapshot could not resolve fails the queue with its one line
        configured_protocol(peer.peer_id, peer_conf.configuration)  # a bad hbrep.peer.protocol: its own error
        if not peer.peer_cluster_id:
            raise ShipFailed(f"peer {peer.peer_id} at {peer.cluster_key} is unreachable (no cluster id read)")
        hfile_refs = source_hfile_refs(manifest, conf, peer.peer_id)  # opens a session at a bulk load only
        entry_filter = EntryFilter(
            shipped_tables(peer, peer_conf), uuid.UUID(manifest.source_cluster_id), uuid.UUID(peer.peer_cluster_id),
            hfile_pending=hfile_refs.pending,
        )  # fmt: skip
        endpoint, peer_servers = open_peer_endpoint(
            peer, conf, manifest.source_cluster_id, client_factory=client_factory, sleep=sleep,
            drop_entries_of_missing_table=_table_gone_on_source(fs, root), source_root=manifest.source_root,
        )  # fmt: skip
        queues_of_peer = max(1, sum(1 for q in manifest.queues if q.peer_id == peer.peer_id))
        bandwidth = int(peer.config.get("bandwidth") or conf.get_int("replication.source.per.peer.node.bandwidth"))
        per_source = source_bandwidth(bandwidth, queues_of_peer, conf.get_bool("hbrep.source.bandwidth.split", False))
        shipper = ReplicationSourceShipper(endpoint, ReplicationThrottler(per_source), metrics, sleep)
        serial = serial_checker_from_dict(peer.serial) if peer.serial is not None else None
        reader = ReplicationSourceWALReader(fs, root, queue, entry_filter, conf, metrics, serial)
        # HBase's reader and shipper threads: the next batch is read while the peer applies this one
        with ReadAhead(reader.batches(), conf.get_int("replication.source.nb.batches")) as batches:
            for batch in batches:
                shipper.ship(batch)
                if hfile_refs is not None:  # acknowledged: the store files leave the peer's hfile-refs
                    hfile_refs.acknowledged(name for entry in batch.entries for name in entry.hfiles)
                wal = progress[batch.wal.name]
                wal.end_position = batch.last_position
                for region, seq in batch.last_seq_ids.items():
                    result.last_seq_ids[region] = max(result.last_seq_ids.get(region, 0), seq)
                if batch.end_of_file and not wal.done:
                    wal.done = True
                    metrics.inc("completedLogs")
        if reader.waiting:
            result.status, result.error = "waiting", f"serial peer {peer.peer_id}: {reader.waiting}"
            LOG.info("Queue %s waits: %s", queue.key, result.error)
    except STUCK_ERRORS as exc:
        result.status, result.error = "stuck", str(exc)
        LOG.error("Queue %s is stuck: %s", queue.key, exc)
    except HbrepError as exc:
        result.status, result.error = "failed", str(exc)
        LOG.error("Queue %s failed: %s", queue.key, exc)
    except Exception as exc:  # a bug or an unexpected I/O error: report it with the queue named
        result.status, result.error = "failed", f"{type(exc).__name__}: {exc}"
        LOG.exception("Queue %s failed", queue.key)
    finally:
        if endpoint is not None:
            with suppress(Exception):
                endpoint.close()
        if peer_servers is not None:
            with suppress(Exception):
                peer_servers.close()
        if hfile_refs is not None:
            with suppress(Exception):
                hfile_refs.close()
    if entry_filter is not None and entry_filter.markers:  # HBase's replication markers: heartbeats, not data
        metrics.inc("replicationMarkers", entry_filter.markers)
    result.drained = queue.recovered and result.status == "ok" and all(w.done for w in result.wals)
    if result.drained:
        metrics.inc("completedRecoverQueues")
    result.metrics = metrics.as_dict()
    return result


def source_hfile_refs(manifest: Manifest, conf: Config, peer_id: str) -> PeerHFileRefs:
    """The peer's hfile-refs on the source cluster (a ZooKeeper session opened at the first bulk load)."""
    key = ClusterKey.parse(manifest.source_cluster_key)
    return PeerHFileRefs(
        lambda: connect(key, timeout=10.0, **zk_options(conf)), ZNodePaths(conf, parent=key.znode_parent), peer_id
    )


def warn_on_long_queue(queue: QueueTask, conf: Config) -> None:
    """HBase's warning when a queue holds more WALs than ``replication.source.log.queue.warn``
    (ReplicationSource.enqueueLog): the source is falling behind the WALs its server writes."""
    threshold = conf.get_int("replication.source.log.queue.warn")
    waiting = len(queue.wals)  # ReplicationSourceLogQueue: queue.size(), the WAL being read included
    if waiting > threshold:
        LOG.warning(
            "queue %s of %s: queue size %d exceeds value of replication.source.log.queue.warn: %d",
            queue.queue_id, queue.replicator, waiting, threshold,
        )  # fmt: skip


def _table_gone_on_source(fs, root) -> Callable[[str], bool]:
    def gone(table: str) -> bool:
        try:
            return not TableRegistry(fs, root).exists(table)
        except Exception:
            return False

    return gone
