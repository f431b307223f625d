"""Table schemas as a real HBase's master sends and takes them (HBase.proto TableSchema / ColumnFamilySchema).

A family's settings are ``attributes`` (``REPLICATION_SCOPE``, ``VERSIONS``, ...; HBase's
``ColumnFamilyDescriptorBuilder`` keys, values as strings). A schema read from the master is changed
in place of the one attribute an ``alter`` names, so every other setting HBase keeps is sent back as it
was; a new table gets only what hbrep knows (HBase fills in its defaults).
"""

from __future__ import annotations

from replication.proto import HBase_pb2
from replication.tables.descriptors import TableDescriptor
from replication.tables.errors import UnknownFamily
from replication.tables.hbase_descriptors import PB_MAGIC, parse_tableinfo
from replication.tables.names import TableName

REPLICATION_SCOPE = b"REPLICATION_SCOPE"
VERSIONS = b"VERSIONS"


def schema_of(desc: TableDescriptor) -> HBase_pb2.TableSchema:
    """The TableSchema CreateTable takes for ``desc`` (each family's REPLICATION_SCOPE and VERSIONS)."""
    name = TableName.parse(desc.name)
    schema = HBase_pb2.TableSchema(
        table_name=HBase_pb2.TableName(namespace=name.namespace.encode(), qualifier=name.qualifier.encode())
    )
    for family in desc.families.values():
        cf = schema.column_families.add(name=family.name.encode())
        cf.attributes.add(first=REPLICATION_SCOPE, second=str(family.scope).encode())
        cf.attributes.add(first=VERSIONS, second=str(family.max_versions).encode())
    return schema


def descriptor_of(schema: HBase_pb2.TableSchema) -> TableDescriptor:
    """hbrep's TableDescriptor of a master's TableSchema (families, scopes, VERSIONS)."""
    return parse_tableinfo(PB_MAGIC + schema.SerializeToString(), "the master's table descriptor")


def family_schema(schema: HBase_pb2.TableSchema, family: str, table: str) -> HBase_pb2.ColumnFamilySchema:
    """The family's ColumnFamilySchema; TableError naming table and family when the table has none."""
    for cf in schema.column_families:
        if cf.name == family.encode():
            return cf
    raise UnknownFamily(f"table {table} has no column family '{family}'")


def set_attribute(family: HBase_pb2.ColumnFamilySchema, key: bytes, value: bytes) -> None:
    """Set (or add) one attribute of ``family`` in place."""
    for attribute in family.attributes:
        if attribute.first == key:
            attribute.second = value
            return
    family.attributes.add(first=key, second=value)


def scope_of(family: HBase_pb2.ColumnFamilySchema) -> int:
    """The family's REPLICATION_SCOPE (0 when not set, as HBase's default)."""
    for attribute in family.attributes:
        if attribute.first == REPLICATION_SCOPE:
            return int(attribute.second or b"0")
    return 0


def with_scope(schema: HBase_pb2.TableSchema, scope: int) -> HBase_pb2.TableSchema:
    """A copy of ``schema`` with REPLICATION_SCOPE ``scope`` on every family."""
    changed = HBase_pb2.TableSchema()
    changed.CopyFrom(schema)
    for family in changed.column_families:
        set_attribute(family, REPLICATION_SCOPE, str(scope).encode())
    return changed
