"""hbrep seed_peer: a peer brought in with tables that have history, while the source keeps writing
(embedded clusters, real ship cycles, Spark); the end is judged by the sets of cells on both sides."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest
from support import create_table, cycle

from replication.operations.seed import catch_up, copy_chunk, seed_peer, start_seed
from replication.operations.sync_table import ALL_VERSIONS
from replication.tables.spark_views import scan
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.seed_marks import read_seed

pytestmark = pytest.mark.slow

HISTORY = 2_000


def every_cell(spark, cluster, table: str) -> set[tuple]:
    """Flush, then every version of every cell of family f (the set both sides are compared by)."""
    with cluster.client() as client:
        client.flush(table)
    if not _exists(cluster, table):
        return set()
    rows = scan(spark, cluster.root, table, versions=ALL_VERSIONS, families=["f"]).collect()
    return {(bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, bytes(r.value)) for r in rows}


def _exists(cluster, table: str) -> bool:
    from replication.fs import get_filesystem
    from replication.tables.descriptors import TableRegistry

    fs, root = get_filesystem(cluster.root)
    return TableRegistry(fs, root).exists(table)


def _history(pair, table: str, rows: int = HISTORY) -> None:
    create_table(pair.source, table, ("f", 1), ("local", 0))
    with pair.source.client() as client:
        for start in range(0, rows, 500):
            cells = [Cell(b"h%06d" % i, b"f", b"q", 5_000 + i, CellType.PUT, b"v%d" % i)
                     for i in range(start, min(rows, start + 500))]  # fmt: skip
            # and a family with REPLICATION_SCOPE 0: never on the peer, so the seed's verify must leave it out
            cells += [Cell(c.row, b"local", b"q", c.timestamp, CellType.PUT, b"here only") for c in cells[:100]]
            client.batch(table, cells)
        client.batch(table, [Cell(b"h%06d" % i, b"f", b"q", 9_000 + i, CellType.PUT, b"w") for i in range(50)])
        for server in pair.source.servers:  # the history leaves the current WALs: a new peer's queues miss it
            client.roll_wal(server)


class Load(threading.Thread):
    """Batches of 10 rows at the current time until stopped; the cells of every acknowledged batch."""

    def __init__(self, cluster, table: str, prefix: str):
        super().__init__(daemon=True)
        self.cluster, self.table, self.prefix = cluster, table, prefix
        self.stop = threading.Event()
        self.acked: set[tuple] = set()

    def run(self) -> None:
        with self.cluster.client() as client:
            n = 0
            while not self.stop.is_set():
                ts = int(time.time() * 1000)
                cells = [
                    Cell(f"{self.prefix}{n:05d}-{i}".encode(), b"f", b"q", ts, CellType.PUT, b"L") for i in range(10)
                ]
                client.batch(self.table, cells)
                self.acked |= {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells}
                n += 1
                time.sleep(0.05)


def _paths(pair) -> ZNodePaths:
    return ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)


def test_seed_copies_history_while_the_source_writes_and_the_peer_ships_on(pair, spark):
    """A new peer and a table it lacks: the history and every row written during the seed arrive, the
    peer's own cycles (run all along, as its DAG would) skip the table until the seed ends, and the sets
    of cells on both sides are equal at the end."""
    table = f"s_{uuid.uuid4().hex[:6]}"
    _history(pair, table)
    load = Load(pair.source, table, "during")
    shipping = threading.Event()
    cycles_ran: list[dict] = []

    def ship_all_along() -> None:
        while not shipping.is_set():
            try:
                cycles_ran.append(cycle(pair, spark, peer_ids=["5"]).as_dict())
            except Exception as exc:  # the peer is added by the seed itself: before that there is none
                cycles_ran.append({"error": str(exc)})
            time.sleep(0.5)

    shipper = threading.Thread(target=ship_all_along, daemon=True)
    load.start()
    shipper.start()
    try:
        deadline = time.monotonic() + 120
        while len(load.acked) < 50:  # the load is under way before the seed: its rows are in the copy
            assert time.monotonic() < deadline, "the load wrote nothing"
            time.sleep(0.1)
        with connected(pair.source_key) as zk:
            report = seed_peer(spark, zk, pair.source_key, pair.conf, "5", [table],
                               cluster_key=str(pair.peer_key), chunks=4, timeout_s=300)  # fmt: skip
    finally:
        load.stop.set()
        load.join(10)
        shipping.set()
        shipper.join(120)
    assert report.created_on_peer == [table] and report.chunks == {table: 4}
    # the history left the WALs before the peer was added, so only the copy can bring it (f keeps one version):
    # the copy wrote at least those cells. The load's cells may come by the copy, by the peer's own cycles (in
    # the moment between the peer's add and the seed's mark, when they do not skip the table yet) or by the
    # helper peer's catch-up, as timing has it; the copy writes only what the peer lacks, so they are not
    # counted here but in the sets compared below. (Counting them here failed CI once: 2034 < 2000 + 60.)
    assert report.copied_cells[table] >= HISTORY
    assert report.verify[table]["BADROWS"] == 0 and report.verify[table]["GOODROWS"] >= HISTORY
    with connected(pair.source_key) as zk:
        assert read_seed(zk, _paths(pair), "5") is None
        assert "seed.5" not in ReplicationPeerStorage(zk, _paths(pair)).list_peer_ids()
    deadline = time.monotonic() + 120
    while not load.acked <= every_cell(spark, pair.peer, table):
        assert time.monotonic() < deadline, "rows written during the seed never reached the peer"
        cycle(pair, spark, peer_ids=["5"])
    assert every_cell(spark, pair.source, table) == every_cell(spark, pair.peer, table)
    assert len(load.acked) > 0 and any("error" not in c for c in cycles_ran)


def test_the_peer_skips_the_seeded_table_until_the_catch_up_ships_what_it_skipped(pair, spark):
    """Step by step, as the DAG runs it: after start the peer's cycles skip the table's new edits (another
    table still ships); chunks are recorded one by one; the catch-up ships what was skipped."""
    table, other = f"s_{uuid.uuid4().hex[:6]}", f"o_{uuid.uuid4().hex[:6]}"
    _history(pair, table, rows=400)
    for cluster in (pair.source, pair.peer):
        create_table(cluster, other, ("f", 1))
    with connected(pair.source_key) as zk:
        mark, created = start_seed(spark, zk, pair.source_key, pair.conf, "6", [table],
                                   cluster_key=str(pair.peer_key), chunks=3)  # fmt: skip
        assert created == [table] and mark.chunk_count(table) == 3 and mark.stage == "copying"
        with pair.source.client() as client:
            client.batch(table, [Cell(b"new%03d" % i, b"f", b"q", 70_000, CellType.PUT, b"n") for i in range(20)])
            client.batch(other, [Cell(b"o%03d" % i, b"f", b"q", 70_000, CellType.PUT, b"o") for i in range(20)])
        cycle(pair, spark, peer_ids=["6"])
        assert len(every_cell(spark, pair.peer, other)) == 20  # another table still ships
        assert every_cell(spark, pair.peer, table) == set()  # the seeded one waits (nothing copied yet)
        for chunk in range(3):
            copy_chunk(spark, zk, pair.source_key, pair.conf, "6", table, chunk)
            assert read_seed(zk, _paths(pair), "6").done == {table: list(range(chunk + 1))}
        assert copy_chunk(spark, zk, pair.source_key, pair.conf, "6", table, 0) == 0  # finished: skipped
        copied = every_cell(spark, pair.peer, table)
        assert len(copied) >= 400 + 20  # the copy took the table as it stood, new rows included

        with pair.source.client() as client:  # written after the copy: only the helper's queues have it
            client.batch(table, [Cell(b"late%03d" % i, b"f", b"q", 80_000, CellType.PUT, b"l") for i in range(15)])
        cycle(pair, spark, peer_ids=["6"])
        assert not {c for c in every_cell(spark, pair.peer, table) if c[0].startswith(b"late")}
        cycles, through = catch_up(zk, pair.source_key, pair.conf, "6",
                                   run_helper_cycle=lambda p: cycle(pair, spark, peer_ids=[p]))  # fmt: skip
        assert cycles >= 1 and through > 0
    assert every_cell(spark, pair.source, table) == every_cell(spark, pair.peer, table)


def _hbrep(*args: str) -> list[str]:
    return [sys.executable, "-m", "replication.cli", *args]


def test_a_seed_killed_mid_copy_resumes_from_its_last_finished_chunk(pair, spark):
    """``hbrep seed_peer`` SIGKILLed after some chunks: run again, it copies only the chunks left, and the
    tables end equal."""
    from tests.badinput.helpers import hbrep

    table = f"s_{uuid.uuid4().hex[:6]}"
    _history(pair, table, rows=1_500)
    key = str(pair.source_key)
    first = subprocess.Popen(
        _hbrep("--cluster", key, "seed_peer", "7", table, "--cluster-key", str(pair.peer_key), "--chunks", "6"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    killed_after = None
    deadline = time.monotonic() + 300
    with connected(pair.source_key) as zk:
        while killed_after is None:
            assert first.poll() is None, f"the seed ended before it could be killed: {first.communicate()}"
            assert time.monotonic() < deadline, "no chunk finished within 300 s"
            mark = read_seed(zk, _paths(pair), "7")
            if mark is not None and mark.done.get(table):
                os.killpg(first.pid, signal.SIGKILL)
                first.wait(30)
                killed_after = len(read_seed(zk, _paths(pair), "7").done[table])
            time.sleep(0.05)
    assert 0 < killed_after < 6
    resumed = hbrep("--cluster", key, "seed_peer", "7", table, "--json")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["resumed_chunks"] == killed_after and report["verify"][table]["BADROWS"] == 0
    assert every_cell(spark, pair.source, table) == every_cell(spark, pair.peer, table)


def test_bad_seed_requests_are_one_line(pair):
    from tests.badinput.helpers import error_line, hbrep

    table = f"s_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, table, ("f", 1))
    key = str(pair.source_key)
    for args, message in (
        (("seed_peer", "8", table), "peer 8 does not exist: give its cluster key (--cluster-key)"),
        (("seed_peer", "8", "no_such_table", "--cluster-key", str(pair.peer_key)), "no_such_table"),
        (("seed_peer", "8", table, "--cluster-key", "not-a-key"), "not-a-key"),
        (("seed_peer", "bad-id", table, "--cluster-key", str(pair.peer_key)), "bad peer id 'bad-id'"),
    ):
        line = error_line(hbrep("--cluster", key, *args))
        assert line.startswith("hbrep: error: ") and message in line, line
