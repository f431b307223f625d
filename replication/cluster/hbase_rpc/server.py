"""HBaseRpcServer: the server side of HBase's RPC in an hbrep region server, for ``ReplicateWALEntry`` only.

It lets a real HBase cluster replicate natively into an hbrep cluster: HBase's own
``HBaseInterClusterReplicationEndpoint`` connects to a sink region server it found in the peer's
ZooKeeper and calls ``AdminService.ReplicateWALEntry`` over HBase's RPC (HBase 2.6.1:
``NettyRpcConnection`` and ``NettyRpcDuplexHandler`` on the client, ``ServerRpcConnection`` on the
server). One connection, as this listener reads it:

0. with TLS (``hbase.server.netty.tls.enabled``, ``tls.server_context``) a TLS handshake first, as HBase's
   Netty server; a client whose first byte is not a TLS record is served in plain text only while
   ``hbase.server.netty.tls.supportplaintext`` is true (HBase's ``OptionalSslHandler`` looks the same way);
1. the 6-byte preamble ``HBas`` | version 0 | auth 80 (SIMPLE; no SASL here, see docs/security.md);
2. int32 length | ConnectionHeader (service ``AdminService``, cell codec ``KeyValueCodecWithTags`` or
   ``KeyValueCodec``, no compressor). A SIMPLE client expects no answer; a header this listener
   refuses gets a ResponseHeader with call id -1 and HBase's exception, then the connection closes;
3. request frames (``framing.decode_request``), each answered in order with a response frame of the
   same call id: an empty ReplicateWALEntryResponse once the sink made the edits durable, or an
   ExceptionResponse (``remote_errors.exception_response``: TableNotFoundException,
   NoSuchColumnFamilyException, RegionServerStoppedException, IOException) that HBase's source
   retries by its own rules.

The request message and the cell block become one ``ReplicateWALEntryRequest`` (the cell block in its
field 100, as hbrep's gRPC path carries it) handed to ``replicate``: the region server passes its
``ReplicationSink.replicate_request``, so cluster ids, scopes, schema checks and errors are exactly
those of hbrep's own gRPC sink. Calls of one connection run one after another on its thread.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import ssl
import threading
from collections.abc import Callable
from contextlib import suppress

from google.protobuf.message import DecodeError

from replication.cluster.hbase_rpc.cell_block import CODECS
from replication.cluster.hbase_rpc.framing import (
    CONNECTION_CALL_ID,
    FRAME_LENGTH,
    FrameError,
    decode_request,
    encode_response,
)
from replication.cluster.hbase_rpc.preamble import ADMIN_SERVICE, BadPreamble, parse_preamble
from replication.cluster.hbase_rpc.remote_errors import IO_EXCEPTION, exception_response
from replication.errors import HbrepError
from replication.proto import Admin_pb2, RPC_pb2

LOG = logging.getLogger(__name__)

REPLICATE_WAL_ENTRY = "ReplicateWALEntry"
FATAL_CONNECTION = "org.apache.hadoop.hbase.ipc.FatalConnectionException"
UNKNOWN_SERVICE = "org.apache.hadoop.hbase.ipc.UnknownServiceException"
UNSUPPORTED_CODEC = "org.apache.hadoop.hbase.ipc.UnsupportedCellCodecException"
UNSUPPORTED_COMPRESSOR = "org.apache.hadoop.hbase.ipc.UnsupportedCompressionCodecException"
UNSUPPORTED_OPERATION = "java.lang.UnsupportedOperationException"
MAX_CONNECTION_HEADER = 64 * 1024
TLS_HANDSHAKE_RECORD = 0x16  # the first byte of a TLS ClientHello
TLS_HANDSHAKE_TIMEOUT_S = 30.0

Replicate = Callable[[Admin_pb2.ReplicateWALEntryRequest], None]


class ConnectionRefused(Exception):
    """A connection this listener ends: ``class_name`` and ``message`` go back with call id -1."""

    def __init__(self, class_name: str, message: str):
        super().__init__(message)
        self.class_name = class_name


def _read_exact(sock: socket.socket, size: int) -> bytes | None:
    """``size`` bytes, or None when the peer closed the connection first.

    Read into one buffer of the exact size (``recv(n)`` allocates n bytes on every call, once per
    arriving segment of a large cell block).
    """
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if not n:
            return None
        got += n
    return bytes(buffer)


def check_connection_header(header: RPC_pb2.ConnectionHeader) -> None:
    """Accept only what this listener serves: AdminService, a KeyValue codec (or none), no compressor."""
    if header.service_name != ADMIN_SERVICE:
        what = f"Unknown service {header.service_name!r} (hbrep serves only {ADMIN_SERVICE})"
        raise ConnectionRefused(UNKNOWN_SERVICE, what)
    codec = header.cell_block_codec_class
    if codec and codec not in CODECS:
        raise ConnectionRefused(UNSUPPORTED_CODEC, f"Unable to find codec {codec} (hbrep reads {', '.join(CODECS)})")
    if header.cell_block_compressor_class:
        what = f"cell block compressor {header.cell_block_compressor_class} is not supported by hbrep"
        raise ConnectionRefused(UNSUPPORTED_COMPRESSOR, what)


class _Connection(socketserver.BaseRequestHandler):
    server: _Listener

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        owner = self.server.owner
        owner._track(sock, True)
        try:
            if owner.tls is not None:
                secured = self._secure(sock, owner)
                if secured is None:
                    return
                sock = secured
            self._serve(sock, owner)
        except ConnectionRefused as refused:
            LOG.warning("HBase RPC connection from %s refused: %s", self.client_address, refused)
            error = owner.error(refused.class_name, str(refused))
            with suppress(OSError):
                sock.sendall(encode_response(CONNECTION_CALL_ID, exception=error))
        except (OSError, FrameError) as exc:
            if not owner.stopped.is_set():
                LOG.warning("HBase RPC connection from %s dropped: %s", self.client_address, exc)
        finally:
            owner._track(self.request, False)

    def _secure(self, sock: socket.socket, owner: HBaseRpcServer) -> socket.socket | None:
        """The TLS socket of this connection, the plain one when plain text is allowed and the client speaks it,
        or None (the connection refused, logged in one line)."""
        assert owner.tls is not None
        sock.settimeout(TLS_HANDSHAKE_TIMEOUT_S)
        first = sock.recv(1, socket.MSG_PEEK)
        if not first:
            return None
        if first[0] != TLS_HANDSHAKE_RECORD:
            if owner.plaintext_allowed:
                sock.settimeout(None)
                return sock
            LOG.warning("HBase RPC connection from %s refused: plain text on a TLS-only listener", self.client_address)
            return None
        try:
            secured = owner.tls.wrap_socket(sock, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            LOG.warning("HBase RPC connection from %s refused: TLS handshake failed: %s", self.client_address, exc)
            return None
        secured.settimeout(None)
        return secured  # stop() shuts the raw socket down, which ends the TLS one too

    def _serve(self, sock: socket.socket, owner: HBaseRpcServer) -> None:
        start = _read_exact(sock, 6)
        if start is None:
            return
        try:
            parse_preamble(start)
        except BadPreamble as exc:
            raise ConnectionRefused(FATAL_CONNECTION, str(exc)) from None
        head = _read_exact(sock, FRAME_LENGTH.size)
        if head is None:
            return
        (length,) = FRAME_LENGTH.unpack(head)
        if not 0 <= length <= MAX_CONNECTION_HEADER:
            raise ConnectionRefused(FATAL_CONNECTION, f"connection header length {length} is out of range")
        raw = _read_exact(sock, length)
        if raw is None:
            return
        header = RPC_pb2.ConnectionHeader()
        try:
            header.ParseFromString(raw)
        except DecodeError as exc:
            raise ConnectionRefused(FATAL_CONNECTION, f"connection header does not parse: {exc}") from None
        check_connection_header(header)
        while not owner.stopped.is_set():
            head = _read_exact(sock, FRAME_LENGTH.size)
            if head is None:
                return
            (length,) = FRAME_LENGTH.unpack(head)
            if not 0 < length <= owner.max_request:
                limit = f"hbase.ipc.max.request.size {owner.max_request}"
                raise ConnectionRefused(FATAL_CONNECTION, f"request of {length} bytes is out of range ({limit})")
            frame = _read_exact(sock, length)
            if frame is None:
                return
            request = decode_request(frame)
            sock.sendall(owner.answer(request.call_id, request.method, request.message, request.cell_block))


class _Listener(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = False
    owner: HBaseRpcServer


class HBaseRpcServer:
    """An HBase RPC listener on ``host:port`` (0 = a free port) whose ReplicateWALEntry calls go to ``replicate``.

    ``advertised_host`` names this server in the exceptions it returns; ``tls`` serves TLS (see step 0 above).
    """

    def __init__(
        self,
        host: str,
        port: int,
        replicate: Replicate,
        *,
        max_request: int,
        advertised_host: str = "",
        tls: ssl.SSLContext | None = None,
        plaintext_allowed: bool = True,
    ):
        self.replicate = replicate
        self.tls = tls  # HBase's RPC TLS on this listener (tls.server_context); None: plain text only
        self.plaintext_allowed = plaintext_allowed  # with tls: plain-text clients still served
        self.max_request = max_request
        self.stopped = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = _Listener((host, port), _Connection)  # OSError when the port is taken
        self._listener.owner = self
        self.host = advertised_host or host
        self.port: int = self._listener.server_address[1]
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Accept connections on a daemon thread; returns the bound port."""
        self._thread = threading.Thread(target=self._listener.serve_forever, name="hbase-rpc", daemon=True)
        self._thread.start()
        LOG.info("HBase RPC listener on %s:%d", self.host, self.port)
        return self.port

    def stop(self) -> None:
        """Stop accepting, close every open connection (calls in flight get no answer), free the port."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        if self._thread is not None:
            self._listener.shutdown()
        self._listener.server_close()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _track(self, sock: socket.socket, open_: bool) -> None:
        with self._lock:
            (self._sockets.add if open_ else self._sockets.discard)(sock)

    def error(self, class_name: str, message: str) -> RPC_pb2.ExceptionResponse:
        """An ExceptionResponse of ``class_name`` naming this server."""
        return RPC_pb2.ExceptionResponse(
            exception_class_name=class_name,
            stack_trace=f"{class_name}: {message}\n\tat hbrep region server {self.host}:{self.port}\n",
            hostname=self.host,
            port=self.port,
        )

    def answer(self, call_id: int, method: str, message: bytes, cell_block: bytes) -> bytes:
        """The response frame for one call (the sink's errors as HBase's exceptions)."""
        if method != REPLICATE_WAL_ENTRY:
            what = f"hbrep's HBase RPC listener serves only {ADMIN_SERVICE}.{REPLICATE_WAL_ENTRY}, not {method!r}"
            return encode_response(call_id, exception=self.error(UNSUPPORTED_OPERATION, what))
        request = Admin_pb2.ReplicateWALEntryRequest()
        try:
            request.ParseFromString(message)
        except DecodeError as exc:
            return encode_response(call_id, exception=self.error(IO_EXCEPTION, f"bad ReplicateWALEntryRequest: {exc}"))
        request.cell_block = cell_block
        try:
            self.replicate(request)
        except Exception as exc:  # every failure goes back to the caller as HBase's exception
            if isinstance(exc, HbrepError):
                LOG.info("ReplicateWALEntry call %d failed: %s", call_id, exc)
            else:
                LOG.exception("ReplicateWALEntry call %d failed", call_id)
            return encode_response(call_id, exception=exception_response(exc, self.host, self.port))
        return encode_response(call_id, Admin_pb2.ReplicateWALEntryResponse())
