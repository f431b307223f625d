"""CellColumns: cells held as columns, one list per KeyValue field, instead of one Cell object per cell.

The peer's apply path (sink → region server → WAL append of the shipped bytes → memstore → flush to an
Arrow table) needs the fields of every cell only as columns: the family set for the schema check, the rows
for routing, the types and timestamps for the write checks, and all of them for the flush. A Cell per cell
was built there only to be taken apart again: under py-spy (1 KB-row backlog through the scheduler bench,
53d35b0) building Cells was 27% of the peer region server's GIL time and the flush's per-attribute list
passes most of the rest of its flush. ``Cell`` objects are made from columns only where a path needs them
(``cells()``): a request that must be encoded again, or a client that sends cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

from replication.wal.model import Cell


@dataclass(slots=True)
class CellColumns:
    """Cells as parallel lists (row i is ``rows[i], families[i], ...``); in the order they came."""

    rows: list[bytes] = field(default_factory=list)
    families: list[bytes] = field(default_factory=list)
    qualifiers: list[bytes] = field(default_factory=list)
    timestamps: list[int] = field(default_factory=list)
    types: list[int] = field(default_factory=list)
    values: list[bytes] = field(default_factory=list)
    tags: list[bytes] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def from_cells(cls, cells: Sequence[Cell]) -> CellColumns:
        """The columns of ``cells``, in order."""
        return cls(
            [c.row for c in cells],
            [c.family for c in cells],
            [c.qualifier for c in cells],
            [c.timestamp for c in cells],
            [c.type for c in cells],
            [c.value for c in cells],
            [c.tags for c in cells],
        )

    @classmethod
    def concat(cls, parts: Iterable[CellColumns]) -> CellColumns:
        """One batch of every part's cells, in order (a single part comes back as it is; none: an empty batch)."""
        parts = list(parts)
        if len(parts) == 1:
            return parts[0]
        by_column = zip(*(part._columns() for part in parts), strict=True)
        return cls(*(list(chain.from_iterable(column)) for column in by_column))

    def append_cells(self, cells: Iterable[Cell]) -> None:
        """Add ``cells`` at the end."""
        for c in cells:
            self.rows.append(c.row)
            self.families.append(c.family)
            self.qualifiers.append(c.qualifier)
            self.timestamps.append(c.timestamp)
            self.types.append(c.type)
            self.values.append(c.value)
            self.tags.append(c.tags)

    def cells(self) -> list[Cell]:
        """One Cell per row of the columns, in order."""
        return list(map(Cell, self.rows, self.families, self.qualifiers, self.timestamps, self.types, self.values,
                        self.tags))  # fmt: skip

    def runs(self, runs: Sequence[tuple[int, int]]) -> CellColumns:
        """The cells of the index ranges ``runs`` ([start, stop) each), in that order."""
        if len(runs) == 1 and runs[0] == (0, len(self)):
            return self
        return CellColumns(*(list(chain.from_iterable(column[a:b] for a, b in runs)) for column in self._columns()))

    def take(self, indices: Sequence[int]) -> CellColumns:
        """The cells at ``indices``, in that order."""
        return CellColumns(*([column[i] for i in indices] for column in self._columns()))

    def encoded_size(self) -> int:
        """The sum of the cells' row, family, qualifier, value and tags lengths."""
        return sum(sum(map(len, column)) for column in (self.rows, self.families, self.qualifiers, self.values,
                                                        self.tags))  # fmt: skip

    def _columns(self) -> tuple[list, ...]:
        return (self.rows, self.families, self.qualifiers, self.timestamps, self.types, self.values, self.tags)
