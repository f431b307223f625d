"""Bulk-load replication from a real HBase source (HBase's ``hbase.replication.bulkload.enabled``).

A bulk-load marker ships as HBase's own source ships it: the cell as it is (its descriptor cut down to
the stores the peer receives), with ``sourceBaseNamespaceDirPath`` and ``sourceHFileArchiveDirPath`` in
the ``ReplicateWALEntryRequest`` so the peer's ReplicationSink copies the store files from the source's
file system into its staging directory (HFileReplicator) and loads them.

Each store file ships at most once: a file ships only while its hfile-refs znode exists, and the
reference is deleted right after the peer acknowledged the batch holding it (before the queue position
moves, as HBase's shipper does). A batch re-read later (a cycle that failed after the peer answered, a
position reset) finds the reference gone and ships the marker without that file. Only a crash between
the peer's answer and the delete can ship a file twice, the window HBase's own source has.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from kazoo.client import KazooClient

from replication.zk.hfile_refs import HFileRefsStorage
from replication.zk.layout import ZNodePaths

LOG = logging.getLogger(__name__)

BASE_NAMESPACE_DIR = "data"  # HConstants.BASE_NAMESPACE_DIR
HFILE_ARCHIVE_DIRECTORY = "archive"  # HConstants.HFILE_ARCHIVE_DIRECTORY


def hadoop_uri(rootdir: str) -> str:
    """``rootdir`` as the peer's Hadoop file system reads it: a bare local path becomes ``file:PATH``;
    a URI (``file:``, ``hdfs:``, ``webhdfs:``) is kept."""
    root = rootdir.rstrip("/") or "/"
    return root if "://" in root or root.startswith("file:") else f"file:{root}"


def source_hfile_dirs(rootdir: str) -> tuple[str, str]:
    """(sourceBaseNamespaceDirPath, sourceHFileArchiveDirPath) of a source rooted at ``rootdir``:
    ``<root>/data`` and ``<root>/archive/data``, as HBaseInterClusterReplicationEndpoint sends them."""
    root = hadoop_uri(rootdir)
    return f"{root}/{BASE_NAMESPACE_DIR}", f"{root}/{HFILE_ARCHIVE_DIRECTORY}/{BASE_NAMESPACE_DIR}"


class PeerHFileRefs:
    """One peer's hfile-refs on the source cluster, reached through a ZooKeeper session opened on first
    use (only a queue that meets a bulk-load marker opens one)."""

    def __init__(self, connect: Callable[[], KazooClient], paths: ZNodePaths, peer_id: str):
        self._connect = connect
        self._paths = paths
        self.peer_id = peer_id
        self._zk: KazooClient | None = None
        self._storage: HFileRefsStorage | None = None
        self.skipped = 0  # store files met whose reference was already gone (delivered before)

    def _refs(self) -> HFileRefsStorage:
        if self._storage is None:
            self._zk = self._connect()
            self._storage = HFileRefsStorage(self._zk, self._paths, self.peer_id)
        return self._storage

    def pending(self, hfile: str) -> bool:
        """True while ``hfile`` still waits for the peer (its reference exists)."""
        if self._refs().exists(hfile):
            return True
        self.skipped += 1
        LOG.info("peer %s: store file %s has no hfile-refs znode (already delivered); not shipped", self.peer_id, hfile)
        return False

    def acknowledged(self, hfiles: Iterable[str]) -> int:
        """Delete the references of store files the peer acknowledged; how many were deleted."""
        names = list(hfiles)
        return self._refs().remove(names) if names else 0

    def close(self) -> None:
        """Close the ZooKeeper session, if one was opened."""
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
            self._zk = None
            self._storage = None
