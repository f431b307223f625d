"""Two-way replication A ↔ B (master-master): every edit arrives on the other side exactly once, no loop."""

from __future__ import annotations

import pytest

from tests.reliability.harness import (
    ROWS,
    add_peer,
    cluster_id,
    create_table,
    cycle,
    failed_queues,
    has_queue,
    new_table,
    replicated_cells_by_origin,
    shipped_rows,
    verify,
    wait_for,
    write_rows,
)

pytestmark = pytest.mark.slow


def test_two_way_edits_arrive_exactly_once_and_never_loop(topology, spark):
    clusters = topology(a=2, b=2)
    a, b = clusters["a"], clusters["b"]
    table = new_table("two")
    create_table([a, b], table)
    add_peer(a, "1", b)
    add_peer(b, "1", a)
    wait_for(lambda: has_queue(a, "1") and has_queue(b, "1"), what="queues of the new peers")

    write_rows(a, table, 0, ROWS, tag="a")
    write_rows(b, table, 0, ROWS, tag="b")
    # the same rows written on both sides (other qualifiers are not needed: newer timestamps win on both)
    write_rows(a, table, 0, 10, tag="both", value="from-a", ts=2_000_000)
    write_rows(b, table, 0, 10, tag="both", value="from-b", ts=2_000_001)

    to_b = to_a = filtered_on_b = 0
    for _ in range(3):
        report_a, report_b = cycle(a, spark), cycle(b, spark)
        assert not failed_queues(report_a) and not failed_queues(report_b), (report_a.queues, report_b.queues)
        to_b += shipped_rows(report_a)
        to_a += shipped_rows(report_b)
        filtered_on_b += report_b.peers["1"].filtered
    assert to_b == ROWS + 10, "every edit made on A reaches B exactly once"
    assert to_a == ROWS + 10, "every edit made on B reaches A exactly once"
    assert filtered_on_b > 0, "A's edits applied on B are filtered by cluster-id marking, not shipped back"

    for _ in range(3):  # quiet cycles: nothing more ships in either direction
        assert shipped_rows(cycle(a, spark)) == 0
        assert shipped_rows(cycle(b, spark)) == 0

    for src, dst in ((a, b), (b, a)):
        result = verify(spark, src, dst, table)
        assert result.counters["BADROWS"] == 0, result.as_dict()
        assert result.counters["GOODROWS"] == 2 * ROWS + 10

    id_a, id_b = cluster_id(a), cluster_id(b)
    on_a, on_b = replicated_cells_by_origin(a, table), replicated_cells_by_origin(b, table)
    # In each cluster's WALs: its own edits unmarked, the other's edits marked with the other's id only, once.
    assert on_a == {(): ROWS + 10, (id_b,): ROWS + 10}, on_a
    assert on_b == {(): ROWS + 10, (id_a,): ROWS + 10}, on_b
