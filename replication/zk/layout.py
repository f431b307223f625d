"""Every znode path of one cluster, in one place (``ZNodePaths``, ``ZKReplicationStorageBase``).

HBase's own paths come from its config keys. hbrep's own working znodes (ship leases, dead-server marks,
the queue change journal, consistency tokens) live under one root of hbrep's own,
``hbrep.zookeeper.znode.root`` (default ``<parent>/hbrep``), so that a production HBase's replication
znodes hold only what HBase itself writes there (peers, queues, hfile-refs, regions). Before issue 23 they
sat inside ``<parent>/replication`` as ``hbrep-*``; :mod:`replication.zk.migration` moves them on first
start. Two znodes stay beside HBase's under the parent, because other programs find them by the parent
alone: ``hbrep-cluster`` (an embedded cluster's description, read before any configuration) and
``hbrep-hbase-rpc`` (the znode parent HBase's own replication source is given to reach hbrep).
"""

from __future__ import annotations

from replication.config import Config

LOCK = "lock"  # the claim lock child of a replicator node (1.x ReplicationQueuesZKImpl.RS_LOCK_ZNODE)
CVERSION_PREFIX = "cversion_"  # transient child of the queues root, bumps its cversion (spec §3.4)
# hbrep's own znodes (HBase has none of these)
CLUSTER_INFO = "hbrep-cluster"  # under the parent: the cluster's name, root and parent (cluster_registration.py)
HBREP_ROOT = "hbrep"  # under the parent, unless hbrep.zookeeper.znode.root names another place
LEASES = "leases"  # under hbrep's root: one ship lease per peer (zk/lease.py)
LEASE_WAITERS = "lease-waiters"  # under hbrep's root: runs waiting for a peer's lease (zk/lease.py)
DEAD_SERVERS = "dead"  # under hbrep's root: when each dead server was first seen (dead_server_storage.py)
STARTING_SERVERS = "starting"  # under hbrep's root: region servers between their first WAL and their rs znode
JOURNAL = "journal"  # under hbrep's root: the queue change journal (zk/journal.py)
CONSISTENCY_TOKENS = "consistency"  # under hbrep's root: one record per token (consistency_token_storage.py)
HBASE_SOURCE = "hbase-source"  # under hbrep's root: a real HBase source's rootdir (cluster_registration.py)
# where the same znodes sat before issue 23, under <parent>/replication: (old name, new name, copy children)
LEGACY_REPLICATION_CHILDREN = (
    ("hbrep-leases", LEASES, True),
    ("hbrep-dead", DEAD_SERVERS, True),
    ("hbrep-consistency", CONSISTENCY_TOKENS, True),
    ("hbrep-journal", JOURNAL, False),  # a new journal (new czxid) makes every snapshot cache read in full
)
JOURNAL_ENTRY_PREFIX = "q-"  # a journal entry's name before the 10-digit sequence
# under the parent: a znode parent for HBase's own clients (cluster/hbase_registry.py), holding a copy of
# hbaseid and rs/<host,hbaseRpcPort,startcode> for each region server's HBase RPC listener
HBASE_RPC = "hbrep-hbase-rpc"


def _join(parent: str, child: str) -> str:
    return (parent.rstrip("/") + "/" + child) if parent != "/" else "/" + child


def is_queue_id(name: str) -> bool:
    """False for the children of a replicator that are not queues (the claim ``lock``)."""
    return name != LOCK


def is_replicator(name: str) -> bool:
    """False for the transient ``cversion_*`` children of the queues root."""
    return not name.startswith(CVERSION_PREFIX)


def cluster_info_path(parent: str) -> str:
    """``<parent>/hbrep-cluster`` for a bare znode parent (before any configuration is read)."""
    return _join(parent, CLUSTER_INFO)


class ZNodePaths:
    """Absolute znode paths: ``parent``, ``hbaseid``, ``rs``, ``replication``, ``peers``, ``queues``, and
    hbrep's own ``hbrep_root`` (``leases``, ``dead_servers``, ``starting_servers``, ``journal``,
    ``consistency_tokens``),
    ``cluster_info`` and ``hbase_rpc`` (with its ``hbase_rpc_hbaseid`` and ``hbase_rpc_rs``)."""

    def __init__(self, conf: Config | None = None, parent: str | None = None):
        conf = conf if conf is not None else Config.load(env={})
        self.parent: str = parent if parent is not None else conf.get_str("zookeeper.znode.parent")
        self.hbaseid = _join(self.parent, conf.get_str("zookeeper.znode.clusterId"))
        self.rs = _join(self.parent, conf.get_str("zookeeper.znode.rs"))
        self.replication = _join(self.parent, conf.get_str("zookeeper.znode.replication"))
        self.peers = _join(self.replication, conf.get_str("zookeeper.znode.replication.peers"))
        self.peer_state_name = conf.get_str("zookeeper.znode.replication.peers.state")
        self.queues = _join(self.replication, conf.get_str("zookeeper.znode.replication.rs"))
        self.hfile_refs = _join(self.replication, conf.get_str("zookeeper.znode.replication.hfile.refs"))
        # serial replication's last pushed sequence ids, ``regions/<e[0:2]>/<e[2:4]>/<e[4:]>-<peerId>`` for an
        # encoded region name e (ZKReplicationQueueStorage.getSerialReplicationRegionPeerNode)
        self.regions = _join(self.replication, conf.get_str("zookeeper.znode.replication.regions"))
        self.cluster_info = cluster_info_path(self.parent)
        self.hbrep_root = conf.get_str("hbrep.zookeeper.znode.root") or _join(self.parent, HBREP_ROOT)
        self.leases = _join(self.hbrep_root, LEASES)
        self.lease_waiters = _join(self.hbrep_root, LEASE_WAITERS)
        self.dead_servers = _join(self.hbrep_root, DEAD_SERVERS)
        self.starting_servers = _join(self.hbrep_root, STARTING_SERVERS)
        self.journal = _join(self.hbrep_root, JOURNAL)
        self.consistency_tokens = _join(self.hbrep_root, CONSISTENCY_TOKENS)
        self.hbase_source = _join(self.hbrep_root, HBASE_SOURCE)
        self.hbase_rpc = _join(self.parent, HBASE_RPC)
        self.hbase_rpc_hbaseid = _join(self.hbase_rpc, conf.get_str("zookeeper.znode.clusterId"))
        self.hbase_rpc_rs = _join(self.hbase_rpc, conf.get_str("zookeeper.znode.rs"))

    def legacy_moves(self) -> list[tuple[str, str, bool]]:
        """(old path under ``<parent>/replication``, new path under hbrep's root, copy its children?)."""
        return [(_join(self.replication, old), _join(self.hbrep_root, new), copy)
                for old, new, copy in LEGACY_REPLICATION_CHILDREN]  # fmt: skip

    def last_pushed_sequence_id(self, encoded_region: str, peer_id: str) -> str:
        """``regions/<e[0:2]>/<e[2:4]>/<e[4:]>-<peerId>``: a serial peer's last pushed sequence id of a
        region (ZKReplicationQueueStorage.getSerialReplicationRegionPeerNode)."""
        e = encoded_region
        return f"{self.regions}/{e[0:2]}/{e[2:4]}/{e[4:]}-{peer_id}"

    def lag_targets(self, peer_id: str) -> str:
        """``<hbrep root>/lag-targets/<peerId>``: a peer's lag targets (lag_target_storage.py)."""
        return _join(self.hbrep_root, f"lag-targets/{peer_id}")

    def replicated_through(self, peer_id: str) -> str:
        """``<hbrep root>/replicated-through/<peerId>``: a peer's last replicated-through times
        (replicated_through_storage.py)."""
        return _join(self.hbrep_root, f"replicated-through/{peer_id}")

    def live_server(self, server: str) -> str:
        """``<parent>/rs/<server>``: the ephemeral znode of a live region server."""
        return _join(self.rs, server)

    def starting_server(self, server: str) -> str:
        """``<hbrep root>/starting/<server>``: the ephemeral znode of a region server that is starting (its WAL
        directory and queues may exist before its ``rs`` znode does)."""
        return _join(self.starting_servers, server)

    def hbase_rpc_server(self, server: str) -> str:
        """``<parent>/hbrep-hbase-rpc/rs/<host,hbaseRpcPort,startcode>``: one HBase RPC listener, for HBase."""
        return _join(self.hbase_rpc_rs, server)

    def peer(self, peer_id: str) -> str:
        """``<parent>/replication/peers/<id>``."""
        return _join(self.peers, peer_id)

    def peer_state(self, peer_id: str) -> str:
        """``<parent>/replication/peers/<id>/peer-state``."""
        return _join(self.peer(peer_id), self.peer_state_name)

    def replicator(self, server: str) -> str:
        """``<parent>/replication/rs/<server>``."""
        return _join(self.queues, server)

    def queue(self, server: str, queue_id: str) -> str:
        """``<parent>/replication/rs/<server>/<queueId>``."""
        return _join(self.replicator(server), queue_id)

    def wal(self, server: str, queue_id: str, wal: str) -> str:
        """``<parent>/replication/rs/<server>/<queueId>/<wal>`` (data = position)."""
        return _join(self.queue(server, queue_id), wal)

    def lock(self, server: str) -> str:
        """``<parent>/replication/rs/<server>/lock``: held by whoever claims that dead server's queues."""
        return _join(self.replicator(server), LOCK)

    def cversion_marker(self, new_queue_id: str) -> str:
        """``<parent>/replication/rs/cversion_<newQueueId>`` (created and deleted inside a claim multi)."""
        return _join(self.queues, CVERSION_PREFIX + new_queue_id)

    def hfile_refs_of(self, peer_id: str) -> str:
        """``<parent>/replication/hfile-refs/<peerId>``."""
        return _join(self.hfile_refs, peer_id)

    def lease(self, peer_id: str) -> str:
        """``<hbrep root>/leases/<peerId>``: the ship lease of one peer."""
        return _join(self.leases, peer_id)

    def lease_waiters_of(self, peer_id: str) -> str:
        """``<hbrep root>/lease-waiters/<peerId>``: ephemeral children, one per waiting run."""
        return _join(self.lease_waiters, peer_id)

    def dead_server(self, server: str) -> str:
        """``<hbrep root>/dead/<server>``: when failover first saw that server dead."""
        return _join(self.dead_servers, server)

    def journal_entry(self, name: str) -> str:
        """``<hbrep root>/journal/<name>``: one journal entry (``q-0000000042``)."""
        return _join(self.journal, name)

    def journal_entry_prefix(self) -> str:
        """``<hbrep root>/journal/q-``: where a sequential journal entry is created."""
        return _join(self.journal, JOURNAL_ENTRY_PREFIX)

    def consistency_token(self, token: str) -> str:
        """``<hbrep root>/consistency/<token>``: the record of one consistency token."""
        return _join(self.consistency_tokens, token)

    def __repr__(self) -> str:
        return f"ZNodePaths(parent={self.parent!r})"
