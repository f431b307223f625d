"""Hand-worked cases of HBase read semantics (ScanDeleteTracker / ScanQueryMatcher rules)."""

import pytest

from replication.tables.errors import TableError
from replication.tables.semantics import IllegalScan, rows_of, scan_cells
from replication.wal.model import Cell

PUT, DEL, DFV, DCOL, DFAM = 4, 8, 10, 12, 14


def put(q, ts, value=None, row=b"r", fam=b"f", seq=1):
    value = value if value is not None else f"{q.decode()}@{ts}".encode()
    return (Cell(row, fam, q, ts, PUT, value), seq)


def marker(kind, q, ts, row=b"r", fam=b"f", seq=100):
    return (Cell(row, fam, q, ts, kind), seq)


def got(cells, **kw):
    return [(c.row, c.family, c.qualifier, c.timestamp, c.type, c.value) for c in scan_cells(cells, **kw)]


def visible(cells, **kw):
    return [(c.row, c.family, c.qualifier, c.timestamp) for c in scan_cells(cells, **kw)]


def test_newest_version_by_default_and_more_when_asked():
    cells = [put(b"a", ts) for ts in (1, 3, 2)] + [put(b"b", 7)]
    assert visible(cells) == [(b"r", b"f", b"a", 3), (b"r", b"f", b"b", 7)]
    assert [c[3] for c in visible(cells, versions=2)] == [3, 2, 7]


def test_delete_masks_only_the_exact_timestamp_of_its_column():
    cells = [put(b"a", 4), put(b"a", 5), put(b"a", 6), put(b"b", 5), marker(DEL, b"a", 5)]
    assert visible(cells, versions=10) == [
        (b"r", b"f", b"a", 6),
        (b"r", b"f", b"a", 4),
        (b"r", b"f", b"b", 5),
    ]


def test_delete_column_masks_all_older_versions_of_its_column_only():
    cells = [put(b"a", ts) for ts in (3, 5, 6)] + [put(b"b", 2), marker(DCOL, b"a", 5)]
    assert visible(cells, versions=10) == [(b"r", b"f", b"a", 6), (b"r", b"f", b"b", 2)]


def test_delete_family_masks_every_column_of_the_family_up_to_its_timestamp():
    cells = [
        put(b"a", 5),
        put(b"b", 4),
        put(b"c", 6),
        put(b"a", 1, fam=b"g"),
        put(b"a", 1, row=b"s"),
        marker(DFAM, b"", 5),
    ]
    assert visible(cells, versions=10) == [
        (b"r", b"f", b"c", 6),
        (b"r", b"g", b"a", 1),
        (b"s", b"f", b"a", 1),
    ]


def test_delete_family_version_masks_every_column_at_exactly_its_timestamp():
    cells = [put(b"a", 5), put(b"b", 5), put(b"b", 4), put(b"c", 6), put(b"a", 5, fam=b"g")]
    cells.append(marker(DFV, b"", 5))
    assert visible(cells, versions=10) == [
        (b"r", b"f", b"b", 4),
        (b"r", b"f", b"c", 6),
        (b"r", b"g", b"a", 5),
    ]


def test_delete_wins_at_equal_timestamp_even_when_the_put_is_newer():
    # The Put was written after the markers (higher sequence) yet stays masked: HBase ignores sequence
    # ids for deletes unless NEW_VERSION_BEHAVIOR is on.
    for kind in (DEL, DCOL, DFAM, DFV):
        q = b"" if kind in (DFAM, DFV) else b"a"
        cells = [marker(kind, q, 5, seq=1), put(b"a", 5, seq=2)]
        assert visible(cells) == [], kind


def test_identical_coordinates_keep_the_highest_sequence():
    cells = [put(b"a", 5, b"old", seq=1), put(b"a", 5, b"new", seq=9), put(b"a", 5, b"mid", seq=4)]
    assert got(cells, versions=3) == [(b"r", b"f", b"a", 5, PUT, b"new")]
    # A Delete at that timestamp masks every one of them.
    assert got([*cells, marker(DEL, b"a", 5, seq=2)]) == []


def test_deleted_and_out_of_range_versions_do_not_count():
    cells = [put(b"a", ts) for ts in (1, 2, 3, 4, 5)] + [marker(DEL, b"a", 4)]
    assert [c[3] for c in visible(cells, versions=2)] == [5, 3]
    assert [c[3] for c in visible(cells, versions=2, end_ts=5)] == [3, 2]
    assert [c[3] for c in visible(cells, versions=10, start_ts=2, end_ts=5)] == [3, 2]


def test_marker_after_the_time_range_still_masks():
    cells = [put(b"a", 2), put(b"a", 3), marker(DCOL, b"a", 10)]
    assert visible(cells, start_ts=0, end_ts=5, versions=5) == []


def test_family_versions_cap_a_normal_scan_but_not_a_raw_one():
    cells = [put(b"a", ts) for ts in (1, 2, 3)] + [put(b"a", ts, fam=b"g") for ts in (1, 2, 3)]
    caps = {b"f": 1, b"g": 3}
    assert visible(cells, versions=3, family_max_versions=caps) == [
        (b"r", b"f", b"a", 3),
        (b"r", b"g", b"a", 3),
        (b"r", b"g", b"a", 2),
        (b"r", b"g", b"a", 1),
    ]
    assert len(scan_cells(cells, versions=3, raw=True, family_max_versions=caps)) == 6


def test_raw_returns_markers_in_order_and_counts_only_puts():
    cells = [put(b"a", 5), put(b"a", 3), put(b"a", 1), marker(DCOL, b"a", 4), marker(DEL, b"a", 5)]
    assert [(c.timestamp, c.type) for c in scan_cells(cells, raw=True, versions=2)] == [
        (5, DEL),
        (5, PUT),
        (4, DCOL),
        (3, PUT),
    ]
    assert [(c.timestamp, c.type) for c in scan_cells(cells, raw=True, versions=1)] == [
        (5, DEL),
        (5, PUT),
        (4, DCOL),
    ]
    assert [(c.timestamp, c.type) for c in scan_cells(cells, raw=True, versions=5, start_ts=4)] == [
        (5, DEL),
        (5, PUT),
        (4, DCOL),
    ]


def test_family_and_row_prefix_selection():
    cells = [put(b"a", 1, row=b"abc"), put(b"a", 1, row=b"abd", fam=b"g"), put(b"a", 1, row=b"x")]
    assert [c[0] for c in visible(cells, row_prefixes=[b"ab"])] == [b"abc", b"abd"]
    assert [c[0] for c in visible(cells, families=["g"])] == [b"abd"]
    assert [c[0] for c in visible(cells, families=[b"f"], row_prefixes=[b"x", b"abc"])] == [b"abc", b"x"]


def test_rows_are_sorted_as_unsigned_bytes():
    cells = [put(b"a", 1, row=b"\xff"), put(b"a", 1, row=b"\x01"), put(b"a", 1, row=b"b")]
    assert list(rows_of(scan_cells(cells))) == [b"\x01", b"b", b"\xff"]


def test_bad_arguments_and_types_are_refused():
    with pytest.raises(IllegalScan, match="versions 0"):
        scan_cells([], versions=0)
    with pytest.raises(IllegalScan, match="time range"):
        scan_cells([], start_ts=5, end_ts=4)
    with pytest.raises(TableError, match="type 255"):
        scan_cells([(Cell(b"r", b"f", b"a", 1, 255), 1)])
