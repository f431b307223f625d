"""A cycle of three clusters A → B → C → A: every edit reaches the two other clusters exactly once and stops
where it started (HBase's cluster-id marking: an edit is never shipped to a cluster already in its key's
cluster ids). Compared as sets of row keys and as whole cells, on hbrep's embedded clusters."""

from __future__ import annotations

import pytest
from support import table_state

from tests.reliability.harness import (
    REPLICATED,
    ROWS,
    add_peer,
    cluster_id,
    create_table,
    cycle,
    failed_queues,
    has_queue,
    new_table,
    replicated_cells_by_origin,
    row_keys,
    shipped_rows,
    wait_for,
    write_rows,
)

pytestmark = pytest.mark.slow


def test_a_three_cluster_cycle_delivers_every_row_exactly_once_everywhere(topology, spark):
    clusters = topology(ya=2, yb=2, yc=1)
    a, b, c = clusters["ya"], clusters["yb"], clusters["yc"]
    table = new_table("cycle")
    create_table([a, b, c], table)
    add_peer(a, "1", b)
    add_peer(b, "1", c)
    add_peer(c, "1", a)
    wait_for(lambda: all(has_queue(x, "1") for x in (a, b, c)), what="queues of the new peers")

    for cluster, tag in ((a, "a"), (b, "b"), (c, "c")):
        write_rows(cluster, table, 0, ROWS, tag=tag)

    shipped = {"a": 0, "b": 0, "c": 0}
    filtered = {"a": 0, "b": 0, "c": 0}
    for _ in range(8):
        moved = 0
        for name, cluster in (("a", a), ("b", b), ("c", c)):
            report = cycle(cluster, spark)
            assert not failed_queues(report), report.queues
            shipped[name] += shipped_rows(report)
            filtered[name] += report.peers["1"].filtered
            moved += shipped_rows(report)
        if moved == 0:
            break
    else:
        raise AssertionError(f"the cycle did not settle: {shipped}")
    # each cluster ships its own rows and the rows of the cluster before it, and nothing more; the rows of the
    # cluster two hops back already name the next cluster in their cluster ids and are filtered
    assert shipped == {"a": 2 * ROWS, "b": 2 * ROWS, "c": 2 * ROWS}, shipped
    assert all(count > 0 for count in filtered.values()), filtered

    expected_rows = {f"{tag}{i:06d}".encode() for tag in "abc" for i in range(ROWS)}
    states = {}
    for name, cluster in (("a", a), ("b", b), ("c", c)):
        assert row_keys(spark, cluster, table) == expected_rows, name
        states[name] = table_state(spark, cluster, table, families=[REPLICATED])
    assert len(states["a"]) == 3 * ROWS  # one cell per row in the replicated family: none twice
    assert states["a"] == states["b"] == states["c"]

    id_a, id_b, id_c = cluster_id(a), cluster_id(b), cluster_id(c)
    # in each cluster's WALs: its own edits, the previous cluster's (one id) and the one before (two ids), once
    assert replicated_cells_by_origin(a, table) == {(): ROWS, (id_c,): ROWS, (id_b, id_c): ROWS}
    assert replicated_cells_by_origin(b, table) == {(): ROWS, (id_a,): ROWS, (id_c, id_a): ROWS}
    assert replicated_cells_by_origin(c, table) == {(): ROWS, (id_b,): ROWS, (id_a, id_b): ROWS}
