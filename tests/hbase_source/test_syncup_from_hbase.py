"""``hbrep syncup`` on a real HBase 2.6 source (HBase's ReplicationSyncUp): a shadow peer into an hbrep cluster,
writes, then the source's only region server SIGKILLed before anything shipped; syncup claims its queue and
ships it, and the hbrep cluster then holds exactly the source's cells (row keys and cells compared as sets)."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner
from interop.helpers import restart_regionserver
from source_helpers import cells, lines_for, mutate, run_cli

from replication.cli import cli
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey

pytestmark = pytest.mark.slow


def _live(key: str) -> list[str]:
    cluster = ClusterKey.parse(key)
    with connected(cluster) as zk:
        return zk.get_children(f"{cluster.znode_parent}/rs") if zk.exists(f"{cluster.znode_parent}/rs") else []


def test_a_dead_hbase_source_is_drained_by_syncup(source_hbase, hbrep_cluster, spark):
    key, table = source_hbase.layout().cluster_key, "syncup_t"
    source_hbase.admin("create-table", table, "5", "a:1", "b:1")
    families = [ColumnFamilyDescriptor(f, scope=1, max_versions=5) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), hbrep_cluster.root).create(TableDescriptor.of(table, *families))
    source_hbase.admin("roll")  # a new peer's queue starts at the current WAL: no earlier test's edits in it
    run_cli("add_peer", "s1", str(hbrep_cluster.key), "--shadow", "--rootdir", source_hbase.rootdir_uri, cluster=key)
    mutate(source_hbase, table, lines_for("dead", 16))
    expected = cells(key, table, raw=False)
    try:
        source_hbase.regionserver(1).kill()  # SIGKILL: the whole source's region servers are dead
        deadline = time.monotonic() + 90
        while _live(key):
            assert time.monotonic() < deadline, "the killed region server's znode did not expire"
            time.sleep(1)
        result = CliRunner().invoke(cli, ["--cluster", key, "syncup", "--in-process", "--json"],
                                    catch_exceptions=False)  # fmt: skip
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert len(report["claimed"]) == 1 and report["entries_shipped"] > 0 and report["left"] == []
        on_hbrep = cells(str(hbrep_cluster.key), table, raw=False)
        print(f"cells on the source {len(expected)}, on hbrep {len(on_hbrep)}")
        assert on_hbrep == expected and {json.loads(c)["row"] for c in expected}
    finally:
        restart_regionserver(source_hbase, 1)
