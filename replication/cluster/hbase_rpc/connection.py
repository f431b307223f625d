"""One client connection to one HBase server: connect (preamble + ConnectionHeader), call, close.

Calls are numbered from 0 on the connection and sent one at a time (a lock serializes threads that
share it), each waiting for the response frame with its call id. Any transport problem (refused,
reset, timed out, a frame that does not parse) closes the socket, so the next call reconnects, and is
raised as ``ConnectionFailed``; an exception the server returns for the call comes back as
``RemoteCallError`` with HBase's ExceptionResponse, the connection still usable.
"""

from __future__ import annotations

import socket
import ssl
import threading
from contextlib import suppress

from google.protobuf.message import DecodeError, Message

from replication.cluster.hbase_rpc.framing import (
    CONNECTION_CALL_ID,
    FRAME_LENGTH,
    FrameError,
    Response,
    decode_response,
    encode_request,
)
from replication.cluster.hbase_rpc.preamble import connection_start
from replication.cluster.hbase_rpc.tls import PLAIN_TEXT_HINT, handshake_failure
from replication.errors import HbrepError
from replication.proto import HBase_pb2, RPC_pb2

MAX_RESPONSE = 256 * 1024 * 1024  # hbase.ipc.max.request.size bounds what a sane server sends back


class ConnectionFailed(HbrepError):
    """The server could not be reached, dropped the connection, or did not answer in time."""


class RemoteCallError(HbrepError):
    """The server answered the call with an exception (``.exception``: HBase's ExceptionResponse)."""

    def __init__(self, message: str, exception: RPC_pb2.ExceptionResponse):
        super().__init__(message)
        self.exception = exception


class RpcConnection:
    """A connection to ``host:port`` for one service, cells coded with ``codec_class``, as ``user``."""

    def __init__(
        self,
        host: str,
        port: int,
        service: str,
        codec_class: str,
        user: str,
        timeout_s: float,
        version: HBase_pb2.VersionInfo | None = None,
        tls: ssl.SSLContext | None = None,
    ):
        self.host, self.port = host, port
        self.version = version  # the client version the ConnectionHeader names (None: none, as hbrep's sink client)
        self.service, self.codec_class, self.user = service, codec_class, user
        self.timeout_s = timeout_s
        self.tls = tls  # HBase's RPC TLS (replication/cluster/hbase_rpc/tls.py); None: plain text
        self._answered = False  # whether the current socket has answered a call yet
        self._sock: socket.socket | None = None
        self._next_call_id = 0
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _connect(self) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            except OSError as exc:  # ssl.SSLError included
                sock.close()
                raise ConnectionFailed(handshake_failure(self.address, exc)) from None
        self._answered = False
        sock.sendall(connection_start(self.service, self.codec_class, self.user, self.version))
        self._next_call_id = 0
        return sock

    def _read_exact(self, sock: socket.socket, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionFailed(f"{self.address} closed the connection{self._first_answer_hint()}")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _first_answer_hint(self) -> str:
        if self._answered or self.tls is not None:
            return ""
        return f" before answering the first call; {PLAIN_TEXT_HINT}"

    def _read_response(self, sock: socket.socket) -> Response:
        (length,) = FRAME_LENGTH.unpack(self._read_exact(sock, FRAME_LENGTH.size))
        if not 0 < length <= MAX_RESPONSE:
            raise FrameError(f"response frame length {length} is out of range")
        return decode_response(self._read_exact(sock, length))

    def call(self, method: str, request: Message, response_type: type[Message], cell_block: bytes = b"") -> Message:
        """The parsed response of ``method`` called with ``request`` and ``cell_block``.

        Raises ConnectionFailed (transport) or RemoteCallError (the server's exception).
        """
        return self.call_with_cells(method, request, response_type, cell_block)[0]

    def call_with_cells(
        self, method: str, request: Message, response_type: type[Message], cell_block: bytes = b""
    ) -> tuple[Message, bytes]:
        """As :meth:`call`, with the response's cell block too (b"" when it has none): the cells of the
        results of ClientService's Get, Scan and Multi travel there, coded with the connection's codec."""
        with self._lock:
            try:
                if self._sock is None:
                    self._sock = self._connect()
                sock = self._sock
                sock.settimeout(self.timeout_s)
                call_id = self._next_call_id
                self._next_call_id = (call_id + 1) & 0x7FFFFFFF
                sock.sendall(encode_request(call_id, method, request, cell_block, int(self.timeout_s * 1000)))
                while True:
                    response = self._read_response(sock)
                    self._answered = True
                    if response.call_id in (call_id, CONNECTION_CALL_ID):
                        break  # a stale answer to an earlier, timed-out call is skipped
            except (OSError, FrameError, ConnectionFailed) as exc:
                self._close_locked()
                if isinstance(exc, ConnectionFailed):
                    raise
                what = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
                if isinstance(exc, ConnectionResetError):
                    what += self._first_answer_hint()
                raise ConnectionFailed(f"{self.address} {method}: {what}") from None
            exception = response.exception
            if exception is not None:
                if response.call_id == CONNECTION_CALL_ID:
                    self._close_locked()  # the server refused the connection itself and closes it
                raise RemoteCallError(f"{self.address} {method}: {exception.exception_class_name}", exception)
            result = response_type()
            try:
                result.ParseFromString(response.message)
            except DecodeError as exc:
                self._close_locked()
                what = f"response is not a {response_type.__name__}: {exc}"
                raise ConnectionFailed(f"{self.address} {method}: {what}") from None
            return result, response.cell_block

    def _close_locked(self) -> None:
        if self._sock is not None:
            with suppress(OSError):
                self._sock.close()
            self._sock = None

    def close(self) -> None:
        """Close the socket (a later call reconnects)."""
        with self._lock:
            self._close_locked()
