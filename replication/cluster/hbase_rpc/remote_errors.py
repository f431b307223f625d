"""HBase's server-side exceptions (``ResponseHeader.exception``) as hbrep's sink errors.

HBase sends the exception's class name and stack trace (whose first line is ``Class: message``). The
mapping follows what ``HBaseInterClusterReplicationEndpoint`` does with each kind, expressed in
hbrep's rules (``replication/source/endpoint.py``; every SinkError counts against the sink as HBase's
``reportBadSink`` does):

- server stopping, aborted, not yet running, overloaded (RegionServerStoppedException,
  RegionServerAbortedException, ServerNotRunningYetException, CallQueueTooBigException,
  CallDroppedException, PleaseHoldException): ``SinkUnavailable``, the peer's server list is re-read;
- TableNotFoundException: ``TableNotFoundOnPeer`` (sinks re-chosen; ``hbase.replication.drop.on.
  deleted.table`` applies); NoSuchColumnFamilyException: ``NoSuchColumnFamilyOnPeer``. The sink's
  own client may wrap them (RetriesExhaustedWithDetailsException), so the whole trace is searched;
- region moved / not serving / too busy (RegionMovedException, NotServingRegionException,
  RegionTooBusyException), and anything else: ``SinkError`` (retried after the backoff sleep);
- AccessDeniedException: ``SinkAuthError`` (not retried: the peer refuses this client).

The other direction, ``exception_response``, is what hbrep's HBase RPC listener (``server.py``) sends
back to a real HBase source for hbrep's own sink errors, in the shapes HBase's endpoint reacts to: a
missing table as TableNotFoundException, a missing family as NoSuchColumnFamilyException, a stopping
server as RegionServerStoppedException, anything else as a plain IOException (retried after the
backoff sleep). The stack trace starts with ``Class: message`` as HBase's
``StringUtils.stringifyException`` does, so both HBase (``RemoteException.unwrapRemoteException``,
``isTableNotFoundException`` looks for the class name in the message) and ``remote_error`` read it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from replication.cluster.errors import (
    NoSuchColumnFamilyOnPeer,
    RegionServerAborted,
    SinkAuthError,
    SinkError,
    SinkUnavailable,
    TableNotFoundOnPeer,
)
from replication.errors import HbrepError
from replication.proto import RPC_pb2
from replication.tables.errors import UnknownFamily, UnknownTable

TABLE_NOT_FOUND = "org.apache.hadoop.hbase.TableNotFoundException"
NO_SUCH_FAMILY = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
ACCESS_DENIED = "org.apache.hadoop.hbase.security.AccessDeniedException"
SERVER_UNAVAILABLE = frozenset(
    {
        "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
        "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException",
        "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException",
        "org.apache.hadoop.hbase.CallQueueTooBigException",
        "org.apache.hadoop.hbase.CallDroppedException",
        "org.apache.hadoop.hbase.PleaseHoldException",
        "org.apache.hadoop.hbase.exceptions.ConnectionClosingException",
    }
)
REGION_SERVER_STOPPED = "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException"
IO_EXCEPTION = "java.io.IOException"
REGION_NOT_HERE = frozenset(
    {
        "org.apache.hadoop.hbase.exceptions.RegionMovedException",
        "org.apache.hadoop.hbase.NotServingRegionException",
        "org.apache.hadoop.hbase.RegionTooBusyException",
    }
)


def short_name(class_name: str) -> str:
    """``org.apache.hadoop.hbase.TableNotFoundException`` → ``TableNotFoundException``."""
    return class_name.rsplit(".", 1)[-1]


def first_line(exc: RPC_pb2.ExceptionResponse) -> str:
    """The exception's ``Class: message`` line (its class name when the trace is empty)."""
    lines = (exc.stack_trace or "").strip().splitlines()
    return lines[0].strip() if lines else exc.exception_class_name


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.:-]){re.escape(name)}(?![\w.-])", text) is not None


def remote_error(
    exc: RPC_pb2.ExceptionResponse,
    server: str,
    tables: Iterable[str] = (),
    families: Iterable[tuple[str, str]] = (),
) -> SinkError:
    """The SinkError for an exception ``server`` returned; ``tables`` and (table, family) ``families`` are what
    the failed call wrote (to name what the peer lacks)."""
    name = exc.exception_class_name
    trace = exc.stack_trace or ""
    said = f"{short_name(name)}: {first_line(exc).split(': ', 1)[-1]}"
    line = f"sink {server}: {said}"
    if name in SERVER_UNAVAILABLE:
        return SinkUnavailable(f"sink {server} unavailable: {short_name(name)}")
    if name == ACCESS_DENIED:
        return SinkAuthError(line)
    if name == TABLE_NOT_FOUND or TABLE_NOT_FOUND in trace:
        called = list(tables)
        named = [t for t in called if _mentions(trace, t)]
        return TableNotFoundOnPeer(line, named or called)
    if name == NO_SUCH_FAMILY or NO_SUCH_FAMILY in trace:
        called = list(families)
        named = [(t, f) for t, f in called if _mentions(trace, t) and _mentions(trace, f)] or called
        missing = ", ".join(f"{t}:{f}" for t, f in named)
        return NoSuchColumnFamilyOnPeer(f"sink {server}: NoSuchColumnFamilyException ({missing}) in {said}", named)
    return SinkError(line)


def exception_class_for(exc: BaseException) -> str:
    """HBase's exception class for an error of hbrep's sink (see the module docstring)."""
    if isinstance(exc, UnknownTable):
        return TABLE_NOT_FOUND
    if isinstance(exc, UnknownFamily):
        return NO_SUCH_FAMILY
    if isinstance(exc, RegionServerAborted):
        return REGION_SERVER_STOPPED
    return IO_EXCEPTION


def exception_response(exc: BaseException, host: str, port: int) -> RPC_pb2.ExceptionResponse:
    """The ExceptionResponse hbrep's HBase RPC listener sends for ``exc`` (raised by the sink on
    ``host:port``): HBase's class name, ``Class: message`` as the trace, the server's address."""
    name = exception_class_for(exc)
    message = str(exc) if isinstance(exc, HbrepError) and str(exc) else f"{type(exc).__name__}: {exc}"
    return RPC_pb2.ExceptionResponse(
        exception_class_name=name,
        stack_trace=f"{name}: {message}\n\tat hbrep region server {host}:{port}\n",
        hostname=host,
        port=port,
        do_not_retry=False,
    )
