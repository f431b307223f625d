"""Chain A → B → C (cluster ids carried through) and fan-out A → {B, C} with C disabled for a while."""

from __future__ import annotations

import os

import pytest

from replication.cleaner import clean_once
from replication.zk.client import connected
from tests.reliability.harness import (
    ROWS,
    add_peer,
    cluster_id,
    create_table,
    cycle,
    drain,
    failed_queues,
    has_queue,
    key_of,
    new_table,
    queue_state,
    replicated_cells_by_origin,
    set_peer_state,
    shipped_rows,
    verify,
    wait_for,
    write_rows,
)

pytestmark = pytest.mark.slow


def test_chain_carries_the_origin_cluster_id_through(topology, spark):
    clusters = topology(ca=2, cb=2, cc=1)
    a, b, c = clusters["ca"], clusters["cb"], clusters["cc"]
    table = new_table("chain")
    create_table([a, b, c], table)
    add_peer(a, "1", b)
    add_peer(b, "1", c)
    wait_for(lambda: has_queue(a, "1") and has_queue(b, "1"), what="queues of the new peers")

    write_rows(a, table, 0, ROWS, tag="a")
    a_to_b = sum(shipped_rows(r) for r in drain(a, spark))
    b_to_c = sum(shipped_rows(r) for r in drain(b, spark))
    assert a_to_b == ROWS and b_to_c == ROWS, (a_to_b, b_to_c)

    id_a, id_b = cluster_id(a), cluster_id(b)
    # B's sink kept A's id in the keys it wrote; C's sink wrote [A, B]: every cluster the edit passed.
    assert replicated_cells_by_origin(b, table) == {(id_a,): ROWS}
    assert replicated_cells_by_origin(c, table) == {(id_a, id_b): ROWS}
    for target in (b, c):
        result = verify(spark, a, target, table)
        assert result.counters["BADROWS"] == 0, result.as_dict()
        assert result.counters["GOODROWS"] == ROWS
    # nothing flows further or back: both hops are quiet
    assert shipped_rows(cycle(a, spark)) == 0 and shipped_rows(cycle(b, spark)) == 0


def test_fan_out_with_one_peer_disabled_then_caught_up(topology, spark):
    clusters = topology(fa=2, fb=1, fc=1)
    a, b, c = clusters["fa"], clusters["fb"], clusters["fc"]
    table = new_table("fan")
    create_table([a, b, c], table)
    add_peer(a, "b", b)
    add_peer(a, "c", c, enabled=False)
    wait_for(lambda: has_queue(a, "b") and has_queue(a, "c"), what="queues of the new peers")

    half = ROWS // 2
    write_rows(a, table, 0, half)
    to_b = sum(shipped_rows(r, "b") for r in drain(a, spark))
    assert to_b == half
    # roll and flush: the shipped WALs leave B's queue and go to oldWALs, but C's queue keeps them
    with a.client() as client:
        for server in a.servers:
            client.roll_wal(server)
        client.flush(table)
    write_rows(a, table, half, ROWS - half)
    reports = drain(a, spark)
    assert all(r.peers["c"].state == "DISABLED" and r.peers["c"].rows_shipped == 0 for r in reports)
    to_b += sum(shipped_rows(r, "b") for r in reports)
    assert to_b == ROWS, "B keeps getting every edit while C is disabled"
    assert verify(spark, a, b, table).counters["BADROWS"] == 0

    queues = queue_state(a)
    c_wals = {wal for server in a.servers for wal in queues[server]["c"]}
    b_wals = {wal for server in a.servers for wal in queues[server]["b"]}
    assert len(c_wals) > len(b_wals), f"C's queues retain the rolled WALs: c={c_wals} b={b_wals}"
    with connected(key_of(a)) as zk:  # the log cleaner, with no TTL, still keeps every WAL C needs
        clean_once(zk, key_of(a), a.conf.with_overrides({"hbase.master.logcleaner.ttl": "0"}))
    old = os.path.join(a.root, "oldWALs")
    archived = set(os.listdir(old)) if os.path.isdir(old) else set()
    live = {f for s in a.servers for f in os.listdir(os.path.join(a.root, "WALs", s))}
    assert c_wals <= archived | live, "no WAL in a disabled peer's queue may be deleted"

    set_peer_state(a, "c", True)
    reports = drain(a, spark)
    assert sum(shipped_rows(r, "c") for r in reports) == ROWS, "C catches up with everything it missed"
    assert sum(shipped_rows(r, "b") for r in reports) == 0, "B gets nothing twice"
    for target in (b, c):
        result = verify(spark, a, target, table)
        assert result.counters["BADROWS"] == 0, result.as_dict()
        assert result.counters["GOODROWS"] == ROWS
    assert not any(failed_queues(r) for r in reports)
