"""HBase's bulk-load marker in a WAL: one METAFAMILY cell, qualifier ``HBASE::BULK_LOAD``, whose value is a
WALProtos ``BulkLoadDescriptor`` (the table, the region, and per store the family and the store files the
bulk load committed; ``WALEdit.createBulkLoadEvent``). HBase's region server writes it after the files
are in the region, and keeps its replication scopes only with ``hbase.replication.bulkload.enabled=true``.

A store file of a descriptor is a file name inside ``<namespace>/<table>/<encoded region>/<family>/``
of the source's ``data/`` directory (or of ``archive/data/`` once compacted away): the path HBase's
ReplicationSink builds (``getHFilePath``) and HFileReplicator copies from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from replication.proto import WAL_pb2
from replication.wal.cell_codec import decode_cells, encode_cell
from replication.wal.markers import METAFAMILY
from replication.wal.model import Cell

BULK_LOAD = b"HBASE::BULK_LOAD"


@dataclass(frozen=True)
class BulkLoadMarker:
    """A bulk-load marker cell and its decoded descriptor."""

    cell: Cell
    descriptor: WAL_pb2.BulkLoadDescriptor

    def store_files(self) -> list[str]:
        """Every store file name the descriptor lists, in its order."""
        return [name for store in self.descriptor.stores for name in store.store_file]


def is_bulk_load_column(family: bytes, qualifier: bytes) -> bool:
    """True for the bulk-load marker's column (``METAFAMILY:HBASE::BULK_LOAD``)."""
    return family == METAFAMILY and qualifier == BULK_LOAD


def read_bulk_load(cell_bytes: bytes | memoryview) -> BulkLoadMarker:
    """The marker framed at the start of ``cell_bytes`` (one cell); ValueError when its value is not a
    BulkLoadDescriptor."""
    cells, _end = decode_cells(cell_bytes, 1)
    descriptor = WAL_pb2.BulkLoadDescriptor()
    try:
        descriptor.ParseFromString(cells[0].value)
    except Exception as exc:
        raise ValueError(f"bulk-load marker of row {cells[0].row!r}: not a BulkLoadDescriptor ({exc})") from None
    return BulkLoadMarker(cells[0], descriptor)


def keep_stores(marker: BulkLoadMarker, keep: Callable[[bytes, str], bool]) -> BulkLoadMarker | None:
    """The marker with only the store files ``keep(family, file name)`` accepts (HBase's BulkLoadCellFilter
    keeps whole stores by family; the file test drops files already delivered); None when none is left.
    Fields this module does not know (the descriptor's cluster ids) are kept as they were."""
    kept = WAL_pb2.BulkLoadDescriptor()
    kept.CopyFrom(marker.descriptor)
    del kept.stores[:]
    for store in marker.descriptor.stores:
        files = [name for name in store.store_file if keep(store.family_name, name)]
        if not files:
            continue
        copy = kept.stores.add()
        copy.CopyFrom(store)
        if len(files) != len(store.store_file):
            del copy.store_file[:]
            copy.store_file.extend(files)
            copy.ClearField("store_file_size_bytes")  # the size was of every file of the store
    if not kept.stores:
        return None
    if len(kept.stores) == len(marker.descriptor.stores) and kept == marker.descriptor:
        return marker
    return BulkLoadMarker(replace(marker.cell, value=kept.SerializeToString()), kept)


def encode_marker(marker: BulkLoadMarker) -> bytes:
    """The marker's cell in the WAL / cell-block framing."""
    return encode_cell(marker.cell)
