"""Serial replication live: rows move between region servers under load (a server joins, one is SIGKILLed
and failed over), and every row's versions reach a serial peer in the order they were written."""

from __future__ import annotations

import itertools
import os
import threading
import time
import uuid
from collections import defaultdict

import pytest
from support import add_peer, create_table, cycle, table_state

from replication.cleaner import clean_once
from replication.cluster.region_routing import encoded_region_name
from replication.failover import failover_once
from replication.wal.model import Cell, CellType
from replication.wal.names import old_wal_dir, server_of_wal
from replication.wal.reader import open_wal
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.serial_barriers import read_barriers

pytestmark = pytest.mark.slow

ROWS = [f"row-{i:02d}".encode() for i in range(40)]


def load_versions(cluster, table: str, stop: threading.Event, written: list[int]) -> None:
    """Round n writes version n (value and timestamp) of every row, one batch a round, until stopped."""
    with cluster.client() as client:
        n = 0
        while not stop.is_set():
            client.batch(table, [Cell(r, b"f1", b"q", 1_000_000 + n, CellType.PUT, b"%06d" % n) for r in ROWS])
            written.append(n)
            n += 1
            time.sleep(0.02)


def wal_paths(root: str, server: str) -> list[str]:
    """Every WAL file of ``server`` under the cluster root (WALs/, a splitting dir, oldWALs/), by filenum."""
    found = []
    for base in (os.path.join(root, "WALs"), old_wal_dir(root)):
        for folder, _, names in os.walk(base):
            found += [os.path.join(folder, n) for n in names if _server_of(n) == server]
    return sorted(found, key=os.path.basename)


def _server_of(name: str) -> str | None:
    try:
        return server_of_wal(name)
    except Exception:
        return None


def arrivals(root: str, servers) -> dict[bytes, list[int]]:
    """Per row, the versions in the order the peer wrote them to its WALs (each row lives on one peer
    server, so its WAL order is the order of arrival)."""
    out: dict[bytes, list[int]] = defaultdict(list)
    for server in servers:
        for entry in _entries(root, server):
            for cell in entry.cells:
                out[cell.row].append(int(cell.value))
    return out


def _entries(root: str, server: str):
    for path in wal_paths(root, server):
        with open_wal(path) as reader:
            yield from (item.entry for item in reader)


def writers(root: str, servers) -> dict[bytes, set[str]]:
    """Per row, the source servers whose WALs hold a version of it."""
    out: dict[bytes, set[str]] = defaultdict(set)
    for server in servers:
        for entry in _entries(root, server):
            for cell in entry.cells:
                out[cell.row].add(server)
    return out


def test_versions_reach_a_serial_peer_in_write_order_across_moves_and_a_failover(pair, spark):
    table = f"serial_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    add_peer(pair, "s1", serial=True)
    stop, written = threading.Event(), []
    load = threading.Thread(target=load_versions, args=(pair.source, table, stop, written), daemon=True)
    load.start()
    waited = 0
    try:
        time.sleep(1.0)
        waited += cycle(pair, spark).peers["s1"].waiting_queues
        victim = pair.source.servers[0]  # one of the servers from before the join
        joined = pair.source.start_region_server()  # rows move: a new server takes a share of every table
        time.sleep(1.0)
        waited += cycle(pair, spark).peers["s1"].waiting_queues
        pair.source.kill(victim)  # rows move again, first by the client (re-route), then by ZooKeeper
        pair.source.wait_until_dead(victim)
        with connected(pair.source_key) as zk:
            failover_once(zk, pair.source_key, pair.conf)
        time.sleep(1.0)
        waited += cycle(pair, spark).peers["s1"].waiting_queues
    finally:
        stop.set()
        load.join(30)
    for _ in range(20):
        report = cycle(pair, spark)
        waited += report.peers["s1"].waiting_queues
        if report.peers["s1"].entries_read == 0 and report.peers["s1"].waiting_queues == 0:
            break
    else:
        pytest.fail(f"the serial peer did not catch up: {report.queues}")

    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)
    source_servers = [*pair.source.servers, joined, victim]
    moved = [row for row, servers in writers(pair.source.root, set(source_servers)).items() if len(servers) > 1]
    assert moved, "no row moved between region servers: the test proves nothing"
    seen = arrivals(pair.peer.root, pair.peer.servers)
    for row in ROWS:
        versions = seen[row]
        assert set(versions) == set(written), f"{row!r}: versions missing on the peer"
        back = [(a, b) for a, b in itertools.pairwise(versions) if b < a]
        assert not back, f"{row!r}: version {back[0][1]} arrived after {back[0][0]}"
    with connected(pair.source_key) as zk:
        paths = ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)
        barriers = read_barriers(zk, paths)
        assert joined in barriers and len({b.epoch for bs in barriers.values() for b in bs}) >= 2
        # HBase's last pushed sequence ids, per region and peer: the joined server's region of the table
        # holds every edit it wrote, all shipped
        region = encoded_region_name(table, joined)
        last = max(e.key.log_sequence_number for e in _entries(pair.source.root, joined)
                   if e.key.encoded_region_name.decode() == region)  # fmt: skip
        assert ReplicationQueueStorage(zk, paths).get_last_sequence_id(region, "s1") == last
        # the log cleaner drops the barriers of the killed server once its WALs are all shipped
        assert victim in clean_once(zk, pair.source_key, pair.conf).barriers_dropped
        assert victim not in read_barriers(zk, paths) and joined in read_barriers(zk, paths)
    print(f"moved rows: {len(moved)}, waiting queue-passes: {waited}")
