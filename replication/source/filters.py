"""WAL entry filters (spec §4.2), applied to raw entries whose cell values are never decoded.

Order, as ``ReplicationSource.initializeWALEntryFilter`` builds it: SystemTableWALEntryFilter,
ScopeWALEntryFilter, NamespaceTableCfWALEntryFilter, ClusterMarkingEntryFilter; then the cell filters
(scope GLOBAL per family, the peer's table-cfs) over the cells. An entry whose result is ``None`` or has
no cells counts as filtered (``logEditsFiltered``) and is not shipped, but the read position moves past it.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from replication.wal.bulk_load import encode_marker, is_bulk_load_column, keep_stores, read_bulk_load
from replication.wal.cell_codec import first_cell_column, iter_cell_spans
from replication.wal.markers import METAFAMILY, is_replication_marker
from replication.wal.model import WALKey

SCOPE_GLOBAL = 1
SYSTEM_NAMESPACE = "hbase"
SYSTEM_TABLES_REPLICATED = frozenset({"hbase:acl", "hbase:labels"})
# 0.94's catalog tables (spec §10): its replication skipped them by name as 2.x skips hbase:meta; a
# 0.94 HLog read through the legacy reader names them so
LEGACY_CATALOG_TABLES = frozenset({"-ROOT-", ".META."})


_U16 = struct.Struct(">H")


@dataclass(frozen=True, slots=True)
class ShipEntry:
    """An entry ready to ship: its key (cluster ids marked), cell count and encoded cell bytes."""

    key: WALKey
    cell_count: int
    cell_bytes: bytes | memoryview
    rows: int = 1  # distinct consecutive row keys (HBase's nbRowKeys, reported as shippedOps)
    hfiles: tuple[str, ...] = ()  # a bulk-load marker's store files (HBase's nbHFiles; their hfile-refs)

    @property
    def size(self) -> int:
        """Bytes on the wire, roughly: cells plus a key estimate (HBase's heapSize stand-in)."""
        return len(self.cell_bytes) + 64 + len(self.key.table_name) + len(self.key.encoded_region_name)


def table_name_str(table_name: bytes) -> str:
    """``b"t1"`` → ``"t1"``; ``b"default:t1"`` → ``"t1"``; ``b"ns:t1"`` → ``"ns:t1"``."""
    text = table_name.decode("utf-8", "replace")
    return text[len("default:") :] if text.startswith("default:") else text


def namespace_of(table: str) -> str:
    return table.split(":", 1)[0] if ":" in table else "default"


class EntryFilter:
    """Decides, per entry, whether and how it ships to one peer (the whole HBase filter chain)."""

    def __init__(
        self,
        need_to_replicate: Callable[[str, str | None], bool],
        local_cluster_id: uuid.UUID,
        peer_cluster_id: uuid.UUID | None,
        hfile_pending: Callable[[str], bool] | None = None,
    ):
        """``hfile_pending(store file name)``: ship bulk-load markers (HBase's bulk-load replication), each
        store file only while it is still pending for the peer (its hfile-refs znode); None drops them."""
        self._need = need_to_replicate
        self._hfile_pending = hfile_pending
        self._local = local_cluster_id
        self._peer = peer_cluster_id
        self._table_cache: dict[bytes, tuple[str, bool]] = {}
        self._family_cache: dict[tuple[str, bytes], bool] = {}
        # HBase's replication markers seen: never shipped as data, their write time is a heartbeat
        self.markers = 0
        self.last_marker_write_time = 0

    def _table(self, table_name: bytes) -> tuple[str, bool]:
        cached = self._table_cache.get(table_name)
        if cached is None:
            table = table_name_str(table_name)
            system = (
                namespace_of(table) == SYSTEM_NAMESPACE and table not in SYSTEM_TABLES_REPLICATED
            ) or table in LEGACY_CATALOG_TABLES
            cached = (table, (not system) and self._need(table, None))
            self._table_cache[table_name] = cached
        return cached

    def _family_wanted(self, table: str, family: bytes, scopes: dict[bytes, int]) -> bool:
        if scopes.get(family) != SCOPE_GLOBAL or family == METAFAMILY:  # WAL markers are never data
            return False
        key = (table, family)
        wanted = self._family_cache.get(key)
        if wanted is None:
            wanted = self._need(table, family.decode("utf-8", "replace"))
            self._family_cache[key] = wanted
        return wanted

    def filter(self, key: WALKey, cell_count: int, cell_bytes: bytes | memoryview) -> ShipEntry | None:
        """The entry as it ships to the peer, or None when nothing of it ships."""
        if cell_count == 1 and is_replication_marker(cell_count, cell_bytes):
            self.markers += 1
            self.last_marker_write_time = max(self.last_marker_write_time, key.write_time)
            return None
        # SystemTableWALEntryFilter + the entry-level part of NamespaceTableCfWALEntryFilter
        table, replicated = self._table(key.table_name)
        if not replicated:
            return None
        # ScopeWALEntryFilter, entry level: no scoped family at all (local-only or marker-only edit)
        scopes = key.scopes
        if not scopes:
            return None
        # ClusterMarkingEntryFilter: never send an edit back to a cluster that already has it
        if self._peer is not None and self._peer in key.cluster_ids:
            return None
        if cell_count == 0:
            return None
        # cell filters: family scope GLOBAL and wanted by the peer's table-cfs
        kept: list[tuple[int, int]] = []
        count = rows = 0
        previous_row = None
        # Per-entry family decisions and bytes row keys: the loop runs once per cell, so it avoids a
        # method call per cell and memoryview comparisons (profiled hot path, see BENCHMARKS.md).
        decided: dict[bytes, bool] = {}
        raw = cell_bytes if isinstance(cell_bytes, bytes) else cell_bytes.tobytes()  # one memcpy per entry
        unpack_u16 = _U16.unpack_from
        for family, start, end in iter_cell_spans(cell_bytes, cell_count):
            wanted = decided.get(family)
            if wanted is None:
                # a bulk-load marker (one METAFAMILY cell): checked at a family's first cell only, off the hot path
                if family == METAFAMILY and cell_count == 1 and self._hfile_pending and _is_bulk_load(cell_bytes):
                    return self._bulk_load(key, table, scopes, cell_bytes)
                wanted = decided[family] = self._family_wanted(table, family, scopes)
            if wanted:
                count += 1
                row_start = start + 14
                row = raw[row_start : row_start + unpack_u16(raw, row_start - 2)[0]]
                if row != previous_row:
                    rows += 1
                    previous_row = row
                if kept and kept[-1][1] == start:
                    kept[-1] = (kept[-1][0], end)
                else:
                    kept.append((start, end))
        if not kept:
            return None
        # every cell ships: the entry's bytes as copied above, so a batch pins none of the reader's 8 MB
        # read chunks (a memoryview slice kept its whole chunk alive: bench/ship_memory.py)
        every_cell = len(kept) == 1 and kept[0] == (0, len(cell_bytes))
        body = raw if every_cell else b"".join(cell_bytes[s:e] for s, e in kept)
        return ShipEntry(self._marked(key), count, body, rows)

    def _marked(self, key: WALKey) -> WALKey:
        """ClusterMarkingEntryFilter: the key with this cluster's id added to its cluster ids."""
        cluster_ids = key.cluster_ids if self._local in key.cluster_ids else [*key.cluster_ids, self._local]
        return replace(key, cluster_ids=cluster_ids)

    def _bulk_load(self, key: WALKey, table: str, scopes: dict[bytes, int], cell_bytes) -> ShipEntry | None:
        """A bulk-load marker as it ships: only the stores of GLOBAL families the peer wants
        (ScopeWALEntryFilter's BulkLoadCellFilter, NamespaceTableCfWALEntryFilter), only the files still
        pending for the peer; None when nothing is left or the descriptor says not to replicate."""
        pending = self._hfile_pending
        assert pending is not None
        marker = read_bulk_load(cell_bytes)
        if not marker.descriptor.replicate:
            return None
        kept = keep_stores(
            marker,
            lambda family, name: self._family_wanted(table, family, scopes) and pending(name),
        )
        if kept is None:
            return None
        return ShipEntry(self._marked(key), 1, encode_marker(kept), 1, tuple(kept.store_files()))


def _is_bulk_load(cell_bytes: bytes | memoryview) -> bool:
    try:
        return is_bulk_load_column(*first_cell_column(cell_bytes))
    except Exception:
        return False
