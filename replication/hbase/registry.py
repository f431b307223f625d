"""Finding a real HBase's active master and its cluster id, as HBase's ``ZKConnectionRegistry`` does.

The active master writes ``<parent>/master`` (``zookeeper.znode.master``): ``PBUF`` + ZooKeeper.proto's
``Master{master = ServerName}`` (``MasterAddressTracker``), behind RecoverableZooKeeper's metadata
prefix. The cluster id is ``<parent>/hbaseid``. When ``hbase.masters`` lists ``host:port`` entries
(``MasterRegistry``'s setting), those are asked first, in order, with ``MasterService.IsMasterRunning``;
the znode is the fallback.
"""

from __future__ import annotations

import contextlib
import posixpath
import uuid
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.cluster.errors import NoClusterInfo
from replication.cluster.info import read_cluster_info
from replication.config import Config
from replication.errors import HbrepError
from replication.proto import ZooKeeper_pb2
from replication.zk import codec
from replication.zk.acl import zk_access
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths

MASTER_ZNODE_KEY = "zookeeper.znode.master"
MASTERS_KEY = "hbase.masters"


class NoActiveMaster(HbrepError):
    """No HBase master is up for the cluster key (no ``<parent>/master``, or no listed master answers)."""


@dataclass(frozen=True)
class MasterAddress:
    """One master: host, RPC port and start code (0 when only ``host:port`` is known)."""

    host: str
    port: int
    start_code: int = 0

    @property
    def server_name(self) -> str:
        """HBase's ServerName string ``host,port,startcode``."""
        return f"{self.host},{self.port},{self.start_code}"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def parse_master_znode(data: bytes | None, what: str = "master znode") -> MasterAddress:
    """The master a ``<parent>/master`` value names (metadata prefix stripped, ``PBUF`` + Master).

    Raises BadZNodeData naming ``what`` for anything else (empty, no magic, a bad protobuf, no port).
    """
    return MasterAddress(*codec.parse_server_znode(data, ZooKeeper_pb2.Master, "master", what, "the master's"))


def master_znode_bytes(address: MasterAddress, info_port: int = 0) -> bytes:
    """``PBUF`` + Master for ``address`` (what ``MasterAddressTracker`` writes, without the metadata prefix)."""
    master = ZooKeeper_pb2.Master(rpc_version=0, info_port=info_port)
    master.master.host_name, master.master.port = address.host, address.port
    master.master.start_code = address.start_code
    return codec.PB_MAGIC + master.SerializeToString()


def master_znode_path(paths: ZNodePaths, conf: Config | None = None) -> str:
    """``<parent>/master`` (``zookeeper.znode.master`` names the child)."""
    name = conf.get_str(MASTER_ZNODE_KEY, "master") if conf is not None else "master"
    return posixpath.join(paths.parent, name)


def configured_masters(conf: Config | None) -> list[MasterAddress]:
    """The ``hbase.masters`` entries (``host:port`` or ``host``, port 16000), in order; [] when unset."""
    raw = conf.get_str(MASTERS_KEY, "") if conf is not None else ""
    found = []
    for entry in filter(None, (e.strip() for e in raw.split(","))):
        host, _, port = entry.rpartition(":") if ":" in entry else (entry, "", "16000")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise HbrepError(f"{MASTERS_KEY}: bad entry {entry!r}, expected host:port")
        found.append(MasterAddress(host, int(port)))
    return found


def read_active_master(zk: KazooClient, paths: ZNodePaths, conf: Config | None = None) -> MasterAddress | None:
    """The master ``<parent>/master`` names, or None when that znode does not exist."""
    path = master_znode_path(paths, conf)
    with zk_access(path):
        try:
            data, _ = zk.get(path)
        except NoNodeError:
            return None
    return parse_master_znode(data, path)


def active_master(zk: KazooClient, paths: ZNodePaths, cluster: ClusterKey, conf: Config | None = None) -> MasterAddress:
    """The active master of the real HBase at ``cluster``; NoActiveMaster ("no active HBase master at <key>")."""
    master = read_active_master(zk, paths, conf)
    if master is None:
        raise NoActiveMaster(f"no active HBase master at {cluster}")
    return master


def master_candidates(
    zk: KazooClient, paths: ZNodePaths, cluster: ClusterKey, conf: Config | None = None
) -> list[MasterAddress]:
    """The masters to try, in order: ``hbase.masters`` entries, then the znode's; NoActiveMaster when none."""
    found = configured_masters(conf)
    with contextlib.suppress(codec.BadZNodeData):
        znode = read_active_master(zk, paths, conf)
        if znode is not None and all(m.address != znode.address for m in found):
            found.append(znode)
    if not found:
        raise NoActiveMaster(f"no active HBase master at {cluster}")
    return found


def cluster_id(zk: KazooClient, paths: ZNodePaths) -> uuid.UUID:
    """The cluster id in ``<parent>/hbaseid`` (ClusterIdNotFound naming the znode when absent)."""
    return read_cluster_id(zk, paths)


def is_hbrep_cluster(zk: KazooClient, paths: ZNodePaths) -> bool:
    """True when an hbrep cluster is recorded under the parent (``<parent>/hbrep-cluster``)."""
    try:
        read_cluster_info(zk, paths)
    except NoClusterInfo:
        return False
    return True


def is_live_hbase(zk: KazooClient, paths: ZNodePaths, conf: Config | None = None) -> bool:
    """True when the cluster key names a running real HBase: no hbrep cluster info, and a master znode."""
    if is_hbrep_cluster(zk, paths):
        return False
    path = master_znode_path(paths, conf)
    with zk_access(path):
        return zk.exists(path) is not None


def names_real_hbase(zk: KazooClient, paths: ZNodePaths, conf: Config | None = None) -> bool:
    """True when the parent holds a real HBase (its master znode or its region servers), running or not,
    and no hbrep cluster: peer changes there belong to HBase's master (issue 49)."""
    if is_hbrep_cluster(zk, paths):
        return False
    marks = ("running", "meta-region-server")  # ClusterStatusTracker's and MetaTableLocator's, kept while stopped
    for path in (master_znode_path(paths, conf), *(posixpath.join(paths.parent, m) for m in marks)):
        with zk_access(path):
            if zk.exists(path) is not None:
                return True
    return False
