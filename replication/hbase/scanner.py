"""Scanning with ClientService.Scan: one region's scanner, and a table scan across regions that survives
regions moving, splitting and scanners expiring, as HBase's ``AsyncClientScanner`` does.

One region: the first call opens a scanner (``ScanRequest{region, scan, number_of_rows}``) and already
returns rows; each next call names ``scanner_id`` with ``next_call_seq`` 0, 1, 2, ... (the server refuses a
call out of sequence: OutOfOrderScannerNextException); the server closes the scanner itself once
``more_results_in_region`` is false, and a scan stopped early sends ``close_scanner``. A scanner idle longer
than its lease (``ttl``, ``hbase.client.scanner.timeout.period``) is dropped by the server; a caller that
pauses can ``renew`` it.

Across regions: rows come region after region in key order; after a region ends the scan goes on at its
end key. When a call fails because the region is no longer there (moved, split, closing, its server down)
or the scanner is gone, the next scanner opens just after the last row returned (``row + 0x00``, as
``ConnectionUtils.createClosestRowAfter``), in whatever region holds that row now after the location is
looked up again: no row is returned twice or skipped. Rows are whole (no ``allow_partial_results``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from replication.errors import HbrepError
from replication.hbase.client_errors import RegionNotHere, Retryable
from replication.hbase.client_service import RegionServer, region_specifier
from replication.hbase.retries import RetryPolicy
from replication.proto import Client_pb2
from replication.wal.model import Cell

LOG = logging.getLogger(__name__)
DEFAULT_CACHING = 1000  # rows per Scan call (HBase's default is unbounded, capped by max_result_size)
MAX_RESULT_SIZE = 2 * 1024 * 1024  # hbase.client.scanner.max.result.size
RAW_ATTRIBUTE = "_raw_"  # Scan.setRaw: attribute "_raw_" = Bytes.toBytes(true)


@dataclass(frozen=True)
class ScanOptions:
    """What to scan: rows [start_row, stop_row), families, versions, raw, time range [min_ts, max_ts), limit."""

    start_row: bytes = b""
    stop_row: bytes = b""
    families: tuple[bytes, ...] = ()
    columns: tuple[tuple[bytes, bytes], ...] = ()
    versions: int = 1
    raw: bool = False
    time_range: tuple[int, int] | None = None
    limit: int | None = None
    caching: int = DEFAULT_CACHING
    extra: dict[str, bytes] = field(default_factory=dict)

    def to_proto(self, start_row: bytes | None = None) -> Client_pb2.Scan:
        """The Scan message, starting at ``start_row`` when given (a restart), else at ``self.start_row``."""
        scan = Client_pb2.Scan(start_row=self.start_row if start_row is None else start_row, stop_row=self.stop_row,
                               max_versions=self.versions, max_result_size=MAX_RESULT_SIZE,
                               caching=self.caching)  # fmt: skip
        for family in self.families:
            scan.column.add(family=family)
        columns: dict[bytes, list[bytes]] = {}
        for family, qualifier in self.columns:
            columns.setdefault(family, []).append(qualifier)
        for family, qualifiers in columns.items():
            scan.column.add(family=family, qualifier=qualifiers)
        if self.raw:
            scan.attribute.add(name=RAW_ATTRIBUTE, value=b"\xff")
        for name, value in self.extra.items():
            scan.attribute.add(name=name, value=value)
        if self.time_range is not None:
            scan.time_range.CopyFrom(Client_pb2.TimeRange(**{"from": self.time_range[0], "to": self.time_range[1]}))
        return scan


class RegionScanner:
    """One open scanner in one region (see the module docstring); iterate for its rows."""

    def __init__(self, server: RegionServer, region_name: bytes, scan: Client_pb2.Scan, table: str, caching: int):
        self.server, self.region_name, self.scan, self.table = server, region_name, scan, table
        self.caching = caching
        self.scanner_id: int | None = None
        self.next_call_seq = 0
        self.more_results = True  # False once the server said the whole scan is done (stop row reached)
        self.ttl_ms = 0

    def _open(self) -> Client_pb2.ScanRequest:
        return Client_pb2.ScanRequest(region=region_specifier(self.region_name), scan=self.scan,
                                      number_of_rows=self.caching, close_scanner=False,
                                      client_handles_partials=False, client_handles_heartbeats=False)  # fmt: skip

    def _next(self) -> Client_pb2.ScanRequest:
        assert self.scanner_id is not None
        return Client_pb2.ScanRequest(scanner_id=self.scanner_id, number_of_rows=self.caching, close_scanner=False,
                                      next_call_seq=self.next_call_seq, client_handles_partials=False,
                                      client_handles_heartbeats=False)  # fmt: skip

    def __iter__(self) -> Iterator[list[Cell]]:
        request = self._open()
        while True:
            batch = self.server.scan(request, self.table)
            if self.scanner_id is None:
                self.scanner_id = batch.scanner_id
            else:
                self.next_call_seq += 1
            self.ttl_ms = batch.ttl_ms or self.ttl_ms
            self.more_results = batch.more_results
            for cells in batch.rows:
                if cells:
                    yield cells
            if not batch.more_results or not batch.more_in_region:
                self.scanner_id = None  # the server closed it
                return
            request = self._next()

    def renew(self) -> None:
        """Renew the scanner's lease (``ScanRequest{scanner_id, renew}``) while the caller pauses."""
        if self.scanner_id is not None:
            request = Client_pb2.ScanRequest(scanner_id=self.scanner_id, renew=True, number_of_rows=0)
            self.server.scan(request, self.table)

    def close(self) -> None:
        """Close the scanner on the server (when still open); errors are ignored (the lease ends it anyway)."""
        if self.scanner_id is None:
            return
        request = Client_pb2.ScanRequest(scanner_id=self.scanner_id, close_scanner=True, number_of_rows=0)
        self.scanner_id = None
        try:
            self.server.scan(request, self.table)
        except HbrepError as exc:
            LOG.debug("closing scanner in %s: %s", self.region_name, exc)


def closest_row_after(row: bytes) -> bytes:
    """The smallest row sorting after ``row`` (``row + 0x00``)."""
    return row + b"\x00"


class TableScanner:
    """Every row of a table scan, across regions, each exactly once (see the module docstring).

    ``locate(table, row, refresh)`` gives the RegionLocation holding ``row`` and its RegionServer; with
    ``refresh`` the cached location is dropped first.
    """

    def __init__(self, locate, table: str, options: ScanOptions, retry: RetryPolicy, check_enabled=None):  # type: ignore[no-untyped-def]
        self.locate, self.table, self.options, self.retry = locate, table, options, retry
        self.check_enabled = check_enabled
        self.restarts = 0  # scanners reopened after a failure (tests and the benchmark read it)

    def __iter__(self) -> Iterator[tuple[bytes, list[Cell]]]:
        options = self.options
        start = options.start_row
        last_row: bytes | None = None
        returned = 0
        refresh = False
        failures = 0
        while True:
            location, server = self.locate(self.table, start, refresh)
            refresh = False
            scanner = RegionScanner(server, location.region_name, options.to_proto(start), self.table,
                                    self._caching(returned))  # fmt: skip
            try:
                for cells in scanner:
                    row = cells[0].row
                    if last_row is not None and row <= last_row:
                        continue  # never twice (a restart at row + 0x00 cannot return it, but be sure)
                    last_row = row
                    returned += 1
                    failures = 0
                    yield row, cells
                    if options.limit is not None and returned >= options.limit:
                        scanner.close()
                        return
            except Retryable as exc:
                scanner.scanner_id = None
                if failures + 1 >= self.retry.tries:
                    raise HbrepError(f"scan of {self.table} failed after {failures + 1} tries: {exc}") from None
                LOG.info("scan of %s: %s; reopening after %r", self.table, exc, last_row)
                if failures == 0 and self.check_enabled is not None and isinstance(exc, RegionNotHere):
                    self.check_enabled(self.table)  # TableNotEnabled for a disabled table's closed regions
                self.restarts += 1
                failures += 1
                time.sleep(self.retry.pause_s(failures - 1))
                start = closest_row_after(last_row) if last_row is not None else start
                refresh = exc.relocate
                continue
            finally:
                if scanner.scanner_id is not None:
                    scanner.close()
            end = location.info.end_key
            if not scanner.more_results or not end or (options.stop_row and end >= options.stop_row):
                return
            start = end

    def _caching(self, returned: int) -> int:
        if self.options.limit is None:
            return self.options.caching
        return max(1, min(self.options.caching, self.options.limit - returned))
