"""The ``snapshot`` step of a cycle: peers and every queue, read once, into a manifest.

Only queues of live replicators are shipped (a dead server's queues wait for failover, as in HBase).
The peer's side is read here too: the RPC its region servers speak (source/peer_protocol.py), its
cluster id (``hbaseid``, for loop prevention), its root (to find the sink token of an embedded hbrep
peer; a real HBase peer needs none) and its live region servers (the first sink choice). A peer whose
ZooKeeper does not answer is recorded without a cluster id, so its queues fail with a clear error
instead of shipping blindly.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid

from kazoo.client import KazooClient

from replication.cluster.info import read_cluster_info
from replication.cluster.source_cluster import SourceCluster
from replication.config import Config
from replication.errors import HbrepError
from replication.fs import FileSystem
from replication.hbase.replication_barriers import read_replication_barriers
from replication.hbase.table_client import HBaseTableClient
from replication.secrets import SecretLookup, resolve_peer_secrets
from replication.source.hbase_serial_checker import HBaseSerialChecker
from replication.source.manifest import Manifest, PeerTask, QueueTask, WalTask
from replication.source.peer_protocol import HBREP, UnknownPeerProtocol, configured_protocol, detect_protocol
from replication.source.serial_replication import SerialReplicationChecker
from replication.wal.locator import WalLocator
from replication.wal.names import wal_group_id, wal_start_timestamp
from replication.zk.client import connected, zk_options
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.queue_info import ReplicationQueueInfo, live_server_names
from replication.zk.queue_snapshot import QueueSnapshot, cycle_snapshot
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.seed_marks import paused_tables
from replication.zk.serial_barriers import read_barriers
from replication.zk.shadow_peer import hbrep_ships, is_shadow_peer

LOG = logging.getLogger(__name__)


def read_peer(
    peer_id: str,
    storage: ReplicationPeerStorage,
    conf: Config,
    secret_lookup: SecretLookup | None = None,
    *,
    resolve_disabled: bool = False,
) -> PeerTask:
    """The peer's configuration and state, plus its cluster id, root and live servers (if reachable; for a
    disabled peer only with ``resolve_disabled``, as a repair that writes to it needs).

    The peer's secrets (its configuration names them, ``replication/secrets.py``) are resolved here, by
    the process that ships, into ``config["secrets"]`` of the task: the manifest (owner-only) carries
    them to the executors; a secret that cannot be resolved is ``config["secret_error"]`` (one line,
    without the secret) and the peer's queues fail with it.
    """

    config = storage.get_peer_config(peer_id)
    # a shadow peer (zk/shadow_peer.py) ships here while HBase holds it DISABLED
    enabled, peer_error = hbrep_ships(peer_id, config, storage.is_peer_enabled(peer_id))
    task = PeerTask(
        peer_id=peer_id,
        cluster_key=config.cluster_key,
        enabled=enabled,
        config={
            "peer_bytes": base64.b64encode(config.to_bytes()).decode("ascii"),
            "bandwidth": config.bandwidth,
            "configuration": dict(config.configuration),
            "serial": config.serial,
        },
        peer_cluster_id=None,
        peer_root=None,
        sinks=[],
    )
    paused = paused_tables(storage.zk, storage.paths, peer_id)
    if paused:  # a seed copies these tables now; its helper peer's queues track their edits (seed.py)
        task.config["paused_tables"] = paused
    if peer_error:
        task.config["peer_error"] = peer_error
        LOG.error("%s", peer_error)
        return task
    if not enabled and not resolve_disabled:
        return task
    try:
        task.config["secrets"] = resolve_peer_secrets(config.configuration, secret_lookup)
    except HbrepError as exc:
        task.config["secret_error"] = f"peer {peer_id}: {exc}"
        LOG.warning("%s", task.config["secret_error"])
        return task
    key = ClusterKey.parse(config.cluster_key)
    try:
        configured = configured_protocol(peer_id, config.configuration)
    except UnknownPeerProtocol as exc:  # its queues fail with this message (ship_queue checks it again)
        LOG.error("%s", exc)
        return task
    try:
        # A peer whose ZooKeeper has digest ACLs: its own credentials (peer configuration), else ours.
        auth = task.config["secrets"].get("hbrep.zk.auth") or conf.get_str("hbrep.zk.auth", "") or None
        with connected(key, timeout=5.0, **{**zk_options(conf), "auth": auth}) as peer_zk:
            peer_paths = ZNodePaths(conf, parent=key.znode_parent)
            task.protocol = configured or detect_protocol(peer_zk, key.znode_parent)
            task.peer_cluster_id = str(read_cluster_id(peer_zk, peer_paths))
            if task.protocol == HBREP:
                task.peer_root = read_cluster_info(peer_zk, peer_paths).root
            task.sinks = live_server_names(LiveServerStorage(peer_zk, peer_paths).live())
    except Exception as exc:
        LOG.warning("Peer %s (%s) cannot be read: %s", peer_id, key, exc)
    return task


def _ordered_wals(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (wal_group_id(n), wal_start_timestamp(n), n))


def queue_has_work(fs: FileSystem, queue: QueueTask) -> bool:
    """True when shipping would move something: a finished WAL to drop, or bytes past a position."""
    if queue.recovered:
        return True
    groups: dict[str, list[WalTask]] = {}
    for wal in queue.wals:
        groups.setdefault(wal_group_id(wal.name), []).append(wal)
    for group in groups.values():
        finished = group[:-1] if queue.replicator_alive else group
        if finished:
            return True  # a rolled WAL (or a dead owner's) is still queued
        newest = group[-1]
        if newest.path is None:
            continue
        try:
            if fs.readable_length(newest.path) > newest.position:
                return True
        except Exception:
            return True
    return False


def build_manifest(
    zk: KazooClient,
    source: SourceCluster,
    conf: Config,
    *,
    peer_ids: list[str] | None = None,
    cycle_id: str | None = None,
    queue_snapshot: QueueSnapshot | None = None,
    secret_lookup: SecretLookup | None = None,
    also_ship: frozenset[str] = frozenset(),
) -> Manifest:
    """Snapshot peers and queues into a manifest; ``peer_ids`` limits it to those peers; the queues of the
    servers in ``also_ship`` go too although they do not live (``hbrep syncup``'s own replicator).

    ``secret_lookup`` resolves ``airflow-var:``/``airflow-conn:`` peer secrets (the Airflow plugin's).

    Every queue of a live replicator whose peer is selected is included with its WALs in read order
    and their current paths; queues with nothing to ship are left out (``queue_has_work``).
    """
    peers_storage = ReplicationPeerStorage(zk, source.paths)
    selected = peer_ids if peer_ids is not None else peers_storage.list_peer_ids()
    peers = {
        pid: read_peer(pid, peers_storage, conf, secret_lookup) for pid in selected if peers_storage.peer_exists(pid)
    }
    if source.is_real_hbase:
        _leave_plain_peers_to_hbase(peers)
    if queue_snapshot is None:  # incremental: re-reads only the queues the journal names (zk/queue_snapshot.py)
        queue_snapshot = cycle_snapshot(
            ReplicationQueueStorage(zk, source.paths), source.fs, source.root, conf, journaled=not source.is_real_hbase
        ).snapshot
    snapshot = queue_snapshot
    live = set(LiveServerStorage(zk, source.paths).live())
    locator = WalLocator(source.fs, source.root)
    queues: list[QueueTask] = []
    for state in snapshot.queues():
        info = ReplicationQueueInfo.parse(state.queue_id)
        if info.peer_id not in peers or (state.server not in live and state.server not in also_ship):
            continue
        servers = [state.server, *info.dead_region_servers]
        wals = []
        for name in _ordered_wals(list(state.wals)):
            wal_state = state.wals[name]
            path = locator.find(name, servers)
            wals.append(WalTask(name, path, wal_state.position, wal_state.version))
        task = QueueTask(
            replicator=state.server,
            queue_id=state.queue_id,
            peer_id=info.peer_id,
            recovered=info.is_recovered,
            replicator_alive=state.server in live,
            dead_servers=list(info.dead_region_servers),
            wals=wals,
        )
        if peers[info.peer_id].enabled and queue_has_work(source.fs, task):
            queues.append(task)
    if source.is_real_hbase:
        _add_hbase_serial_checks(zk, source, conf, peers, queues)
    else:
        _add_serial_checks(zk, source.paths, peers, snapshot, live)
    return Manifest(
        cycle_id=cycle_id or f"cycle-{int(time.time() * 1000)}-{uuid.uuid4().hex[:6]}",
        created_ms=int(time.time() * 1000),
        source_cluster_key=str(source.key),
        source_root=source.root_uri or source.root,
        source_cluster_id=str(source.cluster_id),
        conf=conf.as_dict(),
        peers=peers,
        queues=queues,
    )


def _leave_plain_peers_to_hbase(peers: dict[str, PeerTask]) -> None:
    """On a real HBase source, mark every peer but a shadow peer as not shipped by hbrep: HBase's own
    ReplicationSource ships (and advances the queues of) an ordinary peer, so hbrep reading its queues
    too would ship its edits twice and race HBase's position writes."""
    for task in peers.values():
        if task.enabled and not is_shadow_peer(task.config["configuration"]):
            LOG.info("Peer %s is not a shadow peer: HBase's own replication source ships it", task.peer_id)
            task.enabled = False


def _add_serial_checks(
    zk: KazooClient, paths: ZNodePaths, peers: dict[str, PeerTask], snapshot: QueueSnapshot, live: set[str]
) -> None:
    """Give each enabled serial peer what its SerialReplicationChecker needs: every server's barriers and
    where every queue of the peer stands, dead replicators' queues included."""
    serial = [pid for pid, peer in peers.items() if peer.enabled and peer.config.get("serial")]
    if not serial:
        return
    barriers = read_barriers(zk, paths)
    for peer_id in serial:
        queued: dict[str, int] = {}
        for state in snapshot.queues():
            if ReplicationQueueInfo.parse(state.queue_id).peer_id != peer_id:
                continue
            for name, wal in state.wals.items():
                queued[name] = min(queued.get(name, wal.position), wal.position)
        peers[peer_id].serial = SerialReplicationChecker(barriers, live, queued).to_dict()


def _add_hbase_serial_checks(
    zk: KazooClient, source: SourceCluster, conf: Config, peers: dict[str, PeerTask], queues: list[QueueTask]
) -> None:
    """Give each enabled serial peer of a real HBase source what its HBaseSerialChecker needs, in this order:
    the length of every WAL it is about to read (entries past them wait for a later pass), then hbase:meta's
    replication barriers, then the peer's last pushed sequence ids of the regions that have barriers."""
    serial = [pid for pid, peer in peers.items() if peer.enabled and peer.config.get("serial")]
    if not serial:
        return
    limits: dict[str, dict[str, int]] = {pid: {} for pid in serial}
    for queue in queues:
        if queue.peer_id in limits:
            for wal in queue.wals:
                limits[queue.peer_id][wal.name] = _readable_length(source.fs, wal.path)
    try:
        with HBaseTableClient(source.key, conf, zk=zk) as client:
            barriers = read_replication_barriers(client.locator, client.servers, client.retry)
    except HbrepError as exc:  # unordered is not an option: the serial peers' queues wait, saying why
        LOG.warning("Serial peers %s wait: hbase:meta's replication barriers unreadable: %s", serial, exc)
        for peer_id in serial:
            peers[peer_id].serial = HBaseSerialChecker({}, {}, {}, unavailable=str(exc)).to_dict()
        return
    regions = {
        name: {"barriers": list(b.barriers), "state": b.state, "parents": list(b.parents)}
        for name, b in barriers.items()
    }
    storage = ReplicationQueueStorage(zk, source.paths)
    for peer_id in serial:
        pushed = storage.get_last_sequence_ids(sorted(regions), peer_id)
        peers[peer_id].serial = HBaseSerialChecker(regions, pushed, limits[peer_id]).to_dict()


def _readable_length(fs: FileSystem, path: str | None) -> int:
    """How many bytes of a WAL can be read now (0 when it cannot be found: its entries wait)."""
    if path is None:
        return 0
    try:
        return fs.readable_length(path)
    except Exception:  # moved to oldWALs/ meanwhile, or unreadable: the next pass measures it again
        return 0
