"""Unknown tables and families (put, delete, alter, create_table, describe, load, flush): one exact line,
and neither a WAL entry nor a descriptor nor a table file is written."""

from __future__ import annotations

import os

import pytest

from replication.fs import get_filesystem
from replication.tables.descriptors import TableRegistry
from tests.badinput.helpers import error_line, hbrep
from tests.cluster.helpers import wal_entries

pytestmark = pytest.mark.slow

NO_T = "hbrep: error: table nosuch does not exist"
NO_FAM = "hbrep: error: table t has no column family 'nofam'"


def files_under(root: str) -> set[str]:
    """Every file below the root except process bookkeeping (logs, pid files, metrics)."""
    found = set()
    for folder, _, names in os.walk(root):
        if f"{os.sep}.hbrep" in folder:
            continue
        found.update(os.path.join(folder, n) for n in names)
    return found


@pytest.fixture(scope="module")
def state(single):
    """A callable giving (WAL entries of the server, table descriptors, files) of the cluster now."""
    fs, root = get_filesystem(single.root)
    server = single.servers[0]

    def snapshot():
        tables = sorted((d.name, d.to_json()) for d in TableRegistry(fs, root).list())
        return len(wal_entries(root, server)), tables, files_under(root)

    return snapshot


def run(single, *args):
    return hbrep("--cluster", single.cluster_key, *args)


def test_writes_to_unknown_tables_and_families_write_nothing(single, state):
    assert run(single, "put", "t", "r0", "f1:q", "v").returncode == 0  # the table works
    before = state()
    cases = {
        ("put", "nosuch", "r", "f1:q", "v"): NO_T,
        ("put", "t", "r", "nofam:q", "v"): NO_FAM,
        ("put", "t", "r", ":q", "v"): "hbrep: error: bad column ':q': expected FAMILY[:QUALIFIER]",
        ("put", "t*", "r", "f1:q", "v"): (
            "hbrep: error: illegal table name 't*': qualifier may only contain [A-Za-z0-9_.-]"
        ),
        ("delete", "nosuch", "r"): NO_T,
        ("delete", "t", "r", "nofam:q"): NO_FAM,
        ("delete", "t", "r", "nofam"): NO_FAM,
        ("load", "nosuch", "--rows", "3"): NO_T,
        ("load", "t", "--rows", "3", "--family", "nofam"): NO_FAM,
    }
    for args, expected in cases.items():
        assert error_line(run(single, *args)) == expected, args
    assert state() == before


def test_schema_commands_on_unknown_or_bad_names_change_nothing(single, state):
    before = state()
    cases = {
        ("alter", "nosuch", "--family", "f1", "--scope", "1"): NO_T,
        ("alter", "t", "--family", "nofam", "--scope", "1"): NO_FAM,
        ("describe", "nosuch"): NO_T,
        ("flush", "nosuch"): NO_T,
        ("create_table", "t", "f1"): "hbrep: error: table t already exists",
        ("create_table", "t*", "f1"): (
            "hbrep: error: illegal table name 't*': qualifier may only contain [A-Za-z0-9_.-]"
        ),
        ("create_table", "u", "f1:1", "f:2"): (
            "hbrep: error: illegal REPLICATION_SCOPE 2 for family f of table u: use 0 (LOCAL) or 1 (GLOBAL)"
        ),
        ("create_table", "u", "f:x"): (
            "hbrep: error: illegal REPLICATION_SCOPE 'x' for family f of table u: use 0 (LOCAL) or 1 (GLOBAL)"
        ),
        ("create_table", "u", "f1", ".f"): "hbrep: error: illegal column family '.f': starts with '.'",
        ("create_table", "u", "f", "f"): "hbrep: error: table u: family f given twice",
        ("create_table", "hbase:u", "f"): (
            "hbrep: error: table hbase:u: namespace 'hbase' is reserved for system tables"
        ),
    }
    for args, expected in cases.items():
        assert error_line(run(single, *args)) == expected, args
    assert state() == before
    described = run(single, "describe", "t", "--json")
    assert described.returncode == 0 and '"scope": 1' in described.stdout  # f1 is still replicated
