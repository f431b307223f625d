"""A real HBase cluster registered as a source of hbrep's ship DAGs (issue 21's "shadow peer").

An embedded hbrep cluster describes itself at ``<parent>/hbrep-cluster``; a real HBase does not, and
hbrep does not write that znode into HBase's tree, because peers and tools read it as "this is an
hbrep cluster" (peer protocol detection, verify, the RPC client). Instead ``hbrep add_peer --shadow
--rootdir URI`` records, under hbrep's own root, where HBase's WALs can be read:
``<hbrep root>/hbase-source`` holds JSON ``{"rootdir": URI, "thrift": "host:port"}`` (HBase's
``hbase.rootdir`` as hbrep's file system layer reads it: a local path, ``file:///...`` or
``webhdfs://nn:9870/hbase``; the Thrift server verify and the GX checks read its tables through).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kazoo.client import KazooClient

from replication.cluster.errors import ClusterError
from replication.fs import get_filesystem
from replication.zk.cluster_registration import HBaseSourceStorage
from replication.zk.layout import ZNodePaths


@dataclass(frozen=True)
class HBaseSource:
    """Where hbrep reads a real HBase source's WALs (``WALs/``, ``oldWALs/`` under ``rootdir``)."""

    rootdir: str
    thrift: str = ""  # host:port of the cluster's HBase Thrift server: verify and GX read its tables there

    def to_json(self) -> bytes:
        return json.dumps({"rootdir": self.rootdir, "thrift": self.thrift}, sort_keys=True).encode()


def check_rootdir(rootdir: str) -> str:
    """``rootdir`` when hbrep's file system layer can read it and it holds HBase's WALs/ folder;
    ClusterError naming the URI otherwise (a typo must not register a source whose WALs are never found)."""
    fs, root = get_filesystem(rootdir)
    if not fs.exists(fs.join(root, "WALs")):
        raise ClusterError(f"--rootdir {rootdir}: no WALs/ folder there; give HBase's hbase.rootdir as hbrep reads it")
    return rootdir


def register_hbase_source(zk: KazooClient, paths: ZNodePaths, source: HBaseSource) -> None:
    """Record ``source`` at ``<hbrep root>/hbase-source`` (created, or replaced when present)."""
    HBaseSourceStorage(zk, paths).write(source.to_json())


def read_hbase_source(zk: KazooClient, paths: ZNodePaths) -> HBaseSource | None:
    """The registered real HBase source, or None when the cluster has none; ClusterError naming the znode
    when its data is not hbrep's JSON."""
    data = HBaseSourceStorage(zk, paths).read()
    if data is None:
        return None
    try:
        raw = json.loads(data.decode())
        return HBaseSource(rootdir=str(raw["rootdir"]), thrift=str(raw.get("thrift") or ""))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise ClusterError(f'{paths.hbase_source} is not hbrep\'s JSON {{"rootdir": URI}}') from None


def unregister_hbase_source(zk: KazooClient, paths: ZNodePaths) -> bool:
    """Delete the registration; True when there was one."""
    return HBaseSourceStorage(zk, paths).delete()
