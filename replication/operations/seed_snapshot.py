"""Seeding one real HBase cluster from another with HBase's own tools: snapshot, ExportSnapshot, restore.

This is HBase's manual recipe (the reference guide's "ExportSnapshot" and "clone_snapshot" steps) run as
one step of a seed (``replication/operations/seed.py``): a snapshot of the table on the source (its Admin, which
flushes the table first), ``org.apache.hadoop.hbase.snapshot.ExportSnapshot`` (hbase-mapreduce from the
pinned Maven classpath, local job runner) copying its files into the peer's ``hbase.rootdir``, then on the
peer ``cloneSnapshot`` when the table is missing (created with the source's descriptor) or disable,
``restoreSnapshot``, enable when it exists. Every step is idempotent, so a seed killed half way runs it
again: a snapshot that exists is kept, the export overwrites, the restore is repeated.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from replication.devstack.hbase_admin import hbase_admin, hbase_tool
from replication.zk.cluster_key import ClusterKey

EXPORT_SNAPSHOT_MAIN = "org.apache.hadoop.hbase.snapshot.ExportSnapshot"
EXPORT_TIMEOUT_S = 1800.0


def snapshot_name(peer_id: str, table: str, started_ms: int) -> str:
    """The seed's snapshot of ``table``: ``hbrep-seed-<peer>-<ns>_<table>-<started>`` in the characters HBase
    allows in a snapshot name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"hbrep-seed-{peer_id}-{table.replace(':', '_')}-{started_ms}")


def hadoop_uri(rootdir: str) -> str:
    """A rootdir as Hadoop's FileSystem takes it: a bare local path becomes ``file://``; ``hdfs://``,
    ``webhdfs://`` and ``file:`` URIs are kept."""
    if "://" in rootdir or rootdir.startswith("file:"):
        return rootdir
    return f"file://{PurePosixPath(rootdir)}"


def copy_table_by_snapshot(
    source: ClusterKey, source_rootdir: str, peer: ClusterKey, peer_rootdir: str, table: str, name: str
) -> str:
    """Make ``table`` on the peer the source's snapshot ``name`` of it; ``cloned`` (the table was missing)
    or ``restored``. HBaseError naming the step's cluster and its last error line."""
    hbase_admin(source, "snapshot", table, name)
    args = ["-snapshot", name, "-copy-to", hadoop_uri(peer_rootdir), "-overwrite", "-mappers", "2"]
    if any(hadoop_uri(r).startswith("file:") for r in (source_rootdir, peer_rootdir)):
        # A local rootdir (tests, demos) has no comparable file checksum: HBase writes it through the raw
        # local filesystem (no .crc files) and ExportSnapshot copies through the checksummed one, so its
        # check reports a mismatch for every file. HDFS to HDFS keeps ExportSnapshot's checksum check.
        args.append("-no-checksum-verify")
    hbase_tool(
        source, EXPORT_SNAPSHOT_MAIN, args,
        site={"hbase.rootdir": hadoop_uri(source_rootdir)}, timeout=EXPORT_TIMEOUT_S, heap_mb=512,
    )  # fmt: skip
    action = str(hbase_admin(peer, "restore-snapshot", name, table)["action"])
    hbase_admin(peer, "delete-snapshot", name)  # the clone keeps its files (HBase's archive links them)
    hbase_admin(source, "delete-snapshot", name)
    return action


def table_exists(peer: ClusterKey, table: str) -> bool:
    """Whether the real HBase at ``peer`` has ``table``."""
    return bool(hbase_admin(peer, "table-exists", table)["exists"])


def create_table(peer: ClusterKey, name: str, families: list[tuple[str, int, int]]) -> None:
    """Create ``name`` on the real HBase at ``peer`` with (family, scope, max versions) each."""
    hbase_admin(peer, "create-table", name, "1", *(f"{f}:{scope}:{versions}" for f, scope, versions in families))
