"""The seed's snapshot copy between real HBase clusters with HBase's own Java tools (``hbrep seed_peer``, the
``hbrep_seed_peer`` DAG): a :class:`replication.operations.seed_snapshot.SnapshotCopier`.

The snapshot, restore and delete go through the AdminTool and the copy through HBase's ExportSnapshot, both
from the pinned Maven classpath (``hbase_admin.py``): ExportSnapshot is a MapReduce tool with no RPC of its
own, so this part of a seed needs a JDK where it runs.
"""

from __future__ import annotations

from replication.config import Config
from replication.devstack.hbase_admin import hbase_admin, hbase_tool
from replication.operations.seed_snapshot import hadoop_uri
from replication.zk.cluster_key import ClusterKey

EXPORT_SNAPSHOT_MAIN = "org.apache.hadoop.hbase.snapshot.ExportSnapshot"
EXPORT_TIMEOUT_S = 1800.0


class JavaSnapshotCopier:
    """HBase's snapshot, ExportSnapshot and clone or restore, run as HBase's Java tools; as hbrep's Kerberos
    identity when ``conf`` asks for Kerberos (``hbase_admin.kerberos_login``: HBase's client keys, a ticket
    from hbrep's keytab)."""

    def __init__(self, conf: Config | None = None) -> None:
        self.conf = conf

    def copy_table(
        self, source: ClusterKey, source_rootdir: str, peer: ClusterKey, peer_rootdir: str, table: str, name: str
    ) -> str:
        """Make ``table`` on the peer the source's snapshot ``name`` of it; ``cloned`` (the table was missing)
        or ``restored``. HBaseError naming the step's cluster and its last error line."""
        conf = self.conf
        hbase_admin(source, "snapshot", table, name, conf=conf)
        args = ["-snapshot", name, "-copy-to", hadoop_uri(peer_rootdir), "-overwrite", "-mappers", "2"]
        if any(hadoop_uri(r).startswith("file:") for r in (source_rootdir, peer_rootdir)):
            # A local rootdir (tests, demos) has no comparable file checksum: HBase writes it through the raw
            # local filesystem (no .crc files) and ExportSnapshot copies through the checksummed one, so its
            # check reports a mismatch for every file. HDFS to HDFS keeps ExportSnapshot's checksum check.
            args.append("-no-checksum-verify")
        hbase_tool(
            source, EXPORT_SNAPSHOT_MAIN, args,
            site={"hbase.rootdir": hadoop_uri(source_rootdir)}, timeout=EXPORT_TIMEOUT_S, heap_mb=512, conf=conf,
        )  # fmt: skip
        action = str(hbase_admin(peer, "restore-snapshot", name, table, conf=conf)["action"])
        hbase_admin(peer, "delete-snapshot", name, conf=conf)  # the clone keeps its files (HBase's archive links them)
        hbase_admin(source, "delete-snapshot", name, conf=conf)
        return action
