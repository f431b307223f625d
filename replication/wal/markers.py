"""HBase's marker edits in a WAL: cells of the METAFAMILY family that are not data."""

from __future__ import annotations

from replication.wal.cell_codec import first_cell_column

METAFAMILY = b"METAFAMILY"
# WALEdit.REPLICATION_MARKER: HBase's ReplicationMarkerChore writes one-cell edits (METAFAMILY, this
# qualifier, empty value) on a schedule (hbase.regionserver.replication.marker.*); never data
REPLICATION_MARKER = b"HBASE::REPLICATION_MARKER"


def is_replication_marker(cell_count: int, cell_bytes: bytes | memoryview) -> bool:
    """True for HBase's replication marker edit (WALEdit.isReplicationMarkerEdit: one cell, METAFAMILY,
    qualifier ``HBASE::REPLICATION_MARKER``)."""
    if cell_count != 1:
        return False
    try:
        return first_cell_column(cell_bytes) == (METAFAMILY, REPLICATION_MARKER)
    except Exception:
        return False
