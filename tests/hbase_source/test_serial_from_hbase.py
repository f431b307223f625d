"""A serial shadow peer on a real HBase 2.6 source (HBase's SerialReplicationChecker, issue 48): a load of
versioned puts runs while the source table's regions are moved to the other of the source's two region
servers (HBase's Admin.move: closed on one, opened on the other, new barriers in hbase:meta, the region's
edits now in two servers' WALs and queues), split and merged (parents), with ship cycles in between. The
hbrep peer must then hold every row's versions, received in the source's order (read back from the peer's
own WALs), and the row-key and cell sets of both sides must be equal."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from source_helpers import run_cli

from replication.cli import cli
from replication.fs import LocalFileSystem
from replication.hbase.replication_barriers import read_replication_barriers
from replication.hbase.table_client import HBaseTableClient
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.names import wal_start_timestamp
from replication.wal.reader import open_wal
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow

TABLE, PEER, ROWS, VERSIONS = "serial_t", "ser1", 8, 2000


class Load(threading.Thread):
    """Puts rounds of versions (timestamp = round) to every row through the source's Thrift server until
    stopped (a round about every 0.2 s); ``rounds`` is how many rounds were written whole."""

    def __init__(self, hbase):
        super().__init__(daemon=True)
        self.hbase, self.stop, self.rounds, self.error = hbase, threading.Event(), 0, None

    def run(self) -> None:
        connection = self.hbase.happybase_connection()
        try:
            while not self.stop.is_set() and self.rounds < VERSIONS - 1:
                ts = self.rounds + 1
                for i in range(ROWS):
                    data = {b"a:q": f"v{ts}".encode()}
                    connection = self.hbase.put_until_taken(connection, TABLE, f"r{i}".encode(), data, timestamp=ts)
                self.rounds += 1
                time.sleep(0.2)
        except Exception as exc:  # reported by the test
            self.error = exc
        finally:
            connection.close()


def _ship(key: str) -> dict:
    result = CliRunner().invoke(cli, ["--cluster", key, "ship", "--once", "--in-process", "--json"],
                                catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _versions(cluster: str) -> dict[str, list[tuple[int, str]]]:
    """Every row's a:q versions, newest first, through ``hbrep scan --json`` (either kind of cluster)."""
    rows = json.loads(run_cli("scan", TABLE, "--versions", str(VERSIONS), "--json", cluster=cluster))["rows"]
    return {row["row"]: [(c["timestamp"], c["value"]) for c in row["cells"]] for row in rows}


def _arrivals(root: str) -> dict[bytes, list[int]]:
    """Per row, the timestamps of TABLE's cells in the order the peer wrote them to its WALs."""
    wals = [p for d in ("WALs", "oldWALs") for p in (Path(root) / d).rglob("*") if p.is_file() and "." in p.name]
    wals.sort(key=lambda p: (wal_start_timestamp(p.name), p.name))
    seen: dict[bytes, list[int]] = {}
    for path in wals:
        with open_wal(str(path)) as reader:
            for entry in reader.entries():
                if entry.key.table_name == TABLE.encode():
                    for cell in entry.cells:
                        seen.setdefault(cell.row, []).append(cell.timestamp)
    return seen


def test_a_serial_shadow_peer_keeps_the_source_order_across_move_split_and_merge(source_hbase, hbrep_cluster,
                                                                                   spark):  # fmt: skip
    key = source_hbase.layout().cluster_key
    source_hbase.admin("create-table", TABLE, str(VERSIONS), "a:1")
    family = ColumnFamilyDescriptor("a", scope=1, max_versions=VERSIONS)
    TableRegistry(LocalFileSystem(), hbrep_cluster.root).create(TableDescriptor.of(TABLE, family))
    source_hbase.admin("roll")  # a new peer's queue starts at the current WAL: no earlier test's edits in it
    run_cli("add_peer", PEER, str(hbrep_cluster.key), "--shadow", "--serial", "--rootdir", source_hbase.rootdir_uri,
            cluster=key)  # fmt: skip
    try:
        load = Load(source_hbase)
        load.start()
        reports = []
        try:
            steps = [
                lambda: source_hbase.admin("move", TABLE),  # HBase's Admin.move: to the other server
                lambda: source_hbase.admin("split", TABLE, "r4"),
                lambda: source_hbase.admin("move", TABLE),  # both daughters to the other server again
                lambda: source_hbase.admin("merge", TABLE, "r0", "r4"),
            ]
            done = []
            for step in steps:
                while load.rounds < 3 and load.is_alive():
                    time.sleep(0.2)
                reports.append(_ship(key))
                assert load.is_alive(), f"the load ended before the region change: {load.error}"
                done.append(step())
                print(done[-1])
                time.sleep(1)
                reports.append(_ship(key))
        finally:
            load.stop.set()
            load.join(120)
        assert load.error is None, load.error
        expected = _versions(key)
        assert len(expected) == ROWS and all(len(v) >= 3 for v in expected.values())
        deadline = time.monotonic() + 120
        while True:  # until the peer holds it all and a cycle has nothing left waiting (the last markers too)
            reports.append(_ship(key))
            got = _versions(str(hbrep_cluster.key))
            settled = not any(q["status"] == "waiting" for q in reports[-1]["queues"])
            if (got == expected and settled) or time.monotonic() > deadline:
                break
        waits = [q["error"] for r in reports for q in r["queues"] if q["status"] == "waiting"]
        print(f"{len(reports)} cycles, {load.rounds} rounds, waits: {waits}")
        assert got == expected  # every row's versions, values and timestamps, and so the row-key and cell sets
        assert {(r, ts, v) for r, vs in got.items() for ts, v in vs} == {
            (r, ts, v) for r, vs in expected.items() for ts, v in vs
        }
        # the table's edits came through both servers' queues (the moves put its regions on each in turn)
        shipped_from = {q["queue"] for r in reports for q in r["queues"] if q["metrics"].get("shippedOps")}
        assert len(shipped_from) >= 2, shipped_from
        # HBase's barriers held edits back: a later range waited for the earlier one, a daughter for its parent
        assert any("range before barrier" in w or "parent" in w for w in waits), waits
        arrivals = _arrivals(hbrep_cluster.root)
        assert set(arrivals) == {r.encode() for r in expected}
        for row, stamps in arrivals.items():
            assert stamps == sorted(stamps), f"row {row!r} arrived out of the source's order: {stamps}"
            assert len(set(stamps)) == len(expected[row.decode()])
        # hbase:meta as HBase wrote it: the merged region names its two parents, the split daughter its parent
        source = ClusterKey.parse(key)
        (merged,) = source_hbase.admin("locate", TABLE)
        split, merge = done[1], done[3]
        # each move took the table's regions to the other server: the first to one, the daughters to the other
        assert len(set(done[0].values())) == 1 and len(set(done[2].values())) == 1, done
        assert set(done[0].values()) != set(done[2].values()), done
        with HBaseTableClient(source) as client:
            barriers = read_replication_barriers(client.locator, client.servers, client.retry)
        assert set(barriers[merged].parents) == set(merge["parents"]) and barriers[merged].barriers
        assert all(barriers[d].parents == (split["parent"],) for d in merge["parents"])
        assert len(barriers[split["parent"]].barriers) >= 2  # its opening(s), then its closing one
        # the last pushed sequence ids HBase's own source would have written: past every barrier
        with connected(source) as zk:
            storage = ReplicationQueueStorage(zk, ZNodePaths(parent=source.znode_parent))
            pushed = storage.get_last_sequence_ids(sorted(barriers), PEER)
            assert pushed == {n: storage.get_last_sequence_id(n, PEER) for n in barriers if n in pushed}
        for region in [merged, *merge["parents"], split["parent"]]:
            assert pushed[region] >= barriers[region].barriers[-1] - 1, (region, pushed, barriers[region])
    finally:  # the folder's other tests (syncup ships every queue) must not find this peer
        run_cli("remove_peer", PEER, cluster=key)
