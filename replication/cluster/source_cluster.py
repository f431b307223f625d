"""The source cluster as a cycle, failover, the cleaner and status see it: key, layout, root, cluster id."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from kazoo.client import KazooClient

from replication.cluster.errors import NoClusterInfo
from replication.cluster.hbase_source import HBaseSource, read_hbase_source
from replication.cluster.info import ClusterInfo, read_cluster_info
from replication.config import Config
from replication.fs import FileSystem, get_filesystem
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.migration import migrate_legacy_znodes


@dataclass
class SourceCluster:
    """The source cluster as a cycle sees it: key, layout, root and cluster id.

    ``root`` is the root as a path of ``fs``; ``root_uri`` is the root as recorded (a local path, or
    ``webhdfs://nn:9870/hbase``), which is what a process elsewhere (the Spark job) needs to find it.
    ``kind`` is ``hbrep`` for hbrep's own region servers, ``hbase`` for a real HBase cluster registered
    by ``add_peer --shadow`` (its own region servers and master write its queues, split its logs and
    clean its oldWALs; hbrep only ships).
    """

    key: ClusterKey
    paths: ZNodePaths
    root: str
    cluster_id: uuid.UUID
    fs: FileSystem
    root_uri: str = ""
    kind: str = "hbrep"

    @property
    def is_real_hbase(self) -> bool:
        """True for a real HBase source: HBase, not hbrep, owns its queues' writers, failover and cleaning."""
        return self.kind == "hbase"


def _recorded_source(zk: KazooClient, paths: ZNodePaths) -> ClusterInfo | HBaseSource:
    """The source's ClusterInfo (an hbrep cluster), else its registration as a real HBase source; NoClusterInfo
    naming both when it is neither."""
    try:
        return read_cluster_info(zk, paths)
    except NoClusterInfo as exc:
        registered = read_hbase_source(zk, paths)
        if registered is None:
            raise NoClusterInfo(f"{exc} (nor a real HBase source: see `hbrep add_peer --shadow`)") from None
        return registered


def open_source(zk: KazooClient, key: ClusterKey, conf: Config) -> SourceCluster:
    """Read the source's ClusterInfo (root) and cluster id; HbrepError when it is neither an hbrep
    cluster nor a real HBase registered as a source (``replication.cluster.hbase_source``).

    hbrep's own znodes left in HBase's replication tree by an older hbrep are moved to hbrep's root first
    (``replication.zk.migration``), so every command sees them where they are now kept.
    """
    paths = ZNodePaths(conf, parent=key.znode_parent)
    found = _recorded_source(zk, paths)
    if isinstance(found, ClusterInfo):
        recorded, kind = found.root, "hbrep"
    else:
        recorded, kind = found.rootdir, "hbase"
    migrate_legacy_znodes(zk, paths)
    fs, root = get_filesystem(recorded)
    return SourceCluster(key, paths, root, read_cluster_id(zk, paths), fs, root_uri=recorded, kind=kind)


def source_name(zk: KazooClient, key: ClusterKey, conf: Config) -> str:
    """The name the source goes by in Airflow's asset URIs (``hbrep://<name>/peer/<id>``): an hbrep cluster's
    recorded name; for a real HBase registered by ``add_peer --shadow`` (it has no ClusterInfo), ``hbase-`` and
    HBase's own cluster id (``<parent>/hbaseid``). NoClusterInfo when it is neither."""
    paths = ZNodePaths(conf, parent=key.znode_parent)
    found = _recorded_source(zk, paths)
    if isinstance(found, ClusterInfo):
        return found.name
    return f"hbase-{read_cluster_id(zk, paths)}"
