"""hbrep's ReplicationPeerConfig as HBase's ReplicationPeer message and back.

The peer znode's protobuf is HBase's ReplicationPeer message, so the conversion is the znode codec of
``zk.peer_storage`` without the ``PBUF`` magic: one mapping for the znode and the MasterService calls.
"""

from __future__ import annotations

from replication.proto import Replication_pb2
from replication.zk import codec
from replication.zk.peer_storage import ReplicationPeerConfig


def peer_to_pb(config: ReplicationPeerConfig) -> Replication_pb2.ReplicationPeer:
    """HBase's ReplicationPeer for ``config`` (the same bytes the peer znode holds after ``PBUF``)."""
    peer = Replication_pb2.ReplicationPeer()
    peer.ParseFromString(config.to_bytes()[len(codec.PB_MAGIC) :])
    return peer


def peer_from_pb(peer: Replication_pb2.ReplicationPeer, what: str = "peer") -> ReplicationPeerConfig:
    """The ReplicationPeerConfig of HBase's ReplicationPeer message (BadZNodeData naming ``what`` if bad)."""
    return ReplicationPeerConfig.from_bytes(codec.PB_MAGIC + peer.SerializeToString(), what)
