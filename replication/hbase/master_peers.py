"""A real HBase's replication peers with the interface of hbrep's ``ReplicationPeerStorage``.

Every change is one of the master's procedures (``master_admin``), so the master and its region
servers apply it at once and nothing writes HBase's peer znodes behind the master's back (issue 49).
The CLI's peer commands use this class or ``ReplicationPeerStorage`` alike.
"""

from __future__ import annotations

from collections.abc import Callable

from replication.errors import HbrepError
from replication.hbase.master_admin import MasterAdmin, PeerDescription
from replication.secrets import refuse_plain_secrets
from replication.zk.peer_config_edits import BadPeerConfig, check_peer_config
from replication.zk.peer_storage import PeerNotFound, ReplicationPeerConfig


class MasterPeerStorage:
    """The peers of the real HBase whose master ``admin`` talks to."""

    def __init__(self, admin: MasterAdmin):
        self.admin = admin

    @property
    def where(self) -> str:
        """``HBase master host:port`` (for messages)."""
        return f"HBase master {self.admin.master.address}"

    def add_peer(self, peer_id: str, config: ReplicationPeerConfig, enabled: bool = True) -> None:
        """AddReplicationPeer, waited for (PeerExists when the master has the id)."""
        refuse_plain_secrets(config.configuration)
        self.admin.add_replication_peer(peer_id, config, enabled)

    def remove_peer(self, peer_id: str) -> None:
        """RemoveReplicationPeer, waited for (HBase deletes the peer's queues itself)."""
        self.admin.remove_replication_peer(peer_id)

    def set_peer_state(self, peer_id: str, enabled: bool) -> None:
        """EnableReplicationPeer / DisableReplicationPeer, waited for."""
        if enabled:
            self.admin.enable_replication_peer(peer_id)
        else:
            self.admin.disable_replication_peer(peer_id)

    def is_peer_enabled(self, peer_id: str) -> bool:
        """IsReplicationPeerEnabled."""
        return self.admin.is_replication_peer_enabled(peer_id)

    def get_peer_config(self, peer_id: str) -> ReplicationPeerConfig:
        """GetReplicationPeerConfig (PeerNotFound when the master has no such peer)."""
        return self.admin.get_replication_peer_config(peer_id)

    def peer_exists(self, peer_id: str) -> bool:
        """True when the master lists the peer."""
        return any(p.peer_id == peer_id for p in self.admin.list_replication_peers())

    def list_peer_ids(self) -> list[str]:
        """Every peer id the master knows, sorted."""
        return [p.peer_id for p in self.admin.list_replication_peers()]

    def list_peers(self) -> list[PeerDescription]:
        """Every peer with its state and config, in one ListReplicationPeers call."""
        return self.admin.list_replication_peers()

    def edit_peer_config(
        self, peer_id: str, edit: Callable[[ReplicationPeerConfig], ReplicationPeerConfig]
    ) -> ReplicationPeerConfig:
        """Read the peer's config from the master, apply ``edit``, check it as hbrep's znode path does and
        UpdateReplicationPeerConfig it (waited for); what was sent."""
        old = self.get_peer_config(peer_id)
        new = edit(old)
        if new.cluster_key != old.cluster_key:
            raise BadPeerConfig("Changing the cluster key on an existing peer is not allowed")
        if new.replication_endpoint_impl != old.replication_endpoint_impl:
            raise BadPeerConfig("Changing the replication endpoint implementation class is not allowed")
        check_peer_config(new)
        refuse_plain_secrets(new.configuration)
        self.admin.update_replication_peer_config(peer_id, new)
        return new


def require_peer(storage: MasterPeerStorage, peer_id: str) -> None:
    """PeerNotFound (one line) unless the master has ``peer_id``."""
    if not storage.peer_exists(peer_id):
        raise PeerNotFound(f"peer {peer_id} does not exist ({storage.where})")


__all__ = ["HbrepError", "MasterPeerStorage", "require_peer"]
