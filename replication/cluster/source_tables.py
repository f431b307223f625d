"""The source cluster's user tables, wherever their descriptors are kept: hbrep's table registry under
its root, or a real HBase source's ``.tableinfo`` files under its rootdir (``tables/hbase_descriptors.py``)."""

from __future__ import annotations

from replication.cluster.source_cluster import SourceCluster
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.errors import UnknownTable
from replication.tables.hbase_descriptors import read_hbase_table, read_hbase_tables
from replication.tables.names import TableName


def user_tables(source: SourceCluster) -> list[TableDescriptor]:
    """Every table of the source outside HBase's reserved namespace, by name."""
    if source.is_real_hbase:
        return [d for d in read_hbase_tables(source.fs, source.root) if not d.is_system]
    return [d for d in TableRegistry(source.fs, source.root).list() if not d.is_system]


def source_table(source: SourceCluster, table: str) -> TableDescriptor:
    """The descriptor of ``table`` (``t`` or ``ns:t``); UnknownTable naming it and the source."""
    if not source.is_real_hbase:
        return TableRegistry(source.fs, source.root).get(table)
    desc = read_hbase_table(source.fs, source.root, TableName.parse(table))
    if desc is None:
        raise UnknownTable(f"table {table} does not exist on the HBase source {source.key}")
    return desc
