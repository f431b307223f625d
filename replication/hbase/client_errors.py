"""HBase's exceptions on ClientService / AdminService calls, as the kinds HBase's client acts on.

HBase's client (``ConnectionUtils``, ``AsyncRegionLocatorHelper``, ``AsyncScanSingleRegionRpcRetryingCaller``)
sorts a remote exception into: the region is not where the cache says (NotServingRegionException,
RegionMovedException, RegionOpeningException, and a server that is stopping or not yet running) → drop the
cached location, look it up again in hbase:meta and retry after a backoff pause; the scanner is gone
(UnknownScannerException, ScannerResetException, OutOfOrderScannerNextException) → open a new scanner after
the last row returned; a busy region or server (RegionTooBusyException, CallQueueTooBigException) → retry
after the pause; TableNotFoundException / NoSuchColumnFamilyException → the caller's input, never retried;
anything else → fail with the server's one line.
"""

from __future__ import annotations

import re

from replication.cluster.hbase_rpc.remote_errors import first_line, short_name
from replication.errors import HbrepError
from replication.proto import RPC_pb2
from replication.tables.errors import UnknownFamily, UnknownTable

REGION_NOT_HERE = frozenset(
    {
        "org.apache.hadoop.hbase.NotServingRegionException",
        "org.apache.hadoop.hbase.exceptions.RegionMovedException",
        "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
        "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
        "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException",
        "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException",
        "org.apache.hadoop.hbase.exceptions.ConnectionClosingException",
        "org.apache.hadoop.hbase.PleaseHoldException",
    }
)
SCANNER_GONE = frozenset(
    {
        "org.apache.hadoop.hbase.UnknownScannerException",
        "org.apache.hadoop.hbase.exceptions.ScannerResetException",
        "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException",
    }
)
BUSY = frozenset(
    {
        "org.apache.hadoop.hbase.RegionTooBusyException",
        "org.apache.hadoop.hbase.CallQueueTooBigException",
        "org.apache.hadoop.hbase.CallDroppedException",
        "org.apache.hadoop.hbase.quotas.RpcThrottlingException",
    }
)
TABLE_NOT_FOUND = "org.apache.hadoop.hbase.TableNotFoundException"
NO_SUCH_FAMILY = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"


class HBaseCallError(HbrepError):
    """A call a real HBase refused for a reason hbrep does not retry (the message is the server's line)."""


class Retryable(HbrepError):
    """A call that may succeed when retried (after a pause; ``relocate``: with the region looked up again)."""

    def __init__(self, message: str, relocate: bool):
        super().__init__(message)
        self.relocate = relocate


class RegionNotHere(Retryable):
    """The region is not (or no longer, or not yet) served where the cached location says."""

    def __init__(self, message: str):
        super().__init__(message, relocate=True)


class ServerUnreachable(Retryable):
    """The region server did not answer (refused, reset, timed out)."""

    def __init__(self, message: str):
        super().__init__(message, relocate=True)


class ServerBusy(Retryable):
    """The region or server is overloaded right now (same place, later)."""

    def __init__(self, message: str):
        super().__init__(message, relocate=False)


class ScannerGone(Retryable):
    """The server no longer knows the scanner (lease expired, region closed, call sequence lost)."""

    def __init__(self, message: str):
        super().__init__(message, relocate=True)


def exception_error(name: str, text: str, server: str, table: str) -> HbrepError:
    """The error for HBase exception class ``name`` (``text``: its ``Class: message`` line) that ``server``
    returned on a call for ``table``."""
    said = f"{short_name(name)}: {text.split(': ', 1)[-1]}" if text else short_name(name)
    if name in REGION_NOT_HERE:
        return RegionNotHere(f"region server {server}: {said}")
    if name in SCANNER_GONE:
        return ScannerGone(f"region server {server}: {said}")
    if name in BUSY:
        return ServerBusy(f"region server {server}: {said}")
    if name == TABLE_NOT_FOUND:
        return UnknownTable(f"table {table} does not exist ({said})")
    if name == NO_SUCH_FAMILY:  # "Column family zz does not exist in region <name> in table <descriptor>"
        named = re.search(r"Column family (\S+) does not exist", text)
        if named:
            return UnknownFamily(f"table {table} has no column family {named.group(1)!r}")
        return UnknownFamily(f"table {table}: no such column family ({said[:200]})")
    return HBaseCallError(f"region server {server}: {said}")


def remote_call_error(exc: RPC_pb2.ExceptionResponse, server: str, table: str) -> HbrepError:
    """The error for a call's ExceptionResponse (see :func:`exception_error`)."""
    return exception_error(exc.exception_class_name, first_line(exc), server, table)


def action_error(name: str, value: bytes, server: str, table: str) -> HbrepError:
    """The error for a Multi action's NameBytesPair exception (``value``: HBase's serialized
    StringifiedException, whose readable text holds the message)."""
    text = value.decode("utf-8", "replace") if value else ""
    line = next((part for part in text.splitlines() if short_name(name) in part), "")
    start = line.find(short_name(name))
    return exception_error(name, line[start:].strip() if start >= 0 else "", server, table)
