"""A peer's hfile-refs queue (``ZKReplicationQueueStorage``'s hfile-refs, spec §3):
``<parent>/replication/hfile-refs/<peerId>/<store file name>``, empty znodes.

HBase's ReplicationObserver adds a reference for every store file a bulk load commits, for every peer
that replicates its table and family (disabled peers too), before the bulk-load marker reaches the WAL;
the peer's source removes it once the peer acknowledged the marker (ReplicationSourceShipper
``cleanUpHFileRefs``); ReplicationHFileCleaner keeps an archived store file while any peer refers to it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.zk.layout import ZNodePaths


class HFileRefsStorage:
    """One peer's hfile-refs znodes."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths, peer_id: str):
        self.zk = zk
        self.peer_dir = paths.hfile_refs_of(peer_id)

    def exists(self, hfile: str) -> bool:
        """True while ``hfile`` is referenced (queued, not yet acknowledged by the peer)."""
        return self.zk.exists(f"{self.peer_dir}/{hfile}") is not None

    def list(self) -> list[str]:
        """The referenced store file names, sorted; empty when the peer has no hfile-refs znode."""
        try:
            return sorted(self.zk.get_children(self.peer_dir))
        except NoNodeError:
            return []

    def remove(self, hfiles: Iterable[str]) -> int:
        """Delete the references to ``hfiles`` (a missing one is skipped, as HBase's removeHFileRefs
        does); the number deleted."""
        removed = 0
        for name in hfiles:
            try:
                self.zk.delete(f"{self.peer_dir}/{name}")
                removed += 1
            except NoNodeError:
                pass
        return removed
