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
from replication.devstack.hbase import ADMIN_TOOL_MAIN, LOG4J2_TOOLS, HBaseError, RealHBase
from replication.zk.cluster_key import ClusterKey


def client_site(key: ClusterKey) -> dict[str, str]:
    """The hbase-site.xml values of an HBase client of the cluster at ``key``."""
    return {
        "hbase.zookeeper.quorum": ",".join(f"{host}:{port}" for host, port in key.servers),
        "hbase.zookeeper.property.clientPort": str(key.servers[0][1]),
        "zookeeper.znode.parent": key.znode_parent,
        "hbase.client.retries.number": "5",
    }


def hbase_tool(
    key: ClusterKey,
    main_class: str,
    args: list[str],
    *,
    site: dict[str, str] | None = None,
    stdin: str | None = None,
    parse_json: bool = False,
    timeout: float = 300.0,
    heap_mb: int = 256,
    name: str = "HBase",
) -> Any:
    """Run one HBase tool (``main_class`` from the pinned HBase classpath) as a client of the real HBase at
    ``key``, with ``site`` added to its hbase-site.xml; its stdout (JSON with ``parse_json``), or HBaseError
    starting with ``name`` and the cluster, then the tool's last error line."""
    with tempfile.TemporaryDirectory(prefix="hbrep-hbase-client-") as folder:
        client = RealHBase(folder)  # only its conf/ folder: the tools' classpath, site file and log config
        client.conf_dir.mkdir()
        write_site_xml(client.site_file, {**client_site(key), **(site or {})})
        (client.conf_dir / "log4j2-tools.properties").write_text(LOG4J2_TOOLS)
        options = [f"-Dhadoop.tmp.dir={folder}/tmp"]  # a MapReduce tool's local job runner works there
        try:
            return client.run_tool(main_class, args, stdin=stdin, parse_json=parse_json, timeout=timeout,
                                   heap_mb=heap_mb, jvm_options=options)  # fmt: skip
        except HBaseError as exc:
            # the tool's own words, not a stack trace's frames ("\tat ...", "... 12 more")
            lines = [line for line in str(exc).splitlines() if line.strip() and not line[:1].isspace()]
            tool_lines = [line for line in lines if line.startswith("AdminTool ")]
            raise HBaseError(f"{name} at {key}: {(tool_lines or lines or ['no output'])[-1]}") from None


def hbase_admin(key: ClusterKey, *args: str, stdin: str | None = None) -> Any:
    """Run one AdminTool command against the real HBase at ``key``; its JSON answer, or HBaseError with
    the tool's last error line (e.g. the master cannot be reached, the peer exists)."""
    return hbase_tool(key, ADMIN_TOOL_MAIN, list(args), stdin=stdin, parse_json=True, name="HBase Admin")
