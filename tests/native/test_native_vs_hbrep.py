"""hbrep against HBase's own replication on the same real clusters, the same backlog, the same moment.

Real HBase 2.6 A and B (one region server each: the bench section runs three), a native HBase peer
(``native_t``) and an hbrep shadow peer (``hbrep_t``) on A, each to its own table on B. A backlog is
written into both tables while neither peer ships (native DISABLED, hbrep's ship DAG paused); then both
start together (HBase's enable_replication_peer; the ship DAG unpaused and triggered, run by Airflow's
real scheduler with ship windows on a Spark Connect server). The test fails if hbrep ships fewer rows
than native, or if either side loses or alters a cell: the row-key and cell sets of both tables on B
equal each other's (up to the table) and the source's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from replication.devstack.native_pair import (
    HBREP_PEER,
    HBREP_TABLE,
    NATIVE_PEER,
    NATIVE_TABLE,
    NativePair,
    load_rows,
    native_pair,
    row_key,
    run_states,
    table_cells,
    wait_for_rows,
)
from replication.net import free_port

pytestmark = pytest.mark.slow

ROWS = 1_500
VALUE = b"x" * 200
ARRIVAL_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def pair(zk_server, spark_connect, tmp_path_factory) -> Iterator[NativePair]:
    """A and B (one region server each), the two tables, Airflow's scheduler with the ship DAG paused."""
    state = tmp_path_factory.mktemp("native")
    with native_pair(state, zk_server.port, spark_connect.port, free_port(), window_ms=20_000) as started:
        yield started


def _rows(cells: set[tuple]) -> set[bytes]:
    return {cell[0] for cell in cells}


def test_hbrep_ships_every_row_native_ships_from_the_same_backlog(pair: NativePair):
    pair.add_peers()
    for table in (NATIVE_TABLE, HBREP_TABLE):
        load_rows(pair.source, table, 0, ROWS, VALUE)
    # written while neither ships: nothing of it may be on B yet
    assert not table_cells(pair.peer, NATIVE_TABLE) and not table_cells(pair.peer, HBREP_TABLE)

    started = pair.enable_both()
    try:
        seen = wait_for_rows(pair, row_key(ROWS - 1), ARRIVAL_TIMEOUT_S)
    except TimeoutError as exc:
        pytest.fail(f"{exc}; ship DAG runs: {run_states(pair.api)}")
    drained = {peer: round(at - started, 1) for peer, at in seen.items()}

    on_a = {table: table_cells(pair.source, table) for table in (NATIVE_TABLE, HBREP_TABLE)}
    deadline = time.monotonic() + 60  # the last row arrived; edits of one queue arrive in WAL order
    while True:
        on_b = {table: table_cells(pair.peer, table) for table in (NATIVE_TABLE, HBREP_TABLE)}
        if on_b == on_a or time.monotonic() > deadline:
            break
        time.sleep(1)

    # and no ship run failed on the way (each that shipped emitted its asset event for the real HBase source)
    assert "failed" not in {state for _, state in run_states(pair.api)}, run_states(pair.api)
    native_rows, hbrep_rows = _rows(on_b[NATIVE_TABLE]), _rows(on_b[HBREP_TABLE])
    assert len(hbrep_rows) >= len(native_rows), f"hbrep shipped fewer rows than native ({drained} s to the last)"
    written = {row_key(i) for i in range(ROWS)}
    assert _rows(on_a[NATIVE_TABLE]) == _rows(on_a[HBREP_TABLE]) == written
    assert native_rows == hbrep_rows == written, f"missing on B: native {len(written - native_rows)}, " \
                                                 f"hbrep {len(written - hbrep_rows)}"  # fmt: skip
    # the same cells (row, family, qualifier, timestamp, value) as the source's, on both sides
    assert on_b[NATIVE_TABLE] == on_a[NATIVE_TABLE]
    assert on_b[HBREP_TABLE] == on_a[HBREP_TABLE]
    print(f"seconds from enabling to the last row on B: {drained} ({NATIVE_PEER} vs {HBREP_PEER})")
