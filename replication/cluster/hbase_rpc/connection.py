"""One client connection to one HBase server: connect (preamble + ConnectionHeader), call, close.

Calls are numbered from 0 on the connection and sent one at a time (a lock serializes threads that
share it), each waiting for the response frame with its call id. Any transport problem (refused,
reset, timed out, a frame that does not parse) closes the socket, so the next call reconnects, and is
raised as ``ConnectionFailed``; an exception the server returns for the call comes back as
``RemoteCallError`` with HBase's ExceptionResponse, the connection still usable.

With Kerberos (``rpc_kerberos.RpcKerberos``) the preamble names KERBEROS and a SASL GSSAPI exchange comes
before the ConnectionHeader, as HBase's ``NettyRpcConnection`` does (``sasl.py``, ``gssapi.py``); when it
agrees on integrity or privacy, every byte after it goes out and comes back in SASL-wrapped packets (with
``hbase.rpc.crypto.encryption.aes.enabled`` and privacy, AES-wrapped ones after the ConnectionHeader:
``crypto_aes.py``). A
refusal (no ticket, a server that does not know hbrep's principal, a SIMPLE server, a SIMPLE client at a
Kerberos server) is a ``KerberosError`` with one line naming the server and what to set.
"""

from __future__ import annotations

import socket
import ssl
import threading
from contextlib import suppress

from google.protobuf.message import DecodeError, Message

from replication.cluster.hbase_rpc.crypto_aes import TRANSFORMATION, CryptoAes
from replication.cluster.hbase_rpc.framing import (
    CONNECTION_CALL_ID,
    FRAME_LENGTH,
    FrameError,
    Response,
    decode_response,
    encode_request,
)
from replication.cluster.hbase_rpc.gssapi import GssapiClient
from replication.cluster.hbase_rpc.preamble import connection_header, connection_start, preamble
from replication.cluster.hbase_rpc.rpc_kerberos import CRYPTO_AES_KEY, FALLBACK_KEY, RpcKerberos
from replication.cluster.hbase_rpc.sasl import (
    AUTH_KERBEROS,
    SaslFrameError,
    SaslReply,
    decode_reply,
    packet_length,
    sasl_token,
    wrapped_packet,
)
from replication.cluster.hbase_rpc.tls import PLAIN_TEXT_HINT, handshake_failure
from replication.errors import HbrepError
from replication.kerberos import AUTHENTICATION_KEY, KEYTAB_KEY, PRINCIPAL_KEY, KerberosError
from replication.proto import HBase_pb2, RPC_pb2

MAX_RESPONSE = 256 * 1024 * 1024  # hbase.ipc.max.request.size bounds what a sane server sends back
ACCESS_DENIED = "org.apache.hadoop.hbase.security.AccessDeniedException"
SIMPLE_REFUSED = (
    f"set {AUTHENTICATION_KEY}=kerberos, {PRINCIPAL_KEY} and {KEYTAB_KEY} (or kinit), and the servers' principals "
    "(hbase.master.kerberos.principal, hbase.regionserver.kerberos.principal)"
)


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
        kerberos: RpcKerberos | None = None,
    ):
        self.host, self.port = host, port
        self.version = version  # the client version the ConnectionHeader names (None: none, as hbrep's sink client)
        self.service, self.codec_class, self.user = service, codec_class, user
        self.timeout_s = timeout_s
        self.tls = tls  # HBase's RPC TLS (replication/cluster/hbase_rpc/tls.py); None: plain text
        self.kerberos = kerberos  # SASL GSSAPI before the ConnectionHeader (rpc_kerberos.py); None: SIMPLE
        self._sasl: GssapiClient | CryptoAes | None = None  # what wraps the packets (GSSAPI, or AES after it)
        self._unwrapped = b""  # bytes unwrapped from the server's packets, not read yet
        self._answered = False  # whether the current socket has answered a call yet
        self._sock: socket.socket | None = None
        self._next_call_id = 0
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _connect(self) -> socket.socket:
        sasl = None
        if self.kerberos is not None:  # the service ticket first: a refusal touches no server
            service, instance = self.kerberos.principal_for(self.service, self.host)
            sasl = GssapiClient(service, instance, self.kerberos.identity, self.kerberos.qops)
        try:
            initial = sasl.initial_response() if sasl is not None else b""
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
        except BaseException:
            if sasl is not None:
                sasl.dispose()
            raise
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            except OSError as exc:  # ssl.SSLError included
                sock.close()
                if sasl is not None:
                    sasl.dispose()
                raise ConnectionFailed(handshake_failure(self.address, exc)) from None
        self._answered = False
        self._sasl, self._unwrapped = None, b""
        self._next_call_id = 0
        if sasl is None:
            sock.sendall(connection_start(self.service, self.codec_class, self.user, self.version))
            return sock
        try:
            user = self._negotiate(sock, sasl, initial)
        except BaseException:
            sock.close()
            sasl.dispose()
            raise
        header = connection_header(self.service, self.codec_class, user, self.version)
        use_aes = self.kerberos.crypto_aes and isinstance(self._sasl, GssapiClient) and self._sasl.qop == "auth-conf"
        if use_aes:
            header.rpc_crypto_cipher_transformation = TRANSFORMATION
        data = header.SerializeToString()
        try:
            self._send(sock, FRAME_LENGTH.pack(len(data)) + data)
            if use_aes:
                self._switch_to_aes(sock)
        except BaseException:
            sock.close()
            self._close_sasl()
            raise
        return sock

    def _switch_to_aes(self, sock: socket.socket) -> None:
        """Read the server's ConnectionHeaderResponse (still GSS-wrapped) and wrap with AES from then on."""
        try:
            (length,) = FRAME_LENGTH.unpack(self._read_exact(sock, FRAME_LENGTH.size))
            answer = RPC_pb2.ConnectionHeaderResponse.FromString(self._read_exact(sock, length))
        except TimeoutError:
            raise ConnectionFailed(
                f"{self.address} did not answer the AES cipher negotiation within {self.timeout_s:.0f}s: it does not "
                f"have {CRYPTO_AES_KEY}=true; set it as the servers have it"
            ) from None
        except DecodeError as exc:
            raise ConnectionFailed(f"{self.address}: its ConnectionHeaderResponse does not parse: {exc}") from None
        if not answer.HasField("crypto_cipher_meta"):
            raise ConnectionFailed(f"{self.address} answered the AES cipher negotiation without a cipher")
        aes = CryptoAes(answer.crypto_cipher_meta)
        self._close_sasl()
        self._sasl, self._unwrapped = aes, b""

    def _negotiate(self, sock: socket.socket, sasl: GssapiClient, initial: bytes) -> str:
        """The SASL exchange after the KERBEROS preamble (``NettyHBaseSaslRpcClientHandler``); returns the user
        the ConnectionHeader names (the authenticated principal, as HBase's client sends it)."""
        sock.sendall(preamble(AUTH_KERBEROS) + sasl_token(initial))
        while not sasl.complete:
            reply = self._read_reply(sock)
            if reply.switch_to_simple:
                if not self.kerberos or not self.kerberos.fallback_allowed:
                    raise KerberosError(
                        f"{self.address} does not use Kerberos (it asked to fall back to SIMPLE authentication): "
                        f"set {AUTHENTICATION_KEY}=simple for it, or {FALLBACK_KEY}=true"
                    )
                sasl.dispose()
                return self.user
            if reply.failed:
                cause = reply.error_class.rsplit(".", 1)[-1]
                raise KerberosError(
                    f"{self.address} refused Kerberos authentication as {sasl.user or sasl.identity.describe()} "
                    f"to {sasl.target}: {cause}: {reply.error.splitlines()[0] if reply.error else ''}".rstrip(": ")
                )
            answer = sasl.evaluate(reply.challenge)
            if answer or not sasl.complete:
                sock.sendall(sasl_token(answer))
        if sasl.qop != "auth":
            self._sasl = sasl  # wrapped packets from here on, both ways
        else:
            sasl.dispose()
        return sasl.user or self.user

    def _read_reply(self, sock: socket.socket) -> SaslReply:
        data = b""
        while True:
            try:
                decoded = decode_reply(data)
            except SaslFrameError as exc:
                raise ConnectionFailed(f"{self.address}: {exc}") from None
            if not isinstance(decoded, int):
                return decoded[0]
            data += self._recv_exact(sock, decoded - len(data))

    def _send(self, sock: socket.socket, data: bytes) -> None:
        if self._sasl is not None:
            data = wrapped_packet(self._sasl.wrap(data))
        sock.sendall(data)

    def _recv_exact(self, sock: socket.socket, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionFailed(f"{self.address} closed the connection{self._first_answer_hint()}")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _read_exact(self, sock: socket.socket, size: int) -> bytes:
        if self._sasl is None:
            return self._recv_exact(sock, size)
        while len(self._unwrapped) < size:  # the next wrapped packet(s) from the server
            try:
                length = packet_length(self._recv_exact(sock, 4))
            except SaslFrameError as exc:
                raise FrameError(str(exc)) from None
            self._unwrapped += self._sasl.unwrap(self._recv_exact(sock, length))
        data, self._unwrapped = self._unwrapped[:size], self._unwrapped[size:]
        return data

    def _first_answer_hint(self) -> str:
        if self._answered or self.tls is not None or self.kerberos is not None:
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
                self._send(sock, encode_request(call_id, method, request, cell_block, int(self.timeout_s * 1000)))
                while True:
                    response = self._read_response(sock)
                    self._answered = True
                    if response.call_id in (call_id, CONNECTION_CALL_ID):
                        break  # a stale answer to an earlier, timed-out call is skipped
            except (OSError, FrameError, ConnectionFailed, KerberosError, SaslFrameError) as exc:
                self._close_locked()
                if isinstance(exc, ConnectionFailed | KerberosError):
                    raise
                what = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
                if isinstance(exc, ConnectionResetError):
                    what += self._first_answer_hint()
                raise ConnectionFailed(f"{self.address} {method}: {what}") from None
            exception = response.exception
            if exception is not None:
                if response.call_id == CONNECTION_CALL_ID:
                    self._close_locked()  # the server refused the connection itself and closes it
                    if self.kerberos is None and exception.exception_class_name == ACCESS_DENIED:
                        why = (
                            (exception.stack_trace or "")
                            .split("\n", 1)[0]
                            .replace(ACCESS_DENIED, "AccessDeniedException")
                        )
                        raise KerberosError(f"{self.address} demands Kerberos ({why}): {SIMPLE_REFUSED}")
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
        self._close_sasl()

    def _close_sasl(self) -> None:
        if self._sasl is not None:
            self._sasl.dispose()
            self._sasl, self._unwrapped = None, b""

    def close(self) -> None:
        """Close the socket (a later call reconnects)."""
        with self._lock:
            self._close_locked()
