"""The reference of what an HBase scan returns, over a list of (Cell, sequence) in pure Python.

This follows HBase 2.x's read path with the default ``KEEP_DELETED_CELLS=false`` and without
``NEW_VERSION_BEHAVIOR`` (``ScanDeleteTracker`` + ``NormalUserScanQueryMatcher`` +
``ScanWildcardColumnTracker``):

- Cells sort by row, family, qualifier ascending (unsigned bytes), timestamp descending, type code
  descending (so delete markers come before a Put of the same timestamp), then sequence descending.
- A Put is masked, within its row and family, by
  DeleteFamily (type 14) with ts >= put.ts (any qualifier);
  DeleteFamilyVersion (10) with ts == put.ts (any qualifier);
  DeleteColumn (12) of the same qualifier with ts >= put.ts;
  Delete (8) of the same qualifier with ts == put.ts (every Put at that exact timestamp).
  Sequence ids play no part: a delete masks a Put with the same (or, for the column/family kinds,
  an older) timestamp even if the Put was written after it. That is HBase's documented behaviour
  ("deletes mask puts", reference guide §"Delete masks Put"); only NEW_VERSION_BEHAVIOR changes it.
- Identical (row, family, qualifier, timestamp, type) cells count once: the one with the highest
  sequence is returned (``sameAsPreviousTSAndType``; the newest store/memstore scanner comes first).
- Time range [start_ts, end_ts): Puts outside it are not returned and not counted as versions. Markers
  mask whatever their timestamp, which is the same as HBase's ``withinOrAfterTimeRange`` rule because
  a marker older than start_ts only masks Puts that are out of range anyway.
- Versions: the newest ``versions`` surviving Puts per column, capped by the family's VERSIONS for a
  non-raw scan (``UserScanQueryMatcher``: min(scan max versions, family max versions)).
- ``raw=True`` (``RawScanQueryMatcher``): no masking; markers are returned too; time range applies to
  every cell; duplicates collapse as above; per column, cells are returned in sort order until the
  Put count passes ``versions`` (markers do not count, ``ScanWildcardColumnTracker.checkVersion``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from replication.tables.errors import TableError
from replication.wal.model import Cell, CellType

LATEST_TIMESTAMP = 2**63 - 1
PUT = int(CellType.PUT)
DELETE = int(CellType.DELETE)
DELETE_FAMILY_VERSION = int(CellType.DELETE_FAMILY_VERSION)
DELETE_COLUMN = int(CellType.DELETE_COLUMN)
DELETE_FAMILY = int(CellType.DELETE_FAMILY)
STORED_TYPES = frozenset((PUT, DELETE, DELETE_FAMILY_VERSION, DELETE_COLUMN, DELETE_FAMILY))

SequencedCell = tuple[Cell, int]


class IllegalScan(TableError):
    """Scan arguments HBase would refuse (versions < 1, start_ts > end_ts)."""


def sort_key(item: SequencedCell) -> tuple:
    """HBase's cell order (CellComparator), with higher sequence first for identical keys."""
    cell, seq = item
    return (cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type, -seq)


def check_scan_args(start_ts: int, end_ts: int, versions: int) -> None:
    """IllegalScan unless 0 <= start_ts <= end_ts and versions >= 1 (as Scan.setTimeRange/readVersions)."""
    if start_ts < 0 or end_ts < start_ts:
        raise IllegalScan(f"illegal time range [{start_ts}, {end_ts}): need 0 <= start <= end")
    if versions < 1:
        raise IllegalScan(f"illegal versions {versions}: must be >= 1")


def _selected(cell: Cell, families: set[bytes] | None, row_prefixes: Sequence[bytes] | None) -> bool:
    if families is not None and cell.family not in families:
        return False
    return not row_prefixes or any(cell.row.startswith(p) for p in row_prefixes)


def _dedupe(items: Iterable[SequencedCell]) -> list[SequencedCell]:
    """Sorted, with identical (row, family, qualifier, ts, type) collapsed to the highest sequence."""
    out: list[SequencedCell] = []
    last = None
    for cell, seq in sorted(items, key=sort_key):
        coords = (cell.row, cell.family, cell.qualifier, cell.timestamp, cell.type)
        if coords != last:
            out.append((cell, seq))
            last = coords
    return out


def scan_cells(
    cells: Iterable[SequencedCell],
    *,
    start_ts: int = 0,
    end_ts: int = LATEST_TIMESTAMP,
    versions: int = 1,
    raw: bool = False,
    families: Iterable[bytes | str] | None = None,
    row_prefixes: Sequence[bytes] | None = None,
    family_max_versions: Mapping[bytes, int] | None = None,
) -> list[Cell]:
    """The cells an HBase scan returns, in HBase order (see the module docstring for the rules)."""
    check_scan_args(start_ts, end_ts, versions)
    fams = None if families is None else {f.encode() if isinstance(f, str) else f for f in families}
    items = []
    for cell, seq in cells:
        if cell.type not in STORED_TYPES:
            raise TableError(f"cell of row {cell.row!r} has type {cell.type}, not a Put or delete type")
        if _selected(cell, fams, row_prefixes):
            items.append((cell, seq))
    items = _dedupe(items)
    if raw:
        return _raw(items, start_ts, end_ts, versions)
    return _visible(items, start_ts, end_ts, versions, family_max_versions or {})


def _raw(items: list[SequencedCell], start_ts: int, end_ts: int, versions: int) -> list[Cell]:
    out = []
    puts_seen: dict[tuple[bytes, bytes, bytes], int] = defaultdict(int)
    for cell, _seq in items:
        if not start_ts <= cell.timestamp < end_ts:
            continue
        column = (cell.row, cell.family, cell.qualifier)
        if cell.type == PUT:
            puts_seen[column] += 1
        if puts_seen[column] <= versions:
            out.append(cell)
    return out


def _visible(
    items: list[SequencedCell],
    start_ts: int,
    end_ts: int,
    versions: int,
    family_max_versions: Mapping[bytes, int],
) -> list[Cell]:
    family_ts: dict[tuple[bytes, bytes], int] = {}
    family_versions: set[tuple[bytes, bytes, int]] = set()
    column_ts: dict[tuple[bytes, bytes, bytes], int] = {}
    version_ts: set[tuple[bytes, bytes, bytes, int]] = set()
    for cell, _seq in items:
        store = (cell.row, cell.family)
        column = (cell.row, cell.family, cell.qualifier)
        if cell.type == DELETE_FAMILY:
            family_ts[store] = max(family_ts.get(store, -1), cell.timestamp)
        elif cell.type == DELETE_FAMILY_VERSION:
            family_versions.add((*store, cell.timestamp))
        elif cell.type == DELETE_COLUMN:
            column_ts[column] = max(column_ts.get(column, -1), cell.timestamp)
        elif cell.type == DELETE:
            version_ts.add((*column, cell.timestamp))
    out = []
    counts: dict[tuple[bytes, bytes, bytes], int] = defaultdict(int)
    for cell, _seq in items:
        if cell.type != PUT or not start_ts <= cell.timestamp < end_ts:
            continue
        store = (cell.row, cell.family)
        column = (cell.row, cell.family, cell.qualifier)
        ts = cell.timestamp
        if (
            family_ts.get(store, -1) >= ts
            or (*store, ts) in family_versions
            or column_ts.get(column, -1) >= ts
            or (*column, ts) in version_ts
        ):
            continue
        limit = min(versions, family_max_versions.get(cell.family, versions))
        if counts[column] < limit:
            counts[column] += 1
            out.append(cell)
    return out


def rows_of(cells: Iterable[Cell]) -> dict[bytes, list[Cell]]:
    """Group scan output by row key, keeping HBase order inside each row (what a Result holds)."""
    out: dict[bytes, list[Cell]] = {}
    for cell in cells:
        out.setdefault(cell.row, []).append(cell)
    return dict(sorted(out.items()))
