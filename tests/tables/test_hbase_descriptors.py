"""HBase's .tableinfo files (tables/hbase_descriptors.py): what FSTableDescriptors writes, hbrep reads.
The file HBase itself wrote is read in tests/interop/test_shadow_peer.py."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.fs import LocalFileSystem
from replication.proto import HBase_pb2
from replication.tables.errors import TableError
from replication.tables.hbase_descriptors import PB_MAGIC, parse_tableinfo, read_hbase_table, read_hbase_tables
from replication.tables.names import TableName


def _tableinfo(namespace: bytes, qualifier: bytes, families: dict[bytes, dict[bytes, bytes]]) -> bytes:
    schema = HBase_pb2.TableSchema()
    schema.table_name.namespace, schema.table_name.qualifier = namespace, qualifier
    for name, attributes in families.items():
        family = schema.column_families.add(name=name)
        for key, value in attributes.items():
            family.attributes.add(first=key, second=value)
    return PB_MAGIC + schema.SerializeToString()


def test_scope_and_versions_come_from_the_family_attributes_with_hbase_defaults():
    data = _tableinfo(b"default", b"t1", {b"a": {b"REPLICATION_SCOPE": b"1", b"VERSIONS": b"3"}, b"b": {}})
    desc = parse_tableinfo(data, "t1/.tableinfo.0000000001")
    assert desc.name == "t1" and sorted(desc.families) == ["a", "b"]
    assert (desc.family("a").scope, desc.family("a").max_versions) == (1, 3)
    assert (desc.family("b").scope, desc.family("b").max_versions) == (0, 1)
    assert parse_tableinfo(_tableinfo(b"ns", b"t2", {b"f": {}}), "x").name == "ns:t2"


def test_the_current_file_is_the_highest_sequence_and_system_tables_are_listed_as_such(tmp_path):
    written = ((b"default", b"t", 1, b"0"), (b"default", b"t", 2, b"1"), (b"hbase", b"meta", 1, b"0"))
    for namespace, table, seq, scope in written:
        folder = tmp_path / "data" / namespace.decode() / table.decode() / ".tabledesc"
        folder.mkdir(parents=True, exist_ok=True)
        data = _tableinfo(namespace, table, {b"f": {b"REPLICATION_SCOPE": scope}})
        (folder / f".tableinfo.{seq:010d}.{len(data)}").write_bytes(data)
    tables = {d.name: d for d in read_hbase_tables(LocalFileSystem(), str(tmp_path))}
    assert tables["t"].family("f").scope == 1 and tables["hbase:meta"].is_system
    one = read_hbase_table(LocalFileSystem(), str(tmp_path), TableName.parse("t"))
    assert one is not None and one.family("f").scope == 1
    assert read_hbase_table(LocalFileSystem(), str(tmp_path), TableName.parse("ns:absent")) is None
    assert read_hbase_tables(LocalFileSystem(), str(tmp_path / "none")) == []


def test_a_file_that_is_not_a_descriptor_is_one_error_naming_it():
    with pytest.raises(TableError, match=r"where/\.tableinfo is not an HBase table descriptor \(no PBUF magic\)"):
        parse_tableinfo(b"nope", "where/.tableinfo")
    with pytest.raises(TableError, match="bad TableSchema"):
        parse_tableinfo(PB_MAGIC + b"\xff\xff\xff", "where")
    bad_scope = _tableinfo(b"default", b"t", {b"f": {b"REPLICATION_SCOPE": b"global"}})
    with pytest.raises(TableError, match="family f has a non-numeric scope"):
        parse_tableinfo(bad_scope, "where")


@given(st.binary(max_size=200))
def test_any_bytes_parse_or_fail_with_table_error_only(data: bytes):
    with contextlib.suppress(TableError):
        parse_tableinfo(PB_MAGIC + data, "fuzz")


def test_names_that_are_not_utf8_are_a_table_error():
    with pytest.raises(TableError, match="bad TableSchema"):
        parse_tableinfo(_tableinfo(b"default", b"t", {b"\xff\xfe": {}}), "where")
