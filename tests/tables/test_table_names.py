import pytest

from replication.errors import HbrepError
from replication.tables.errors import IllegalFamilyName, IllegalTableName
from replication.tables.names import TableName, validate_family_name


def test_default_namespace_is_dropped_from_the_written_name():
    assert TableName.parse("t1") == TableName("default", "t1")
    assert TableName.parse("default:t1").as_bytes() == b"t1"
    assert TableName.parse("ns_1:t.x-y_2").as_bytes() == b"ns_1:t.x-y_2"
    assert TableName.parse(b"hbase:meta").is_system
    assert not TableName.parse("ns:meta").is_system


@pytest.mark.parametrize("name", ["", ":t", "ns:", ".t", "-t", "t/1", "t 1", "ns-1:t", "a:b:c", "ns:.t", "t$"])
def test_illegal_table_names_are_refused_naming_the_table(name):
    with pytest.raises(IllegalTableName) as info:
        TableName.parse(name)
    assert isinstance(info.value, HbrepError)
    assert repr(name) in str(info.value) or name == ""
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("family", ["", ".f", "a:b", "a/b", "a\\b", "a\tb", "a\x7fb", "recovered.edits"])
def test_illegal_family_names_are_refused(family):
    with pytest.raises(IllegalFamilyName, match="illegal column family"):
        validate_family_name(family, "t1")


def test_legal_family_names_pass_through():
    assert validate_family_name("cf-1.x_y") == "cf-1.x_y"
    assert validate_family_name(b"f") == "f"
