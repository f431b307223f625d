"""Reading an embedded cluster's table as the HBase shell's ``get``, ``scan`` and ``count`` do.

Every acknowledged edit is read: the table's memstores are flushed to table files first (as ``hbrep
flush`` does), then the files are read with pyarrow and resolved with HBase's read semantics
(``replication.tables.semantics``: deletes mask puts, versions per family, raw scans). No Spark job
starts, so these answer in about a second.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from replication.cluster.client import ClusterClient
from replication.errors import HbrepError
from replication.tables.descriptors import TableRegistry
from replication.tables.semantics import LATEST_TIMESTAMP, rows_of, scan_cells
from replication.tables.table_files import read_cells
from replication.wal.model import Cell


@dataclass(frozen=True)
class ScanSpec:
    """What a shell ``scan`` asks for: a row range [start_row, stop_row), versions, raw, a row limit."""

    start_row: bytes = b""
    stop_row: bytes = b""
    versions: int = 1
    raw: bool = False
    limit: int | None = None
    families: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.versions < 1:
            raise HbrepError(f"--versions must be at least 1, not {self.versions}")
        if self.limit is not None and self.limit < 1:
            raise HbrepError(f"--limit must be at least 1, not {self.limit}")
        if self.stop_row and self.start_row and self.stop_row <= self.start_row:
            raise HbrepError("--stop-row must sort after --start-row")

    def holds(self, row: bytes) -> bool:
        """True when ``row`` is inside [start_row, stop_row) (an empty bound is open)."""
        return row >= self.start_row and (not self.stop_row or row < self.stop_row)


def scan_rows(client: ClusterClient, table: str, spec: ScanSpec) -> Iterator[tuple[bytes, list[Cell]]]:
    """(row, cells) of ``table`` in row order, as an HBase scan with ``spec`` returns them.

    UnknownTable (one line) for a table that does not exist; an unknown family in ``spec`` is refused too.
    """
    registry = TableRegistry(client.fs, client.root)
    descriptor = registry.get(table)
    for family in spec.families or ():
        descriptor.family(family)  # UnknownFamily, named
    client.flush(table)
    cells = [item for item in read_cells(client.fs, client.root, table) if spec.holds(item[0].row)]
    scanned = scan_cells(
        cells,
        start_ts=0,
        end_ts=LATEST_TIMESTAMP,
        versions=spec.versions,
        raw=spec.raw,
        families=spec.families,
        family_max_versions=descriptor.max_versions_by_family(),
    )
    for count, (row, row_cells) in enumerate(rows_of(scanned).items()):
        if spec.limit is not None and count >= spec.limit:
            return
        yield row, row_cells
