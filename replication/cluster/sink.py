"""ReplicationSink: applies shipped WAL entries to this cluster (spec §5.3, ``ReplicationSink.replicateEntries``).

For each entry the cells are walked and grouped by table and by the entry's exact cluster-id list
(``Map<TableName, Map<List<UUID>, List<Row>>>``); each group goes through the cluster's normal write
path with those cluster ids in the WAL keys written, so the edits flow on to this cluster's own peers
but never back to a cluster in the list. Rows are routed to their owning region server; this server's
own rows (and rows of an owner that does not answer) are written locally. The call returns only once
every group is durable.

Every table and family is checked before anything is written: an unknown table or family fails the
whole batch with TableNotFound / NoSuchColumnFamily naming all of them, so the source can apply its
``hbase.replication.drop.on.deleted.table/.columnfamily`` rule (spec §5.2: it drops the edits of tables
or families deleted on the source too, and re-sends the rest). Applying the same batch twice gives the
same table: cells keep their timestamps, and identical cells collapse on read.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait

import numpy as np

from replication.cluster.bulk_load_sink import BulkLoad, split_bulk_loads, store_file_cells
from replication.cluster.client import ClusterClient
from replication.cluster.region_routing import row_hash
from replication.cluster.rpc import uuid_from_pb
from replication.cluster.server_api import RegionServerHost
from replication.errors import HbrepError
from replication.proto import Admin_pb2
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.wal.cell_codec import decode_cells
from replication.wal.cell_columns import CellColumns, decode_cell_columns
from replication.wal.errors import CorruptWALError
from replication.wal.key_codec import key_from_pb
from replication.wal.model import Cell, WALKey

LOG = logging.getLogger(__name__)

FORWARD_THREADS = 4  # concurrent owner forwards of one server's sink (requests from several sources)
# HBase's number of RPC handlers for replication calls (RSRpcServices: the replication queue's executor);
# here: how many ReplicateWALEntry requests one region server applies at once, the rest wait their turn
HANDLER_COUNT_KEY = "hbase.regionserver.replication.handler.count"


class BadReplicationRequest(HbrepError):
    """A ReplicateWALEntry request whose keys or cell block do not decode (names the entry)."""


def decode_request(
    request: Admin_pb2.ReplicateWALEntryRequest,
    spans: list[tuple[int, int] | None] | None = None,
    cell_block: bytes | memoryview | None = None,
) -> list[tuple[WALKey, list[Cell]]]:
    """The entries of a request: each WALKey with its ``associated_cell_count`` cells from the cell block
    (``cell_block`` when the caller has it apart from the message, as replicate_request may).

    ``spans``, when given, receives every cell's place in the cell block (see ``decode_cells``).
    """
    block = request.cell_block if cell_block is None else cell_block
    offset = 0
    entries: list[tuple[WALKey, list[Cell]]] = []
    for index, entry in enumerate(request.entry):
        key = key_from_pb(entry.key)
        try:
            cells, offset = decode_cells(block, entry.associated_cell_count, offset, spans)
        except CorruptWALError as exc:
            raise BadReplicationRequest(f"replication entry {index}: bad cell block: {exc}") from None
        entries.append((key, cells))
    if offset != len(block):
        raise BadReplicationRequest(f"replication request: {len(block) - offset} bytes left after the last entry")
    return entries


def entry_groups(
    pb_entries: Sequence[Admin_pb2.WALEntry], counts: Sequence[int]
) -> dict[tuple[str, tuple[uuid.UUID, ...]], list[tuple[int, int]]]:
    """The request's cells grouped as ``ReplicationSink.replicateEntries`` groups them, by table and by
    the entry's exact cluster-id list, in order: each group as runs (start, stop) of the decoded cells.
    Consecutive entries of one table and cluster-id list share a run, read once."""
    groups: dict[tuple[str, tuple[uuid.UUID, ...]], list[tuple[int, int]]] = {}
    runs: list[tuple[int, int]] = []
    previous_table: bytes | None = None
    previous_ids = None
    index = 0
    for entry, count in zip(pb_entries, counts, strict=True):
        if not count:
            continue
        key = entry.key
        table, ids = key.table_name, key.cluster_ids
        if table != previous_table or ids != previous_ids:
            previous_table, previous_ids = table, ids
            runs = groups.setdefault((table.decode(), tuple(uuid_from_pb(u) for u in ids)), [])
            runs.append((index, index + count))
        else:  # the run of the previous entry goes on
            runs[-1] = (runs[-1][0], index + count)
        index += count
    return groups


def split_by_owner(
    rows: Sequence[bytes], starts: Sequence[int], ends: Sequence[int], ordered_servers: Sequence[str]
) -> dict[str, tuple[list[int], list[tuple[int, int]]]]:
    """Each owner's cells (``ordered_servers[row_hash(row) % n]``) as their indices in ``rows``, in order,
    and their bytes in the block (cell i is ``starts[i]:ends[i]``) as ranges: adjacent cells of one owner
    are merged into one range, so joining a share copies a few slices instead of one per cell (the per-cell
    join was 15% of the sink's CPU under py-spy)."""
    count = len(ordered_servers)
    by_owner: dict[str, tuple[list[int], list[tuple[int, int]]]] = {}
    owned: list[int] = []
    ranges: list[tuple[int, int]] = []
    previous_row: bytes | None = None
    run_start = run_end = -1  # the current owner's open range, appended when it breaks
    for index, (row, start, end) in enumerate(zip(rows, starts, ends, strict=True)):
        if row != previous_row:
            previous_row = row
            owner = ordered_servers[row_hash(row) % count]
            target = by_owner.get(owner)
            if target is None:
                target = by_owner[owner] = ([], [])
            if target[0] is not owned:  # another owner: close this one's range
                if run_end >= 0:
                    ranges.append((run_start, run_end))
                owned, ranges = target
                run_start = run_end = -1
        owned.append(index)
        if start != run_end:
            if run_end >= 0:
                ranges.append((run_start, run_end))
            run_start = start
        run_end = end
    if run_end >= 0:
        ranges.append((run_start, run_end))
    return by_owner


def owner_indices(rows: Sequence[bytes], ordered_servers: Sequence[str]) -> dict[str, list[int]]:
    """Each owner's cells as their indices in ``rows``, in order (consecutive cells of one row routed once)."""
    count = len(ordered_servers)
    by_owner: dict[str, list[int]] = defaultdict(list)
    previous_row: bytes | None = None
    target: list[int] = []
    for index, row in enumerate(rows):
        if row != previous_row:
            target = by_owner[ordered_servers[row_hash(row) % count]]
            previous_row = row
        target.append(index)
    return by_owner


class _Encoded:
    """The request's cell block and where one group's cells are in it: the group is the cells of the
    index ranges ``runs``, and cell i of the block is ``block[bounds[i]:bounds[i + 1]]``."""

    __slots__ = ("block", "bounds", "runs")

    def __init__(self, block: bytes | memoryview, bounds: np.ndarray, runs: Sequence[tuple[int, int]]):
        self.block = block
        self.bounds = bounds
        self.runs = runs

    def group_bytes(self) -> bytes | memoryview:
        """The group's cells' bytes, in order (the block itself when the group is all of it)."""
        bounds = self.bounds
        if len(self.runs) == 1 and self.runs[0] == (0, len(bounds) - 1):
            return self.block
        return self.join([(int(bounds[a]), int(bounds[b])) for a, b in self.runs])

    def cell_bounds(self) -> tuple[list[int], list[int]]:
        """Where each of the group's cells starts and ends in the block, in the group's order."""
        bounds = self.bounds
        starts = np.concatenate([bounds[a:b] for a, b in self.runs])
        ends = np.concatenate([bounds[a + 1 : b + 1] for a, b in self.runs])
        return starts.tolist(), ends.tolist()

    def join(self, ranges: Sequence[tuple[int, int]]) -> bytes:
        """The bytes of the block's ``ranges`` concatenated (adjacent ranges copied as one slice)."""
        block = memoryview(self.block)
        parts = []
        start = end = -1
        for s, e in ranges:
            if s == end:
                end = e
                continue
            if end >= 0:
                parts.append(block[start:end])
            start, end = s, e
        if end >= 0:
            parts.append(block[start:end])
        return b"".join(parts)


class ReplicationSink:
    """The sink side of one region server; metrics as HBase's MetricsSink."""

    def __init__(self, server: RegionServerHost):
        self.server = server
        self.applied_batches = 0
        self.applied_ops = 0
        self.failed_batches = 0
        self.age_of_last_applied_op = 0
        self.applied_hfiles = 0  # HBase's sink.appliedHFiles
        self._client = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.handlers = server.conf.get_int(HANDLER_COUNT_KEY, 3)
        self._handlers = threading.BoundedSemaphore(self.handlers)

    def replicate_request(
        self, request: Admin_pb2.ReplicateWALEntryRequest, cell_block: bytes | memoryview | None = None
    ) -> None:
        """Decode and apply one ReplicateWALEntry request (durable when it returns); UnknownTable /
        UnknownFamily (nothing written) when the peer lacks one. ``cell_block``: the request's, when the
        caller has it already (replicate_wire.parse_request's view), else read from the request.

        At most ``hbase.regionserver.replication.handler.count`` requests are applied at once (HBase's
        replication handlers); a request beyond them waits for one to be free, from either RPC listener.
        Bulk-load markers (a request naming the source's directories) are applied after the other edits:
        their store files' cells are read from the source and written (bulk_load_sink.py).
        """
        with self._handlers:
            block = request.cell_block if cell_block is None else cell_block
            request, block, bulk_loads = split_bulk_loads(request, block)
            if request.entry or not bulk_loads:
                self._replicate_request(request, block)
            for load in bulk_loads:  # after the request's other cells, as HBase's sink does
                self._bulk_load(request, load)

    def _bulk_load(self, request: Admin_pb2.ReplicateWALEntryRequest, load: BulkLoad) -> None:
        """Write the cells of one bulk-load marker's store files (bulk_load_sink.py) with its cluster ids."""
        if not load.descriptor.replicate:
            return
        cells = store_file_cells(request, load)
        if not cells:
            return
        columns = CellColumns.from_cells(cells)
        try:
            self._check_schema({load.table: {tuple(load.cluster_ids): columns}})
            self._write(load.table, columns, list(load.cluster_ids))
        except BaseException:
            self.failed_batches += 1
            raise
        self.applied_hfiles += sum(len(store.store_file) for store in load.descriptor.stores)

    def _replicate_request(
        self, request: Admin_pb2.ReplicateWALEntryRequest, cell_block: bytes | memoryview | None = None
    ) -> None:
        """The body of :meth:`replicate_request`, run on one of the replication handlers.

        The cell block is decoded in one call, and each entry's key is read only for its table and
        cluster ids (a WALKey per entry, and a decode call per entry, were a third of the sink's CPU
        under py-spy for the scheduler bench's one-cell entries).
        """
        block = request.cell_block if cell_block is None else cell_block
        pb_entries = request.entry
        counts = [entry.associated_cell_count for entry in pb_entries]
        try:
            decoded = decode_cell_columns(block, sum(counts))
        except CorruptWALError:
            decode_request(request, cell_block=block)  # raises BadReplicationRequest naming the entry
            raise
        if decoded.end != len(block):
            raise BadReplicationRequest(
                f"replication request: {len(block) - decoded.end} bytes left after the last entry"
            )
        columns = decoded.columns
        writes = []
        by_table: dict[str, dict[tuple[uuid.UUID, ...], CellColumns]] = defaultdict(dict)
        for (table, cluster_ids), runs in entry_groups(pb_entries, counts).items():
            group = columns.runs(runs)
            encoded = _Encoded(block, decoded.bounds, runs) if decoded.canonical else None
            by_table[table][cluster_ids] = group
            writes.append((table, group, list(cluster_ids), encoded))
        try:
            self._check_schema(by_table)
            for write in writes:
                self._write(*write)
        except BaseException:
            self.failed_batches += 1
            raise
        self.applied_batches += 1
        self.applied_ops += len(pb_entries)
        if pb_entries:
            self.age_of_last_applied_op = int(time.time() * 1000) - pb_entries[len(pb_entries) - 1].key.write_time

    def _check_schema(self, groups: dict[str, dict[tuple[uuid.UUID, ...], CellColumns]]) -> None:
        missing_tables: list[str] = []
        missing_families: list[tuple[str, str]] = []
        for table, by_ids in groups.items():
            try:
                desc = self.server.descriptor(table)
            except UnknownTable:
                missing_tables.append(table)
                continue
            families = set().union(*(columns.families() for columns in by_ids.values())) - {b""}
            for family in sorted(families):
                if family.decode("utf-8", "replace") not in desc.families:
                    missing_families.append((table, family.decode("utf-8", "replace")))
        if missing_tables:
            exc = UnknownTable(f"table {', '.join(missing_tables)} does not exist on the peer cluster")
            exc.tables = missing_tables  # type: ignore[attr-defined]
            raise exc
        if missing_families:
            names = ", ".join(f"{t}:{f}" for t, f in missing_families)
            exc2 = UnknownFamily(f"column family {names} does not exist on the peer cluster")
            exc2.families = missing_families  # type: ignore[attr-defined]
            raise exc2

    def _write(
        self, table: str, cells: CellColumns, cluster_ids: list[uuid.UUID], encoded: _Encoded | None = None
    ) -> None:
        """Route rows to their owners; write this server's share (and any unreachable owner's) locally."""
        servers = self.server.live_servers or [self.server.server_name]
        if self.server.server_name not in servers:
            servers = sorted([*servers, self.server.server_name])
        if len(servers) == 1:  # only this server: nothing to route (the bench's and many peers' case)
            data = encoded.group_bytes() if encoded is not None else None
            self._apply_shares(table, cluster_ids, {self.server.server_name: (cells, data)})
            return
        if encoded is not None:
            routed = split_by_owner(cells.rows(), *encoded.cell_bounds(), sorted(servers))
            self._apply_shares(
                table,
                cluster_ids,
                {owner: (cells.take(owned), encoded.join(ranges)) for owner, (owned, ranges) in routed.items()},
            )
            return
        # owner_of(row, servers) for every cell, with the server list sorted once per batch instead of
        # once per cell, and consecutive cells of one row routed once (profiled hot path, see BENCHMARKS.md).
        by_owner = owner_indices(cells.rows(), sorted(servers))
        self._apply_shares(table, cluster_ids, {owner: (cells.take(owned), None) for owner, owned in by_owner.items()})

    # The owners' shares go out on the forward pool while this server writes its own share, so the
    # owner's decode + WAL fsync overlaps this server's (they were sequential: profiled sink path, see
    # BENCHMARKS.md). The call still returns only when every share is durable somewhere.
    def _apply_shares(
        self, table: str, cluster_ids: list[uuid.UUID], shares: dict[str, tuple[CellColumns, bytes | None]]
    ) -> None:
        """Write each owner's share (its cells, and their shipped bytes when they can be forwarded as
        they are): this server's own here, the others' forwarded meanwhile; a share whose owner does
        not take it is written here too."""
        local_cells, local_bytes = shares.pop(self.server.server_name, (CellColumns(), None))
        forwards = {
            owner: self._forward(self._send_share, owner, table, owned, data, cluster_ids)
            for owner, (owned, data) in shares.items()
        }
        if local_cells:
            try:
                self.server.mutate(table, local_cells, cluster_ids, encoded=local_bytes)
            except BaseException:
                wait(forwards.values())  # nothing of this request stays in flight when it fails
                raise
        for owner in self._owners_that_failed(forwards):  # any server accepts any row
            owned, data = shares[owner]
            self.server.mutate(table, owned, cluster_ids, encoded=data)

    def _send_share(
        self, owner: str, table: str, cells: CellColumns, data: bytes | None, cluster_ids: list[uuid.UUID]
    ) -> int:
        client = self.client()
        if data is None:
            return client.mutate_on(owner, table, cells.cells(), cluster_ids)
        return client.mutate_encoded_on(owner, table, len(cells), data, cluster_ids)

    def _forward(self, call, *args) -> Future:  # type: ignore[no-untyped-def]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=FORWARD_THREADS, thread_name_prefix="sink-forward")
            return self._pool.submit(call, *args)

    def _owners_that_failed(self, forwards: dict[str, Future]) -> list[str]:
        """Wait for every forward; the owners that did not take their cells (their cells get written here).
        UnknownTable / UnknownFamily from an owner fail the request (after every forward ended)."""
        failed: list[str] = []
        schema_error: BaseException | None = None
        for owner, future in forwards.items():
            try:
                future.result()
            except (UnknownTable, UnknownFamily) as exc:
                schema_error = schema_error or exc
            except HbrepError as exc:  # the owner died or is stopping
                LOG.warning("sink: owner %s did not take its cells (%s); writing them locally", owner, exc)
                failed.append(owner)
        if schema_error is not None:
            raise schema_error
        return failed

    def close(self) -> None:
        """Stop the forward pool (the server is stopping)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def client(self) -> ClusterClient:
        """A ClusterClient of this cluster sharing the server's ZooKeeper session."""
        with self._lock:
            if self._client is None:
                # the sink's own connection to its cluster: HBase gives it replication.sink.client.ops.timeout
                self._client = ClusterClient(
                    self.server.cluster_key,
                    self.server.conf,
                    zk=self.server.zk,
                    timeout_s=self.server.conf.get_int("replication.sink.client.ops.timeout") / 1000,
                )
            return self._client
