"""Seeding one real HBase cluster from another with HBase's own tools: snapshot, ExportSnapshot, restore.

This is HBase's manual recipe (the reference guide's "ExportSnapshot" and "clone_snapshot" steps) run as
one step of a seed (``seed.py``): a snapshot of the table on the source (its Admin, which flushes the table
first), ``org.apache.hadoop.hbase.snapshot.ExportSnapshot`` copying its files into the peer's
``hbase.rootdir``, then on the peer ``cloneSnapshot`` when the table is missing (created with the source's
descriptor) or disable, ``restoreSnapshot``, enable when it exists. Every step is idempotent, so a seed
killed half way runs it again: a snapshot that exists is kept, the export overwrites, the restore is
repeated.

ExportSnapshot is a MapReduce tool of HBase's, Java only: the copy is a :class:`SnapshotCopier` handed in
by the caller (the CLI and the Airflow hook hand in ``devstack/hbase_snapshots.py``'s, which runs HBase's
tools from the pinned Maven classpath), so nothing here needs a JDK. Whether the peer has a table, and
creating one, go through the peer's master over HBase's RPC (``hbase/master_admin.py``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Protocol

from replication.config import Config
from replication.hbase.master_admin import master_at
from replication.hbase.table_schemas import schema_of
from replication.tables.descriptors import TableDescriptor
from replication.zk.cluster_key import ClusterKey


class SnapshotCopier(Protocol):
    """Copies a table between two real HBase clusters with HBase's snapshot tools."""

    def copy_table(
        self, source: ClusterKey, source_rootdir: str, peer: ClusterKey, peer_rootdir: str, table: str, name: str
    ) -> str:
        """Make ``table`` on the peer the source's snapshot ``name`` of it; ``cloned`` (the table was missing)
        or ``restored``. An HbrepError naming the step's cluster and its last error line when a step fails."""
        ...


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


def table_exists(peer: ClusterKey, table: str, conf: Config) -> bool:
    """Whether the real HBase at ``peer`` has ``table`` (its master's GetTableNames)."""
    with master_at(peer, conf) as admin:
        return admin.table_exists(table)


def create_table(peer: ClusterKey, desc: TableDescriptor, conf: Config) -> None:
    """Create ``desc``'s table on the real HBase at ``peer`` (families, their scopes and versions), through its
    master's CreateTable procedure."""
    with master_at(peer, conf) as admin:
        admin.create_table(schema_of(desc))
