"""The gRPC AdminService of a region server, bound to loopback, every call checked for the token."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from concurrent import futures
from typing import Any

import grpc

from replication.cluster import rpc
from replication.cluster.errors import RegionServerAborted, StaleRoutingEpoch
from replication.cluster.replicate_wire import SERVICE, parse_request
from replication.cluster.server_api import RegionServerHost
from replication.errors import HbrepError
from replication.net import port_in_use
from replication.proto import Admin_pb2, Admin_pb2_grpc, HBase_pb2
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.tls import TlsSettings
from replication.wal.cell_codec import decode_cells
from replication.wal.cell_columns import CellColumns, decode_cell_columns
from replication.wal.errors import CorruptWALError
from replication.wal.model import Cell

LOG = logging.getLogger(__name__)

# A Mutate of at least this many cells is read into Arrow columns (cell_columns.py), a shorter one into Cells.
# The columns cost about 100 µs a request whatever its size (Arrow arrays and compute calls) and save the
# flush's conversion of Cells later; Cells cost about 0.8 µs a cell plus 0.55 µs at the flush. Measured by a
# micro-benchmark of decode + write checks (+ the flush's conversion) of 100-byte cells: 104 µs against 48 µs
# for 33 cells (a client's 100-edit batch over 3 servers), 106 against 86 for 64, 112 against 170 for 128.
# Reading every client batch as columns made the embedded cluster's ingest about 30% slower.
COLUMNS_MIN_CELLS = 64


class TokenInterceptor(grpc.ServerInterceptor):
    """Refuses every call whose ``authorization`` metadata is not the cluster token (UNAUTHENTICATED)."""

    def __init__(self, token: str):
        self._token = token.encode()

        def deny(request: Any, context: grpc.ServicerContext) -> None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, rpc.BAD_TOKEN)

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation: Callable, handler_call_details: grpc.HandlerCallDetails) -> Any:
        for key, value in handler_call_details.invocation_metadata or ():
            if key == rpc.AUTH_METADATA:
                given = value.encode() if isinstance(value, str) else value
                if hmac.compare_digest(given, self._token):
                    return continuation(handler_call_details)
                break
        return self._deny


def abort_for(context: grpc.ServicerContext, exc: BaseException) -> None:
    """Turn an exception into the status + trailing metadata the clients map back (see rpc.py)."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, UnknownTable):
        tables = getattr(exc, "tables", None) or []
        context.set_trailing_metadata(((rpc.ERROR_KIND, rpc.TABLE_NOT_FOUND), (rpc.ERROR_TABLES, ",".join(tables))))
        context.abort(grpc.StatusCode.NOT_FOUND, message)
    if isinstance(exc, UnknownFamily):
        families = getattr(exc, "families", None) or []
        context.set_trailing_metadata(
            ((rpc.ERROR_KIND, rpc.NO_SUCH_FAMILY), (rpc.ERROR_FAMILIES, ",".join(f"{t}:{f}" for t, f in families)))
        )
        context.abort(grpc.StatusCode.FAILED_PRECONDITION, message)
    if isinstance(exc, StaleRoutingEpoch):
        context.set_trailing_metadata(((rpc.ERROR_KIND, rpc.NOT_SERVING),))
        context.abort(grpc.StatusCode.ABORTED, message)
    if isinstance(exc, RegionServerAborted):
        context.abort(grpc.StatusCode.UNAVAILABLE, message)
    if isinstance(exc, HbrepError):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, message)
    LOG.exception("unexpected error in RPC")
    context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {message}")


def routing_epoch_of(context: grpc.ServicerContext) -> int:
    """The routing epoch the client sent with its write (0 when none: older clients, tools)."""
    for key, value in context.invocation_metadata() or ():
        if key == rpc.ROUTING_EPOCH:
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


# AdminService's methods: request and response types (Admin.proto)
_ADMIN_METHODS = {
    "Mutate": (Admin_pb2.MutateRequest, Admin_pb2.MutateResponse),
    "FlushTable": (Admin_pb2.FlushTableRequest, Admin_pb2.FlushTableResponse),
    "RollWALWriter": (Admin_pb2.RollWALWriterRequest, Admin_pb2.RollWALWriterResponse),
    "GetServerInfo": (Admin_pb2.GetServerInfoRequest, Admin_pb2.GetServerInfoResponse),
}


def add_admin_service(servicer: AdminServicer, grpc_server: grpc.Server) -> None:
    """Serve AdminService as the generated ``add_AdminServiceServicer_to_server`` does, except that
    ReplicateWALEntry receives the request's bytes, unparsed (replicate_wire reads its cell block in place)."""
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, name),
            request_deserializer=request.FromString,
            response_serializer=response.SerializeToString,
        )
        for name, (request, response) in _ADMIN_METHODS.items()
    }
    handlers["ReplicateWALEntry"] = grpc.unary_unary_rpc_method_handler(
        servicer.ReplicateWALEntry,
        request_deserializer=None,
        response_serializer=Admin_pb2.ReplicateWALEntryResponse.SerializeToString,
    )
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    grpc_server.add_registered_method_handlers(SERVICE, handlers)


class AdminServicer(Admin_pb2_grpc.AdminServiceServicer):
    """Mutate (client writes), ReplicateWALEntry (sink), FlushTable, RollWALWriter, GetServerInfo."""

    def __init__(self, server: RegionServerHost):
        self.server = server

    def Mutate(self, request: Admin_pb2.MutateRequest, context: grpc.ServicerContext) -> Admin_pb2.MutateResponse:
        try:
            cells: list[Cell] | CellColumns
            if request.cell_count >= COLUMNS_MIN_CELLS:
                # columns, not Cells: the region server takes them as they are with the request's bytes (an
                # owner's share forwarded by a sink is this call)
                decoded = decode_cell_columns(request.cell_block, request.cell_count)
                cells, end, canonical = decoded.columns, decoded.end, decoded.canonical
            else:
                spans: list[tuple[int, int] | None] = []
                cells, end = decode_cells(request.cell_block, request.cell_count, 0, spans)
                canonical = None not in spans
            ids = [rpc.uuid_from_pb(u) for u in request.cluster_ids]
            # the WAL takes the request's own cell bytes when they are exactly these cells' encoding
            canonical = canonical and end == len(request.cell_block)
            seq = self.server.mutate(
                request.table,
                cells,
                ids,
                encoded=request.cell_block if canonical else None,
                routing_epoch=routing_epoch_of(context),
            )
            return Admin_pb2.MutateResponse(cells=len(cells), log_sequence_number=seq)
        except (HbrepError, CorruptWALError) as exc:
            abort_for(context, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def ReplicateWALEntry(self, data: bytes, context: grpc.ServicerContext) -> Admin_pb2.ReplicateWALEntryResponse:
        """The request comes as bytes (see add_admin_service): its cell block is read in place."""
        try:
            request, cell_block = parse_request(data)
            self.server.replication_sink().replicate_request(request, cell_block)
            return Admin_pb2.ReplicateWALEntryResponse()
        except HbrepError as exc:
            abort_for(context, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def FlushTable(
        self, request: Admin_pb2.FlushTableRequest, context: grpc.ServicerContext
    ) -> Admin_pb2.FlushTableResponse:
        try:
            results = self.server.flush_all(request.table if request.HasField("table") else None)
            return Admin_pb2.FlushTableResponse(files=[r.path for r in results if r.path])
        except HbrepError as exc:
            abort_for(context, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def RollWALWriter(
        self, request: Admin_pb2.RollWALWriterRequest, context: grpc.ServicerContext
    ) -> Admin_pb2.RollWALWriterResponse:
        try:
            return Admin_pb2.RollWALWriterResponse(new_wal=self.server.roll_wal(force=True))
        except HbrepError as exc:
            abort_for(context, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def GetServerInfo(
        self, request: Admin_pb2.GetServerInfoRequest, context: grpc.ServicerContext
    ) -> Admin_pb2.GetServerInfoResponse:
        host, port, code = self.server.server_name.split(",")
        wal = self.server.wal
        return Admin_pb2.GetServerInfoResponse(
            server_name=HBase_pb2.ServerName(host_name=host, port=int(port), start_code=int(code)),
            current_wal=wal.current_name if wal else "",
            write_count=wal.entries_written if wal else 0,
        )


GENERAL_HANDLERS = 8  # threads for Mutate, flush, roll, info (HBase's hbase.regionserver.handler.count role)


def build_server(
    server: RegionServerHost, address: str, workers: int | None = None, tls: TlsSettings | None = None
) -> tuple[grpc.Server, int]:
    """A gRPC server for ``server`` bound to ``address`` (loopback; port 0 = pick one); returns it and its port.

    ``workers`` None: the general handlers plus ``hbase.regionserver.replication.handler.count`` (the sink
    applies that many ReplicateWALEntry calls at once, sink.py; the others keep serving while they wait).
    With ``tls`` the port speaks TLS only (``replication/tls.py``: server certificate, optional mutual TLS).
    """
    if workers is None:
        workers = GENERAL_HANDLERS + server.conf.get_int("hbase.regionserver.replication.handler.count", 3)
    host, _, wanted = address.rpartition(":")
    if int(wanted) and port_in_use(int(wanted), host):
        raise RegionServerAborted(f"port {wanted} on {host} is already in use")
    grpc_server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rpc"),
        interceptors=[TokenInterceptor(server.token)],
        # gRPC sets SO_REUSEPORT by default, which would let a second server share a taken port silently.
        options=[*rpc.CHANNEL_OPTIONS, ("grpc.so_reuseport", 0)],
    )
    add_admin_service(AdminServicer(server), grpc_server)
    if tls is None:
        port = grpc_server.add_insecure_port(address)
    else:
        port = grpc_server.add_secure_port(address, rpc.server_credentials(tls))
    if port == 0:
        raise RegionServerAborted(f"could not bind the RPC port on {address}")
    return grpc_server, port
