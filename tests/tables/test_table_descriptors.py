import json

import pytest

from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor as CF
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.errors import (
    CorruptTableFile,
    IllegalDescriptor,
    TableExists,
    UnknownFamily,
    UnknownTable,
)


@pytest.fixture
def registry(tmp_path):
    return TableRegistry(LocalFileSystem(), str(tmp_path / "root"))


def test_scopes_for_wal_holds_only_non_local_families():
    desc = TableDescriptor.of("ns:t", CF("a", 1), CF("b", 0), CF("c", 1, max_versions=3))
    assert desc.scopes_for_wal() == {b"a": 1, b"c": 1}
    assert desc.namespace == "ns" and desc.qualifier == "t"
    assert desc.family("c").max_versions == 3
    with pytest.raises(UnknownFamily, match=r"table ns:t has no column family 'zz'"):
        desc.family("zz")


@pytest.mark.parametrize("scope", [2, -1, "1", True, None])
def test_scope_must_be_0_or_1(scope):
    with pytest.raises(IllegalDescriptor, match="REPLICATION_SCOPE"):
        CF("f", scope)


def test_descriptor_needs_a_family_and_unique_names():
    with pytest.raises(IllegalDescriptor, match="at least one column family"):
        TableDescriptor("t", {})
    with pytest.raises(IllegalDescriptor, match="given twice"):
        TableDescriptor.of("t", "f", "f")
    with pytest.raises(IllegalDescriptor, match="VERSIONS"):
        CF("f", 0, max_versions=0)


def test_create_get_list_round_trip_and_path(registry, tmp_path):
    desc = TableDescriptor.of("t1", CF("f", 1), "g")
    registry.create(desc)
    registry.create(TableDescriptor.of("ns:t2", "x"))
    path = tmp_path / "root" / "data" / "default" / "t1" / ".tabledesc" / "descriptor.json"
    assert json.loads(path.read_text())["name"] == "t1"
    assert registry.get("default:t1") == desc
    assert registry.exists("t1") and not registry.exists("t3")
    assert [d.name for d in registry.list()] == ["t1", "ns:t2"]
    assert not list(path.parent.glob(".*tmp*"))  # atomic write left no temp file


def test_create_twice_and_unknown_table(registry):
    registry.create(TableDescriptor.of("t1", "f"))
    with pytest.raises(TableExists, match="table t1 already exists"):
        registry.create(TableDescriptor.of("t1", "g"))
    assert registry.get("t1").families.keys() == {"f"}
    with pytest.raises(UnknownTable, match="table nope does not exist"):
        registry.get("nope")
    with pytest.raises(UnknownTable):
        registry.alter_scope("nope", "f", 1)


def test_system_namespace_needs_the_explicit_flag(registry):
    with pytest.raises(IllegalDescriptor, match="reserved for system tables"):
        registry.create(TableDescriptor.of("hbase:meta", CF("info", 1)))
    assert not registry.exists("hbase:meta")
    desc = registry.create(TableDescriptor.of("hbase:meta", CF("info", 1)), system=True)
    assert registry.get("hbase:meta").is_system and desc.is_system


def test_alter_scope_persists_and_validates(registry):
    registry.create(TableDescriptor.of("t1", "f", "g"))
    new = registry.alter_scope("t1", "g", 1)
    assert new.scopes_for_wal() == {b"g": 1}
    assert registry.get("t1").scopes_for_wal() == {b"g": 1}
    with pytest.raises(UnknownFamily, match="'h'"):
        registry.alter_scope("t1", "h", 1)
    with pytest.raises(IllegalDescriptor, match="family g of table t1"):
        registry.alter_scope("t1", "g", 3)
    assert registry.get("t1").scopes_for_wal() == {b"g": 1}


def test_corrupt_descriptor_names_the_file(registry):
    registry.create(TableDescriptor.of("t1", "f"))
    path = registry.descriptor_path("t1")
    with open(path, "w") as out:
        out.write("{not json")
    with pytest.raises(CorruptTableFile, match=r"descriptor\.json"):
        registry.get("t1")


def test_delete_removes_descriptor_and_files(registry, tmp_path):
    registry.create(TableDescriptor.of("t1", "f"))
    data = tmp_path / "root" / "data" / "default" / "t1" / "region1"
    data.mkdir()
    (data / "x.parquet").write_bytes(b"x")
    registry.delete("t1")
    assert not registry.exists("t1") and not data.exists()
    with pytest.raises(UnknownTable):
        registry.delete("t1")
