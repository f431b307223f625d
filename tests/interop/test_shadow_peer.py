"""A shadow peer: real HBase A → hbrep's ship cycles → real HBase B, judged by HBase's VerifyReplication.

``hbrep --cluster A add_peer ID B --shadow --rootdir URI`` adds the peer to A through HBase's own Admin,
DISABLED and marked ``hbrep.peer.shadow=true``: A's region servers queue and keep every WAL for it
and do not ship. hbrep's cycles then read A's queues and WALs, ship to B over HBase's RPC, and advance
A's positions. A load runs while the region server holding the table's region is SIGKILLed; A's
master splits its logs and moves its queue (ClaimReplicationQueuesProcedure) and hbrep, in failover
mode ``hbase``, claims nothing and ships the recovered queue. The end: the sets of cells on A and B are
equal, HBase's VerifyReplication reports GOODROWS = rows written and BADROWS = 0, and A's oldWALs are
left to A's own LogCleaner.
"""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from interop.helpers import (
    HBREP,
    create_on_both,
    cycle_on,
    hbase_table_cells,
    hbrep,
    hbrep_json,
    hbrep_json_here,
    hbrep_table_cells,
    restart_regionserver,
    write_through_thrift,
)

from replication.config import Config
from replication.devstack.hbase import RealHBase
from replication.fs import LocalFileSystem
from replication.tables.hbase_descriptors import read_hbase_tables
from replication.zk.cluster_key import ClusterKey

pytestmark = pytest.mark.slow

ROWS = 600
CONF = Config.load(
    env={}, overrides={"replication.source.sleepforretries": "200", "hbrep.source.ship.max.attempts": "8"}
)


@pytest.fixture(scope="module")
def real_hbase_peer(zk_server, tmp_path_factory) -> Iterator[RealHBase]:
    """Real HBase B (master, one region server, Thrift): the shadow peer's cluster. Its region server writes
    HBase's replication marker edits every second (ReplicationMarkerChore), for the marker test."""
    cluster = RealHBase(tmp_path_factory.mktemp("hbase-peer"))
    markers = {
        "hbase.regionserver.replication.marker.enabled": "true",
        "hbase.regionserver.replication.marker.chore.duration": "1000",
    }
    cluster.start(f"127.0.0.1:{zk_server.port}:/hbase-peer-{uuid.uuid4().hex[:8]}", regionservers=1, extra_site=markers)
    try:
        yield cluster
    finally:
        cluster.stop()


class Load(threading.Thread):
    """ROWS puts into A through its Thrift server (family a shipped, b scope 0), each retried until A
    takes it (a killed region server's regions are offline until the master reassigns them)."""

    def __init__(self, real_hbase: RealHBase, table: str):
        super().__init__(daemon=True)
        self.real_hbase, self.table = real_hbase, table
        self.written: set[tuple] = set()
        self.error = ""

    def run(self) -> None:
        connection = self.real_hbase.happybase_connection()
        try:
            for i in range(ROWS):
                row, ts, value = b"r%05d" % i, 1_000 + i, b"v%d" % i
                data = {b"a:q": value, b"b:q": b"local"}
                try:
                    connection = self.real_hbase.put_until_taken(connection, self.table, row, data, timestamp=ts)
                except Exception as exc:
                    self.error = f"row {row!r} not taken within 240 s: {exc}"
                    return
                self.written.add((row, b"a", b"q", ts, value))
                time.sleep(0.01)
        finally:
            connection.close()


def test_a_shadow_peer_ships_real_hbase_to_real_hbase_across_a_region_server_kill(real_hbase, real_hbase_peer, spark):
    a_key, b_key = real_hbase.layout().cluster_key, real_hbase_peer.layout().cluster_key
    peer, table = f"s{uuid.uuid4().hex[:6]}", f"shadow_{uuid.uuid4().hex[:8]}"
    a_thrift = f"127.0.0.1:{real_hbase.layout().thrift_port}"
    b_thrift = f"127.0.0.1:{real_hbase_peer.layout().thrift_port}"
    said = hbrep(
        "add_peer", peer, b_key, "--shadow", "--rootdir", real_hbase.rootdir_uri, "--thrift", a_thrift,
        "--config", f"hbrep.peer.thrift={b_thrift}", cluster=a_key,
    )  # fmt: skip
    assert "shadow peer" in said and "DISABLED in HBase" in said
    victim = 0
    try:
        listed = {p["id"]: p for p in real_hbase.admin("peers")}[peer]
        assert listed["enabled"] is False and listed["config"]["configuration"]["hbrep.peer.shadow"] == "true"
        for cluster in (real_hbase, real_hbase_peer):
            cluster.admin("create-table", table, "3", "a:1", "b:0")

        load = Load(real_hbase, table)
        load.start()
        while len(load.written) < ROWS // 3 and load.is_alive():
            time.sleep(0.2)
        first = cycle_on(a_key, CONF, spark)
        assert first.queues and all(q.status == "ok" for q in first.queues), first.queues

        victim = real_hbase.regionserver_holding(table)
        victim_name = real_hbase.server_name(victim)
        real_hbase.regionserver(victim).kill()  # SIGKILL mid-load
        recovered = f"{peer}-{victim_name}"
        shipped_recovered = False
        deadline = time.monotonic() + 420
        while True:
            report = cycle_on(a_key, CONF, spark)
            bad = [q for q in report.queues if q.status not in ("ok", "disabled")]
            assert not bad, bad
            shipped_recovered |= any(q.queue.endswith(f"/{recovered}") for q in report.queues)
            if not load.is_alive():
                assert not load.error, load.error
                if shipped_recovered and hbase_table_cells(real_hbase_peer, table) == load.written:
                    break
            assert time.monotonic() < deadline, f"recovered queue shipped: {shipped_recovered}; {report.queues}"
            time.sleep(2)

        # the same cells on both sides: family a of A is exactly B; family b (scope 0) never left A
        on_a = hbase_table_cells(real_hbase, table)
        assert {c for c in on_a if c[1] == b"a"} == load.written == hbase_table_cells(real_hbase_peer, table)
        assert len({c[0] for c in load.written}) == ROWS

        counters = real_hbase.verify_replication(peer, table, families=["a"])
        assert counters["GOODROWS"] == ROWS and counters.get("BADROWS", 0) == 0, counters

        # hbrep's own verify agrees, reading both real tables through their Thrift servers
        ours = hbrep_json("verify", "--families", "a", peer, table, cluster=a_key)
        assert ours["counters"]["GOODROWS"] == ROWS and ours["counters"]["BADROWS"] == 0, ours
        # ... and finds a drifted row on B: one cell changed there
        connection = real_hbase_peer.happybase_connection()
        try:
            connection.table(table).put(b"r00007", {b"a:q": b"drifted"}, timestamp=1_007)
        finally:
            connection.close()
        # the commands below run in this process on the warm SparkSession (the spark-submit path ran above)
        drifted = hbrep_json_here("verify", "--in-process", "--families", "a", "--verbose", peer, table, cluster=a_key)
        assert drifted["counters"]["CONTENT_DIFFERENT_ROWS"] == 1 and drifted["counters"]["BADROWS"] == 1, drifted
        assert drifted["counters"]["GOODROWS"] == ROWS - 1
        # the GX checks read both real tables too: the drifted value is not a row-count problem
        quality = hbrep_json_here("quality", table, "--peer", peer, cluster=a_key)
        assert quality["source_rows"] == ROWS and quality["peer_rows"] == ROWS, quality
        # hbrep repair makes B the source's copy again: two rows of B's own get delete markers, the changed
        # cell is put back, shipped to B over HBase's RPC; HBase's VerifyReplication is the judge
        connection = real_hbase_peer.happybase_connection()
        try:
            for row in (b"x001", b"x002"):
                connection.table(table).put(row, {b"a:q": b"extra"}, timestamp=5_000)
        finally:
            connection.close()
        plan = hbrep_json_here("repair", "--dry-run", peer, table, cluster=a_key)["before"]
        assert plan["counters"]["ROWSWITHDIFFS"] == 1 and plan["counters"]["SOURCEMISSINGROWS"] == 2, plan
        assert (plan["cells_to_put"], plan["cells_to_delete"]) == (1, 2), plan
        repaired = hbrep_json_here("repair", peer, table, cluster=a_key)
        assert repaired["remaining"] == 0 and repaired["written"]["cells"] == 3, repaired
        counters = real_hbase.verify_replication(peer, table, families=["a"])
        assert counters["GOODROWS"] == ROWS and counters.get("BADROWS", 0) == 0, counters
        assert {c for c in hbase_table_cells(real_hbase_peer, table) if c[0].startswith(b"r")} >= load.written
        assert not {c for c in hbase_table_cells(real_hbase_peer, table) if c[0].startswith(b"x")}
        again = hbrep_json_here("repair", peer, table, cluster=a_key)
        assert again["written"] == {} and again["before"]["counters"]["HASHES_NOT_MATCHED"] == 0, again
        # verify_targets of a real HBase source reads its descriptors from the rootdir: a replicated, b not
        described = {d.name: d for d in read_hbase_tables(LocalFileSystem(), str(real_hbase.rootdir))}[table]
        assert (described.family("a").scope, described.family("b").scope) == (1, 0)
        assert described.family("a").max_versions == 3

        # HBase moved the dead server's queue; hbrep claimed nothing and deletes none of A's files
        failover = hbrep_json("failover", "--once", cluster=a_key)
        assert failover["mode"] == "hbase" and all(s["action"] == "left-to-hbase" for s in failover["servers"])
        cleaned = hbrep_json("clean", "--once", cluster=a_key)
        assert cleaned["left_to"] == "hbase" and cleaned["deleted"] == []
        status = hbrep_json("status", "replication", cluster=a_key)
        assert status["peers"][peer]["shadow"] is True and status["peers"][peer]["hbrep_ships"] is True
    finally:
        hbrep("remove_peer", peer, cluster=a_key)
        if victim:
            restart_regionserver(real_hbase, victim)
    assert peer not in {p["id"] for p in real_hbase.admin("peers")}


def test_a_shadow_peer_that_hbase_enabled_fails_its_queues_with_one_line(real_hbase, spark):
    a_key = real_hbase.layout().cluster_key
    peer = f"e{uuid.uuid4().hex[:6]}"
    nowhere = f"127.0.0.1:{ClusterKey.parse(a_key).servers[0][1]}:/hbase-nowhere-{peer}"
    hbrep("add_peer", peer, nowhere, "--shadow", "--rootdir", real_hbase.rootdir_uri, cluster=a_key)
    try:
        real_hbase.admin("roll")
        real_hbase.admin("enable-peer", peer)
        report = cycle_on(a_key, CONF, spark)
        mine = [q for q in report.queues if q.peer_id == peer]
        assert mine and all(q.status == "failed" for q in mine), mine
        assert all("ENABLED in HBase" in q.error and "\n" not in q.error for q in mine), mine
    finally:
        hbrep("remove_peer", peer, cluster=a_key)


def test_add_peer_shadow_refuses_bad_input_with_one_line(real_hbase, tmp_path):
    a_key = real_hbase.layout().cluster_key

    def refused(*args: str) -> str:
        done = subprocess.run([*HBREP, "--cluster", a_key, *args], capture_output=True, text=True)
        assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        return done.stderr.strip()

    assert "no WALs/ folder" in refused("add_peer", "x1", a_key, "--shadow", "--rootdir", str(tmp_path))
    assert "--rootdir and --thrift go with --shadow" in refused("add_peer", "x1", a_key, "--rootdir", str(tmp_path))
    assert "is not host:port" in refused(
        "add_peer", "x1", a_key, "--shadow", "--rootdir", real_hbase.rootdir_uri, "--thrift", "nowhere"
    )
    assert "held DISABLED" in refused("add_peer", "x1", a_key, "--shadow", "--state", "ENABLED")
    assert "x1" not in {p["id"] for p in real_hbase.admin("peers")}


def test_a_shadow_peer_of_a_real_hbase_on_hdfs_ships_through_webhdfs_and_drops_finished_wals(
    real_hbase_on_hdfs, hdfs_cluster, hbrep_sink, spark
):
    hbase = real_hbase_on_hdfs
    key = hbase.layout().cluster_key
    peer, table = f"h{uuid.uuid4().hex[:6]}", f"hdfs_{uuid.uuid4().hex[:8]}"
    rootdir = hdfs_cluster.webhdfs_root(urlparse(hbase.rootdir_uri).path)
    hbrep("add_peer", peer, str(hbrep_sink.key), "--shadow", "--rootdir", rootdir, cluster=key)
    try:
        create_on_both(hbrep_sink, hbase, table)
        expected = write_through_thrift(hbase, table, 200)
        hbase.admin("roll")  # the WAL holding the rows is finished: hbrep must drop it from the queue
        deadline = time.monotonic() + 180
        while True:
            report = cycle_on(key, CONF, spark)
            assert all(q.status == "ok" for q in report.queues), report.queues
            if hbrep_table_cells(hbrep_sink, table) == expected:
                break
            assert time.monotonic() < deadline, report.queues
            time.sleep(1)
        # issue 24 on a real HBase source: a consistency token and the replicated-through time
        token = hbrep_json("consistency_token", peer, "--tables", table, cluster=key)
        assert token["tables"] == [table] and token["queues"] >= 1, token
        cycle_on(key, CONF, spark)
        done = subprocess.run(
            [*HBREP, "--cluster", key, "check_consistency", token["token"], "--wait", "60"],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        through = hbrep_json("replicated_through", peer, cluster=key)
        assert table in through["tables"] and through["tables"][table] >= token["created_ms"] - 1_000, through
        queues = hbase.admin("queues")
        held = {server: wals for server, by_queue in queues.items() for qid, wals in by_queue.items() if qid == peer}
        # what HBase's ReplicationLogCleaner sees: only the live WAL is still held for the shadow peer
        assert held and all(len(wals) == 1 for wals in held.values()), held
    finally:
        hbrep("remove_peer", peer, cluster=key)


def test_hbase_replication_markers_in_a_real_hbase_wal_are_heartbeats_never_data(real_hbase_peer, hbrep_sink, spark):
    key = real_hbase_peer.layout().cluster_key
    peer = f"m{uuid.uuid4().hex[:6]}"
    # only a table nobody writes: B's WALs also hold the rows it received from A, which are not this test's
    only = f"nothing_{peer}"
    hbrep(
        "add_peer", peer, str(hbrep_sink.key), "--shadow", "--rootdir", real_hbase_peer.rootdir_uri,
        "--table-cfs", only, cluster=key,
    )  # fmt: skip
    try:
        time.sleep(3)  # the marker chore writes one edit a second; nothing else is written
        first = cycle_on(key, CONF, spark)
        mine = [q for q in first.queues if q.peer_id == peer]
        assert mine and all(q.status == "ok" for q in mine), mine
        assert sum(q.metrics.get("replicationMarkers", 0) for q in mine) >= 1, mine
        assert sum(q.metrics.get("shippedOps", 0) for q in mine) == 0, mine  # markers are never data
        before = hbrep_json("replicated_through", peer, cluster=key)
        time.sleep(2)
        cycle_on(key, CONF, spark)
        after = hbrep_json("replicated_through", peer, cluster=key)
        assert after["through_ms"] > before["through_ms"], (before, after)  # moves with no writes: a heartbeat
    finally:
        hbrep("remove_peer", peer, cluster=key)


class TimedLoad(threading.Thread):
    """Rows put into A through Thrift with the server's own timestamps (so the seed's final verify, which
    reads cells written before its token, does not count rows put after it), each retried until taken."""

    def __init__(self, real_hbase: RealHBase, table: str, rows: int, prefix: bytes):
        super().__init__(daemon=True)
        self.real_hbase, self.table, self.rows, self.prefix = real_hbase, table, rows, prefix
        self.error = ""

    def run(self) -> None:
        connection = self.real_hbase.happybase_connection()
        try:
            for i in range(self.rows):
                row = self.prefix + b"%05d" % i
                try:
                    connection = self.real_hbase.put_until_taken(
                        connection, self.table, row, {b"a:q": b"v%d" % i, b"b:q": b"local"}
                    )
                except Exception as exc:
                    self.error = f"row {row!r} not taken: {exc}"
                    return
                time.sleep(0.02)
        finally:
            connection.close()


def family_cells(cells: set[tuple], family: bytes) -> set[tuple]:
    return {c for c in cells if c[1] == family}


def test_seed_peer_between_real_hbase_clusters_by_snapshot_while_a_keeps_writing(real_hbase, real_hbase_peer, spark):
    """hbrep seed_peer from real HBase A to real HBase B: HBase's snapshot, ExportSnapshot (Maven classpath)
    and clone_snapshot (the table is missing on B), a helper shadow peer holding the edits written meanwhile,
    then B holds A's cells (family a) exactly, and HBase's VerifyReplication reports BADROWS=0."""
    a_key, b_key = real_hbase.layout().cluster_key, real_hbase_peer.layout().cluster_key
    peer, table = f"d{uuid.uuid4().hex[:6]}", f"seeded_{uuid.uuid4().hex[:8]}"
    a_thrift = f"127.0.0.1:{real_hbase.layout().thrift_port}"
    b_thrift = f"127.0.0.1:{real_hbase_peer.layout().thrift_port}"
    real_hbase.admin("create-table", table, "3", "a:1:3", "b:0")
    history = TimedLoad(real_hbase, table, 300, b"h")
    history.run()  # history before the peer exists: only the snapshot can bring it to B
    assert not history.error, history.error
    real_hbase.admin("roll")  # ... and out of the WALs a new peer's queues start at
    hbrep(
        "add_peer", peer, b_key, "--shadow", "--rootdir", real_hbase.rootdir_uri, "--thrift", a_thrift,
        "--table-cfs", table, "--config", f"hbrep.peer.thrift={b_thrift}", cluster=a_key,
    )  # fmt: skip
    try:
        load = TimedLoad(real_hbase, table, 400, b"r")
        load.start()
        # in this process: its Spark jobs on the session's warm SparkSession, not a new Spark JVM
        seeded = hbrep_json_here("seed_peer", peer, table, "--peer-rootdir", real_hbase_peer.rootdir_uri, cluster=a_key)
        assert seeded["created_on_peer"] == [table], seeded  # cloned from A's snapshot, A's descriptor
        assert seeded["verify"][table]["BADROWS"] == 0 and seeded["verify"][table]["GOODROWS"] >= 300, seeded
        load.join(120)
        assert not load.is_alive() and not load.error, load.error
        deadline = time.monotonic() + 180
        while True:  # the peer's own cycles ship the rest of the load
            report = cycle_on(a_key, CONF, spark)
            assert all(q.status in ("ok", "disabled") for q in report.queues), report.queues
            on_a = family_cells(hbase_table_cells(real_hbase, table), b"a")
            if family_cells(hbase_table_cells(real_hbase_peer, table), b"a") == on_a:
                break
            assert time.monotonic() < deadline, len(on_a)
            time.sleep(1)
        assert len({c[0] for c in on_a}) == 700
        counters = real_hbase.verify_replication(peer, table, families=["a"])
        assert counters["GOODROWS"] == 700 and counters.get("BADROWS", 0) == 0, counters
        # B has A's descriptor; the helper peer and both snapshots are gone
        on_b = {d.name: d for d in read_hbase_tables(LocalFileSystem(), str(real_hbase_peer.rootdir))}[table]
        assert (on_b.family("a").scope, on_b.family("a").max_versions, on_b.family("b").scope) == (1, 3, 0)
        assert {p["id"] for p in real_hbase.admin("peers")} & {peer, f"seed.{peer}"} == {peer}
        assert not list((real_hbase.rootdir / ".hbase-snapshot").glob("hbrep-seed-*"))
        assert not list((real_hbase_peer.rootdir / ".hbase-snapshot").glob("hbrep-seed-*"))
    finally:
        hbrep("remove_peer", peer, cluster=a_key)


def test_seed_peer_from_real_hbase_refuses_bad_requests_with_one_line(real_hbase, hbrep_sink):
    a_key = real_hbase.layout().cluster_key
    peer, table = f"n{uuid.uuid4().hex[:6]}", f"refused_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", table, "1", "a:1")

    def refused(*args: str) -> str:
        done = subprocess.run([*HBREP, "--cluster", a_key, "seed_peer", *args], capture_output=True, text=True)
        assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        return done.stderr.strip()

    hbrep("add_peer", peer, str(hbrep_sink.key), "--shadow", "--rootdir", real_hbase.rootdir_uri, cluster=a_key)
    try:
        assert "is an hbrep cluster" in refused(peer, table, "--peer-rootdir", "/nowhere")
        assert "does not exist" in refused(peer, "no_such_table")
    finally:
        hbrep("remove_peer", peer, cluster=a_key)
    b_key = f"127.0.0.1:{ClusterKey.parse(a_key).servers[0][1]}:/hbase"
    assert "add it first with add_peer --shadow" in refused(f"{peer}x", table, "--cluster-key", b_key)
    assert f"seed.{peer}" not in {p["id"] for p in real_hbase.admin("peers")}


def test_seed_peer_from_hbrep_to_a_real_hbase_creates_the_missing_table_with_the_source_descriptor(
    real_hbase_peer, hbrep_sink
):
    """An hbrep source seeds a real HBase peer that lacks the table: HBase's Admin creates it with the
    source's families, scopes and versions; the chunks are written over HBase's RPC; B then holds the
    source's cells exactly, and HBase's own descriptor says what the source's does."""
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.wal.model import Cell, CellType

    source_key, b_key = str(hbrep_sink.key), real_hbase_peer.layout().cluster_key
    peer, table = f"y{uuid.uuid4().hex[:6]}", f"toreal_{uuid.uuid4().hex[:8]}"
    b_thrift = f"127.0.0.1:{real_hbase_peer.layout().thrift_port}"
    families = (ColumnFamilyDescriptor("a", scope=1, max_versions=3), ColumnFamilyDescriptor("b", scope=1))
    TableRegistry(LocalFileSystem(), hbrep_sink.root).create(TableDescriptor.of(table, *families))
    with hbrep_sink.client() as client:
        cells = [Cell(b"k%04d" % i, b"a", b"q", 1_000 + v, CellType.PUT, b"v%d-%d" % (i, v))
                 for i in range(400) for v in range(2)]  # fmt: skip
        cells += [Cell(b"k%04d" % i, b"b", b"q", 2_000, CellType.PUT, b"b%d" % i) for i in range(0, 400, 3)]
        client.batch(table, cells)
    hbrep("add_peer", peer, b_key, "--table-cfs", table, "--config", f"hbrep.peer.thrift={b_thrift}",
          cluster=source_key)  # fmt: skip
    try:
        seeded = hbrep_json("seed_peer", peer, table, "--chunks", "3", cluster=source_key)
        assert seeded["created_on_peer"] == [table] and seeded["chunks"] == {table: 3}, seeded
        assert seeded["verify"][table] == {**seeded["verify"][table], "GOODROWS": 400, "BADROWS": 0}, seeded
        expected = {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells}
        assert hbrep_table_cells(hbrep_sink, table) == expected
        assert hbase_table_cells(real_hbase_peer, table) == expected
        on_b = {d.name: d for d in read_hbase_tables(LocalFileSystem(), str(real_hbase_peer.rootdir))}[table]
        assert [(f, on_b.family(f).scope, on_b.family(f).max_versions) for f in ("a", "b")] == [
            ("a", 1, 3),
            ("b", 1, families[1].max_versions),
        ]
    finally:
        hbrep("remove_peer", peer, cluster=source_key)
