"""What a cluster records about itself in ZooKeeper, and its RPC token.

``<parent>/hbrep-cluster`` holds JSON ``{"name", "root", "znode_parent"}`` so that every command needs
only the cluster key. The token that every RPC must carry lives in ``<root>/.hbrep/token`` (mode 0600),
unless ``hbrep.cluster.token`` is set in the configuration.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import secrets
import tempfile
from dataclasses import asdict, dataclass
from urllib.parse import urlparse

from kazoo.client import KazooClient

from replication.cluster.errors import ClusterError, NoClusterInfo
from replication.config import Config
from replication.fs import FileSystem, FileSystemError
from replication.zk.cluster_registration import ClusterInfoStorage

STATE_DIR = ".hbrep"
TOKEN_FILE = "token"


@dataclass
class ClusterInfo:
    """A cluster's name, filesystem root (``hbase.rootdir``: a local path, or a URI such as
    ``webhdfs://nn:9870/hbase`` for a root on HDFS) and znode parent."""

    name: str
    root: str
    znode_parent: str

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> ClusterInfo:
        """Parse the znode value; ClusterError naming the znode when it is not our JSON."""
        try:
            raw = json.loads(data.decode())
            return cls(name=str(raw["name"]), root=str(raw["root"]), znode_parent=str(raw["znode_parent"]))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            raise ClusterError(f"cluster info at {where} is not valid hbrep JSON") from None


def _parent(paths: object) -> str:
    return str(paths if isinstance(paths, str) else paths.parent)  # type: ignore[attr-defined]


def write_cluster_info(zk: KazooClient, paths: object, info: ClusterInfo) -> None:
    """Record ``info`` at ``<parent>/hbrep-cluster`` (created, or replaced when present).

    ``paths`` is a ZNodePaths (anything with ``.parent``) or the znode parent string.
    """
    ClusterInfoStorage(zk, _parent(paths)).write(info.to_json())


def read_cluster_info(zk: KazooClient, paths: object) -> ClusterInfo:
    """The recorded ClusterInfo; NoClusterInfo ("no hbrep cluster at <key>") when absent."""
    parent = _parent(paths)
    storage = ClusterInfoStorage(zk, parent)
    data = storage.read()
    if data is None:
        hosts = getattr(zk, "hosts", "")
        raise NoClusterInfo(f"no hbrep cluster at {_hosts_text(hosts)}:{parent}")
    return ClusterInfo.from_json(data, storage.path)


def _hosts_text(hosts: object) -> str:
    # kazoo keeps the parsed host list; show it as "h1:p1,h2:p2"
    if isinstance(hosts, str):
        return hosts
    try:
        return ",".join(f"{h}:{p}" for h, p in hosts)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return str(hosts)


def state_dir(root: str) -> str:
    """``<root>/.hbrep`` on the cluster's filesystem (``root`` as that filesystem's path): the token."""
    return posixpath.join(root, STATE_DIR)


def local_state_dir(root: str) -> str:
    """Where the cluster's processes keep their pid files, logs and site file on this machine.

    ``root`` is the cluster's root as recorded (a path or URI). For a local root that is
    ``<root>/.hbrep``; for a root on another filesystem (``webhdfs://nn:9870/hbase``) it is a folder
    under the system temp dir named after the URI, since pid files and logs belong to local processes.
    """
    parsed = urlparse(root)
    if parsed.scheme in ("", "file"):
        return os.path.join(parsed.path if parsed.scheme else root, STATE_DIR)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{parsed.scheme}_{parsed.netloc}{parsed.path}").strip("_")
    return os.path.join(tempfile.gettempdir(), "hbrep-clusters", name, STATE_DIR)


def token_path(root: str) -> str:
    return posixpath.join(state_dir(root), TOKEN_FILE)


def create_token_if_absent(fs: FileSystem, root: str) -> str:
    """Create ``<root>/.hbrep/token`` (0600, 32 random bytes as hex) unless it exists; return the token."""
    path = token_path(root)
    if fs.exists(path):
        return cluster_token(fs, root)
    token = secrets.token_hex(32)
    fs.write_atomic(path, token.encode())
    if os.path.exists(path):  # local filesystem: restrict to the owner
        os.chmod(path, 0o600)
    return token


def cluster_token(fs: FileSystem, root: str, conf: Config | None = None) -> str:
    """The cluster's RPC token: ``hbrep.cluster.token`` when set, else the token file under the root.

    Raises ClusterError naming the file when neither exists.
    """
    if conf is not None:
        configured = conf.get_str("hbrep.cluster.token", "")
        if configured:
            return configured
    path = token_path(root)
    try:
        token = fs.read_range(path, 0).decode().strip()
    except FileSystemError:
        raise ClusterError(f"cluster token file {path} is missing (was the cluster started with hbrep?)") from None
    if not token:
        raise ClusterError(f"cluster token file {path} is empty")
    return token
