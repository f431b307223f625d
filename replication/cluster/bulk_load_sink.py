"""The sink's side of bulk-load replication, as HBase's ReplicationSink does it, for hbrep's region servers.

A request may hold bulk-load markers (one METAFAMILY cell, qualifier ``HBASE::BULK_LOAD``, a
``BulkLoadDescriptor``); HBase's sink applies the request's other cells first, then copies each marker's
store files from ``<sourceBaseNamespaceDirPath>/<namespace>/<table>/<encoded region>/<family>/<file>``
(or the same path under ``sourceHFileArchiveDirPath`` once the source compacted it away; a file in
neither place is skipped, as HFileReplicator skips it) and loads them. hbrep has no store files to load
into, so it reads each HFile (``replication/tables/hfile.py``) and writes its cells through the same
write path as replicated edits, with the entry's cluster ids (so they never go back to a cluster that
has them). A marker with ``replicate=false`` is ignored, as HBase's sink ignores it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from replication.cluster.rpc import uuid_from_pb
from replication.fs import FileSystemError, get_filesystem
from replication.proto import Admin_pb2, WAL_pb2
from replication.tables.hfile import read_hfile
from replication.wal.bulk_load import BULK_LOAD, is_bulk_load_column
from replication.wal.cell_codec import decode_cells, encode_cell, first_cell_column
from replication.wal.model import Cell


@dataclass(frozen=True)
class BulkLoad:
    """One bulk-load marker of a request: its table, the entry's cluster ids and its descriptor."""

    table: str
    cluster_ids: list[uuid.UUID]
    descriptor: WAL_pb2.BulkLoadDescriptor


def split_bulk_loads(
    request: Admin_pb2.ReplicateWALEntryRequest, block: bytes | memoryview
) -> tuple[Admin_pb2.ReplicateWALEntryRequest, bytes | memoryview, list[BulkLoad]]:
    """The request without its bulk-load marker entries (and its cell block without their cells), and the
    markers; the request and block unchanged when it has none. Only a request that names the source's
    directories (HBase's source always does, hbrep's when it carries a marker) is searched for markers:
    without them a marker's files cannot be found, and its cell is refused as an unknown family."""
    if not request.sourceBaseNamespaceDirPath or BULK_LOAD not in (block if isinstance(block, bytes) else bytes(block)):
        return request, block, []
    kept = Admin_pb2.ReplicateWALEntryRequest()
    kept.CopyFrom(request)
    del kept.entry[:]
    kept.ClearField("cell_block")
    parts: list[bytes] = []
    loads: list[BulkLoad] = []
    offset = 0
    for entry in request.entry:
        spans: list[tuple[int, int] | None] = []
        cells, end = decode_cells(block, entry.associated_cell_count, offset, spans)
        if len(cells) == 1 and is_bulk_load_column(*first_cell_column(block, offset)):
            descriptor = WAL_pb2.BulkLoadDescriptor()
            descriptor.ParseFromString(cells[0].value)
            table = entry.key.table_name.decode("utf-8", "replace").removeprefix("default:")
            loads.append(BulkLoad(table, [uuid_from_pb(u) for u in entry.key.cluster_ids], descriptor))
        else:
            kept.entry.add().CopyFrom(entry)
            parts.extend(_cell_bytes(block, cell, span) for cell, span in zip(cells, spans, strict=True))
        offset = end
    return kept, b"".join(parts), loads


def _cell_bytes(block: bytes | memoryview, cell: Cell, span: tuple[int, int] | None) -> bytes:
    return bytes(block[span[0] : span[1]]) if span is not None else encode_cell(cell)


def store_file_cells(request: Admin_pb2.ReplicateWALEntryRequest, load: BulkLoad) -> list[Cell]:
    """Every cell of the marker's store files, read from the source's file system (data dir, then archive;
    a file in neither is skipped); HFileError naming a file hbrep cannot read."""
    base, archive = request.sourceBaseNamespaceDirPath, request.sourceHFileArchiveDirPath
    d = load.descriptor
    namespace = d.table_name.namespace.decode() or "default"
    relative = f"{namespace}/{d.table_name.qualifier.decode()}/{d.encoded_region_name.decode()}"
    cells: list[Cell] = []
    for store in d.stores:
        for name in store.store_file:
            path = f"{relative}/{store.family_name.decode()}/{name}"
            data = _read_first(path, [base, archive] if archive else [base])
            if data is not None:
                cells.extend(read_hfile(data[1], data[0]))
    return cells


def _read_first(path: str, roots: list[str]) -> tuple[str, bytes] | None:
    """(where, bytes) of ``path`` under the first root that has it; None when none has it."""
    for root in roots:
        fs, base = get_filesystem(root.rstrip("/"))
        full = fs.join(base, path)
        try:
            if fs.exists(full):
                return full, fs.read_range(full, 0)
        except FileSystemError:
            continue
    return None
