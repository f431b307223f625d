"""CellColumns: the column form of a batch of cells gives back the same cells, in order, however cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from wal_strategies import cells

from replication.wal.cell_columns import CellColumns
from replication.wal.model import Cell


@settings(max_examples=80, deadline=None)
@given(st.lists(cells, max_size=12), st.data())
def test_columns_keep_the_cells_and_their_order(batch: list[Cell], data) -> None:
    columns = CellColumns.from_cells(batch)
    assert len(columns) == len(batch) and columns.cells() == batch
    indices = data.draw(st.lists(st.integers(0, max(len(batch) - 1, 0)), max_size=8)) if batch else []
    assert columns.take(indices).cells() == [batch[i] for i in indices]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(batch)), min_size=2, max_size=6)))
    runs = list(zip(cuts[::2], cuts[1::2], strict=False))
    assert columns.runs(runs).cells() == [cell for a, b in runs for cell in batch[a:b]]
    parts = [CellColumns.from_cells(batch[a:b]) for a, b in zip([0, *cuts], [*cuts, len(batch)], strict=True)]
    assert CellColumns.concat(parts).cells() == batch
    assert CellColumns.concat([CellColumns(), columns]) == columns
    assert columns.rows() == [c.row for c in batch]
    assert columns.families() == {c.family for c in batch} and columns.types() == {c.type for c in batch}
    for cell in batch[:2]:
        assert columns.has_timestamp(cell.timestamp)
        first = columns.first_index_of_type({cell.type})
        assert first is not None and batch[first].type == cell.type
        assert all(c.type != cell.type for c in batch[:first])
    assert columns.first_index_of_type(set()) is None
    assert not columns.has_timestamp(-1) or any(c.timestamp == -1 for c in batch)
    assert columns.encoded_size() == sum(
        len(c.row) + len(c.family) + len(c.qualifier) + len(c.value) + len(c.tags) for c in batch
    )


def test_the_whole_range_and_a_single_part_are_not_copied() -> None:
    columns = CellColumns.from_cells([Cell(b"r", b"f", b"q", 1, 4, b"v")])
    assert columns.runs([(0, 1)]) is columns
    assert CellColumns.concat([columns]) is columns
    assert len(CellColumns.concat([])) == 0 and CellColumns.concat([]) == CellColumns()
