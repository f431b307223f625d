"""The region server's check that a sink's columns go to the WAL and memstore as they came (no Cell made)."""

from __future__ import annotations

import pytest

from replication.cluster.region_routing import LATEST_TIMESTAMP
from replication.cluster.regionserver import columns_need_no_change
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor
from replication.tables.errors import UnknownFamily
from replication.wal.cell_columns import CellColumns
from replication.wal.model import Cell, CellType

DESC = TableDescriptor.of("t1", ColumnFamilyDescriptor("f", scope=1), "g")


def _columns(*cells: Cell) -> CellColumns:
    return CellColumns.from_cells(cells)


def test_puts_and_deletes_with_their_timestamps_need_no_change() -> None:
    assert columns_need_no_change(
        DESC,
        _columns(
            Cell(b"r1", b"f", b"q", 5, int(CellType.PUT), b"v"),
            Cell(b"r1", b"g", b"q", 6, int(CellType.DELETE_COLUMN)),
            Cell(b"r2", b"f", b"", 7, int(CellType.DELETE_FAMILY)),
        ),
    )


@pytest.mark.parametrize(
    "cell",
    [
        Cell(b"r", b"f", b"q", LATEST_TIMESTAMP, int(CellType.PUT), b"v"),  # the server's clock is filled in
        Cell(b"r", b"", b"", 7, int(CellType.DELETE_FAMILY)),  # a whole-row delete: one per family
        Cell(b"r", b"f", b"q", 7, int(CellType.MAXIMUM)),  # not a mutation: prepare_cells names it
    ],
)
def test_cells_that_prepare_cells_would_change_or_refuse_take_the_cell_path(cell: Cell) -> None:
    ok = Cell(b"a", b"f", b"q", 5, int(CellType.PUT), b"v")
    assert not columns_need_no_change(DESC, _columns(ok, cell))


def test_an_unknown_family_is_refused_by_name() -> None:
    with pytest.raises(UnknownFamily, match="nope"):
        columns_need_no_change(DESC, _columns(Cell(b"r", b"nope", b"q", 5, int(CellType.PUT), b"v")))
