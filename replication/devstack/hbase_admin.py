"""HBase's own Admin API for any real HBase cluster, by its cluster key (``hbrep add_peer --shadow``).

A running HBase 2.x learns about peers only through its master's procedures (AddPeerProcedure and the
RefreshPeerProcedure it sends every region server), so a peer written into its ZooKeeper directly is
seen only after a restart. hbrep therefore asks HBase itself: the AdminTool compiled from the checked-in
Maven project (``interop/hbase``, the pinned HBase client from Maven Central), with a configuration that
holds only what the cluster key says (quorum, client port, znode parent).
"""

from __future__ import annotations

import tempfile
from typing import Any

from replication.config import write_site_xml
from replication.devstack.hbase import LOG4J2_TOOLS, HBaseError, RealHBase
from replication.zk.cluster_key import ClusterKey


def client_site(key: ClusterKey) -> dict[str, str]:
    """The hbase-site.xml values of an HBase client of the cluster at ``key``."""
    return {
        "hbase.zookeeper.quorum": ",".join(f"{host}:{port}" for host, port in key.servers),
        "hbase.zookeeper.property.clientPort": str(key.servers[0][1]),
        "zookeeper.znode.parent": key.znode_parent,
        "hbase.client.retries.number": "5",
    }


def hbase_admin(key: ClusterKey, *args: str, stdin: str | None = None) -> Any:
    """Run one AdminTool command against the real HBase at ``key``; its JSON answer, or HBaseError with
    the tool's last error line (e.g. the master cannot be reached, the peer exists)."""
    with tempfile.TemporaryDirectory(prefix="hbrep-hbase-client-") as folder:
        client = RealHBase(folder)  # only its conf/ folder: the tools' classpath, site file and log config
        client.conf_dir.mkdir()
        write_site_xml(client.site_file, client_site(key))
        (client.conf_dir / "log4j2-tools.properties").write_text(LOG4J2_TOOLS)
        try:
            return client.admin(*args, stdin=stdin)
        except HBaseError as exc:
            lines = str(exc).splitlines()
            tool_lines = [line for line in lines if line.startswith("AdminTool ")]
            raise HBaseError(f"HBase Admin at {key}: {(tool_lines or lines)[-1]}") from None
