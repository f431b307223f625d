"""Znode paths of one cluster, from the HBase config keys (``ZNodePaths``, ``ZKReplicationStorageBase``)."""

from __future__ import annotations

from replication.config import Config

LOCK = "lock"  # the claim lock child of a replicator node (1.x ReplicationQueuesZKImpl.RS_LOCK_ZNODE)
CVERSION_PREFIX = "cversion_"  # transient child of the queues root, bumps its cversion (spec §3.4)


def _join(parent: str, child: str) -> str:
    return (parent.rstrip("/") + "/" + child) if parent != "/" else "/" + child


class ZNodePaths:
    """Absolute znode paths: ``parent``, ``hbaseid``, ``rs``, ``replication``, ``peers``, ``queues``."""

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

    def live_server(self, server: str) -> str:
        """``<parent>/rs/<server>``: the ephemeral znode of a live region server."""
        return _join(self.rs, server)

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

    def __repr__(self) -> str:
        return f"ZNodePaths(parent={self.parent!r})"
