"""HBase's own Admin API for any real HBase cluster, by its cluster key (``hbrep add_peer --shadow``).

A running HBase 2.x learns about peers only through its master's procedures (AddPeerProcedure and the
RefreshPeerProcedure it sends every region server), so a peer written into its ZooKeeper directly is
seen only after a restart. hbrep therefore asks HBase itself: the AdminTool compiled from the checked-in
Maven project (``interop/hbase``, the pinned HBase client from Maven Central), with a configuration that
holds only what the cluster key says (quorum, client port, znode parent).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from replication.config import write_site_xml
from replication.devstack.hbase import ADMIN_TOOL_MAIN, JAVA17_OPTIONS, LOG4J2_TOOLS, HBaseError
from replication.devstack.maven import interop_tools_classpath
from replication.zk.cluster_key import ClusterKey


def client_site(key: ClusterKey) -> dict[str, str]:
    """The hbase-site.xml values of an HBase client of the cluster at ``key``."""
    return {
        "hbase.zookeeper.quorum": ",".join(f"{host}:{port}" for host, port in key.servers),
        "hbase.zookeeper.property.clientPort": str(key.servers[0][1]),
        "zookeeper.znode.parent": key.znode_parent,
        "hbase.client.retries.number": "5",
    }


def hbase_admin(key: ClusterKey, *args: str, stdin: str | None = None, timeout: float = 300.0) -> Any:
    """Run one AdminTool command against the real HBase at ``key``; its JSON answer, or HBaseError with
    the tool's last error line (e.g. the master cannot be reached, the peer exists)."""
    with tempfile.TemporaryDirectory(prefix="hbrep-hbase-client-") as folder:
        conf = Path(folder)
        write_site_xml(conf / "hbase-site.xml", client_site(key))
        (conf / "log4j2-tools.properties").write_text(LOG4J2_TOOLS)
        command = [
            "java",
            "-Xmx256m",
            *JAVA17_OPTIONS,
            f"-Dlog4j2.configurationFile={conf / 'log4j2-tools.properties'}",
            "-cp",
            f"{conf}:{interop_tools_classpath()}",
            ADMIN_TOOL_MAIN,
            *args,
        ]
        try:
            done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HBaseError(f"HBase Admin {args[0]} at {key} did not answer within {timeout:.0f}s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.startswith("AdminTool ")]
        last = lines[-1] if lines else (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise HBaseError(f"HBase Admin at {key}: {last}")
    return json.loads(done.stdout)
