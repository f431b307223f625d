"""``hbrep syncup`` on a real HBase 2.6 source (HBase's ReplicationSyncUp): a shadow peer into an hbrep cluster,
writes, then every region server of the source SIGKILLed before anything shipped; syncup claims each dead
server's queue and ships it, and the hbrep cluster then holds exactly the source's cells (row keys and cells
compared as sets)."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner
from source_helpers import cells, lines_for, mutate, run_cli

from replication.cli import cli
from replication.devstack.jvm import port_accepts
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey

pytestmark = pytest.mark.slow


def _live(key: str) -> list[str]:
    cluster = ClusterKey.parse(key)
    with connected(cluster) as zk:
        return zk.get_children(f"{cluster.znode_parent}/rs") if zk.exists(f"{cluster.znode_parent}/rs") else []


def _restart_all(hbase) -> None:
    """Start every killed region server again, all at once (their JVMs start side by side), and wait until each
    has registered with the master."""
    ports = hbase.layout().regionserver_ports
    stopped = [(hbase.regionserver(i), port) for i, port in enumerate(ports, start=1)]
    stopped = [(rs, port) for rs, port in stopped if not rs.running()]
    with ThreadPoolExecutor(max(1, len(stopped))) as pool:
        list(pool.map(lambda rs_port: rs_port[0].start(lambda: port_accepts(rs_port[1]), timeout=120), stopped))
    deadline = time.monotonic() + 120
    while {str(port) for port in ports} - {name.split(",")[1] for name in hbase.admin("servers")}:
        assert time.monotonic() < deadline, "the restarted region servers did not register"
        time.sleep(1)


def test_a_dead_hbase_source_is_drained_by_syncup(source_hbase, hbrep_cluster, spark):
    key, table = source_hbase.layout().cluster_key, "syncup_t"
    source_hbase.admin("create-table", table, "5", "a:1", "b:1")
    families = [ColumnFamilyDescriptor(f, scope=1, max_versions=5) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), hbrep_cluster.root).create(TableDescriptor.of(table, *families))
    source_hbase.admin("roll")  # a new peer's queue starts at the current WAL: no earlier test's edits in it
    run_cli("add_peer", "s1", str(hbrep_cluster.key), "--shadow", "--rootdir", source_hbase.rootdir_uri, cluster=key)
    mutate(source_hbase, table, lines_for("dead", 16))
    expected = cells(key, table, raw=False)
    ports = source_hbase.layout().regionserver_ports
    names = set(source_hbase.admin("servers"))
    assert len(ports) == len(names) >= 2  # the folder's HBase has two region servers: syncup must drain both
    try:
        for index in range(1, len(ports) + 1):
            source_hbase.regionserver(index).kill()  # SIGKILL: the whole source's region servers are dead
        deadline = time.monotonic() + 90
        while _live(key):
            assert time.monotonic() < deadline, "the killed region servers' znodes did not expire"
            time.sleep(1)
        result = CliRunner().invoke(cli, ["--cluster", key, "syncup", "--in-process", "--json"],
                                    catch_exceptions=False)  # fmt: skip
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        # every dead server's queue of the peer claimed (replicators of earlier runs may hold none)
        assert {server: queues for server, queues in report["claimed"].items() if queues} == {n: ["s1"] for n in names}
        assert report["entries_shipped"] > 0 and report["left"] == []
        on_hbrep = cells(str(hbrep_cluster.key), table, raw=False)
        print(f"cells on the source {len(expected)}, on hbrep {len(on_hbrep)}")
        assert on_hbrep == expected and {json.loads(c)["row"] for c in expected}
    finally:
        _restart_all(source_hbase)
