"""A real HBase's table descriptors, read from its rootdir (what verify needs to pick the replicated
families of a real HBase source: each family's REPLICATION_SCOPE and VERSIONS).

HBase's FSTableDescriptors keeps each table's schema in
``<rootdir>/data/<namespace>/<table>/.tabledesc/.tableinfo.<sequence>[.<length>]``: the PB magic
``PBUF``, then a ``TableSchema`` (HBase.proto); the file with the highest sequence is current. The
family attributes are strings: ``REPLICATION_SCOPE`` (default 0) and ``VERSIONS`` (default 1).
"""

from __future__ import annotations

import re

from google.protobuf.message import DecodeError

from replication.fs.types import FileSystem
from replication.proto import HBase_pb2
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor
from replication.tables.errors import TableError
from replication.tables.names import TableName

PB_MAGIC = b"PBUF"
TABLEDESC_DIR = ".tabledesc"
_TABLEINFO = re.compile(r"^\.tableinfo\.(\d{10})(\.\d+)?$")


def parse_tableinfo(data: bytes, where: str) -> TableDescriptor:
    """The descriptor in one ``.tableinfo`` file; TableError naming ``where`` when it is not one."""
    if not data.startswith(PB_MAGIC):
        raise TableError(f"{where} is not an HBase table descriptor (no PBUF magic)")
    schema = HBase_pb2.TableSchema()
    try:
        schema.ParseFromString(data[len(PB_MAGIC) :])
        return _descriptor(schema, where)
    except (DecodeError, UnicodeDecodeError):
        raise TableError(f"{where} is not an HBase table descriptor (bad TableSchema)") from None


def _descriptor(schema: HBase_pb2.TableSchema, where: str) -> TableDescriptor:
    namespace, qualifier = schema.table_name.namespace.decode(), schema.table_name.qualifier.decode()
    families = []
    for family in schema.column_families:
        attributes = {a.first.decode(): a.second.decode() for a in family.attributes}
        try:
            scope = int(attributes.get("REPLICATION_SCOPE", "0"))
            versions = int(attributes.get("VERSIONS", "1"))
        except ValueError:
            raise TableError(f"{where}: family {family.name.decode()} has a non-numeric scope or VERSIONS") from None
        families.append(ColumnFamilyDescriptor(family.name.decode(), scope=scope, max_versions=versions))
    name = qualifier if namespace == "default" else f"{namespace}:{qualifier}"
    return TableDescriptor.of(name, *families)


def current_tableinfo(fs: FileSystem, table_dir: str) -> str | None:
    """The path of the table's current ``.tableinfo`` file (highest sequence), or None."""
    folder = fs.join(table_dir, TABLEDESC_DIR)
    if not fs.exists(folder):
        return None
    named = [(int(m.group(1)), s.path) for s in fs.list(folder) if (m := _TABLEINFO.match(s.name))]
    return max(named)[1] if named else None


def read_hbase_table(fs: FileSystem, rootdir: str, name: TableName) -> TableDescriptor | None:
    """The descriptor of one table (``<rootdir>/data/<namespace>/<qualifier>``), or None when it has none."""
    path = current_tableinfo(fs, fs.join(rootdir, "data", name.namespace, name.qualifier))
    return parse_tableinfo(fs.read_range(path, 0), path) if path is not None else None


def read_hbase_tables(fs: FileSystem, rootdir: str) -> list[TableDescriptor]:
    """Every table under ``<rootdir>/data`` whose descriptor file exists, sorted by name."""
    tables = []
    data = fs.join(rootdir, "data")
    if not fs.exists(data):
        return tables
    for namespace in (s for s in fs.list(data) if s.is_dir):
        for table_dir in (s for s in fs.list(namespace.path) if s.is_dir):
            path = current_tableinfo(fs, table_dir.path)
            if path is not None:
                tables.append(parse_tableinfo(fs.read_range(path, 0), path))
    return sorted(tables, key=lambda d: d.name)
