"""HBaseRpcServer: the server side of HBase's RPC in an hbrep region server, for ``ReplicateWALEntry`` only.

It lets a real HBase cluster replicate natively into an hbrep cluster: HBase's own
``HBaseInterClusterReplicationEndpoint`` connects to a sink region server it found in the peer's
ZooKeeper and calls ``AdminService.ReplicateWALEntry`` over HBase's RPC (HBase 2.6.1:
``NettyRpcConnection`` and ``NettyRpcDuplexHandler`` on the client, ``ServerRpcConnection`` on the
server). One connection, as this listener reads it:

0. with TLS (``hbase.server.netty.tls.enabled``, ``tls.server_context``) a TLS handshake first, as HBase's
   Netty server; a client whose first byte is not a TLS record is served in plain text only while
   ``hbase.server.netty.tls.supportplaintext`` is true (HBase's ``OptionalSslHandler`` looks the same way);
1. the 6-byte preamble ``HBas`` | version 0 | auth 80 (SIMPLE) or 81 (KERBEROS). With Kerberos on the listener
   (``hbase.security.authentication=kerberos``, ``gssapi_server.py``) a KERBEROS client goes through the SASL
   GSSAPI exchange (``sasl.py``) and, after integrity or privacy is agreed, everything from step 2 on travels
   in SASL-wrapped packets both ways; a SIMPLE client is refused (AccessDeniedException "Authentication is
   required") unless ``hbase.ipc.server.fallback-to-simple-auth-allowed``. Under privacy with
   ``hbase.rpc.crypto.encryption.aes.enabled``, a client naming AES in its ConnectionHeader gets a
   ConnectionHeaderResponse with new keys and HBase's CryptoAES wraps from then on (``crypto_aes.py``).
   Without Kerberos, a KERBEROS client is told to switch to SIMPLE and its first token is dropped, as HBase's
   SIMPLE server does; DIGEST (token) clients are refused;
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
import time
from collections.abc import Callable
from contextlib import suppress

from google.protobuf.message import DecodeError

from replication.cluster.hbase_rpc.cell_block import CODECS
from replication.cluster.hbase_rpc.crypto_aes import TRANSFORMATION, CryptoAes, server_cipher_metas
from replication.cluster.hbase_rpc.framing import (
    CONNECTION_CALL_ID,
    FRAME_LENGTH,
    FrameError,
    decode_request,
    encode_response,
)
from replication.cluster.hbase_rpc.gssapi_server import SASL_EXCEPTION, GssapiServer, ListenerKerberos, SaslRefused
from replication.cluster.hbase_rpc.preamble import ADMIN_SERVICE, BadPreamble, parse_preamble
from replication.cluster.hbase_rpc.remote_errors import IO_EXCEPTION, exception_response
from replication.cluster.hbase_rpc.sasl import (
    AUTH_KERBEROS,
    SaslFrameError,
    challenge_reply,
    client_token_length,
    error_reply,
    packet_length,
    switch_to_simple_reply,
    wrapped_packet,
)
from replication.errors import HbrepError
from replication.proto import Admin_pb2, RPC_pb2

LOG = logging.getLogger(__name__)

REPLICATE_WAL_ENTRY = "ReplicateWALEntry"
FATAL_CONNECTION = "org.apache.hadoop.hbase.ipc.FatalConnectionException"
UNKNOWN_SERVICE = "org.apache.hadoop.hbase.ipc.UnknownServiceException"
UNSUPPORTED_CODEC = "org.apache.hadoop.hbase.ipc.UnsupportedCellCodecException"
UNSUPPORTED_COMPRESSOR = "org.apache.hadoop.hbase.ipc.UnsupportedCompressionCodecException"
UNSUPPORTED_OPERATION = "java.lang.UnsupportedOperationException"
ACCESS_DENIED = "org.apache.hadoop.hbase.security.AccessDeniedException"
MAX_CONNECTION_HEADER = 64 * 1024
TLS_HANDSHAKE_RECORD = 0x16  # the first byte of a TLS ClientHello
TLS_HANDSHAKE_TIMEOUT_S = 30.0
REFUSAL_LINGER_S = 2.0  # how long a refused connection reads what its client still sends (_drain_before_close)

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


class _Channel:
    """The bytes of one connection after its preamble: as they come, or in SASL-wrapped packets when the client
    and this listener agreed on integrity or privacy (``sasl.py``)."""

    def __init__(self, sock: socket.socket, sasl: GssapiServer | CryptoAes | None = None):
        self.sock, self.sasl = sock, sasl
        self._unwrapped = b""

    def switch_to_aes(self, aes: CryptoAes) -> None:
        """Wrap with HBase's CryptoAES from the next packet on (the client does once it has the keys)."""
        self.sasl, self._unwrapped = aes, b""

    def read_exact(self, size: int) -> bytes | None:
        """``size`` bytes (unwrapped), or None when the client closed the connection first."""
        if self.sasl is None:
            return _read_exact(self.sock, size)
        while len(self._unwrapped) < size:
            head = _read_exact(self.sock, 4)
            packet = None if head is None else _read_exact(self.sock, packet_length(head))
            if packet is None:
                return None
            self._unwrapped += self.sasl.unwrap(packet)
        data, self._unwrapped = self._unwrapped[:size], self._unwrapped[size:]
        return data

    def sendall(self, data: bytes) -> None:
        """``data`` to the client (in one wrapped packet when a security layer is on)."""
        self.sock.sendall(data if self.sasl is None else wrapped_packet(self.sasl.wrap(data)))


def _drain_before_close(sock: socket.socket, within_s: float = REFUSAL_LINGER_S) -> None:
    """After a refusal's answer: half-close, then read what the client still sends until it closes or ``within_s``
    passed. Closing a socket with unread input makes the kernel answer with a reset, and a client still writing its
    header or first call (it does not wait for the preamble's answer) then gets "broken pipe" instead of reading
    the refusal (seen once in a loaded run: a SIMPLE client at a Kerberos listener)."""
    sock.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + within_s
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        if not sock.recv(1 << 16):
            return


class _Connection(socketserver.BaseRequestHandler):
    server: _Listener
    channel: _Channel | None = None

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
            with suppress(OSError, SaslRefused):
                (self.channel or _Channel(sock)).sendall(encode_response(CONNECTION_CALL_ID, exception=error))
                _drain_before_close(sock)
        except (OSError, FrameError, SaslFrameError, SaslRefused) as exc:
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

    def _open(self, sock: socket.socket, owner: HBaseRpcServer) -> _Channel | None:
        """The preamble, then the SASL exchange when the client asks for Kerberos: the channel the
        ConnectionHeader comes on, or None when the client went away or failed to authenticate (logged)."""
        start = _read_exact(sock, 6)
        if start is None:
            return None
        try:
            auth = parse_preamble(start)
        except BadPreamble as exc:
            raise ConnectionRefused(FATAL_CONNECTION, str(exc)) from None
        if auth == AUTH_KERBEROS and owner.kerberos is None:
            # a SIMPLE server, as HBase's ServerRpcConnection.processPreamble: tell the client to fall back to
            # SIMPLE and drop the token it already sent (the client goes on only if its fallback is allowed)
            sock.sendall(switch_to_simple_reply())
            head = _read_exact(sock, 4)
            if head is None or _read_exact(sock, client_token_length(head)) is None:
                return None
            return _Channel(sock)
        if auth == AUTH_KERBEROS:
            sasl = self._authenticate(sock, owner)
            if sasl is None:
                return None
            return _Channel(sock, sasl if sasl.qop != "auth" else None)
        if owner.kerberos is not None and not owner.kerberos.fallback_to_simple:
            raise ConnectionRefused(ACCESS_DENIED, "Authentication is required")
        return _Channel(sock)

    def _authenticate(self, sock: socket.socket, owner: HBaseRpcServer) -> GssapiServer | None:
        """The SASL GSSAPI exchange (``gssapi_server.py``); a failure is answered with HBase's SASL error reply,
        logged in one line, and gives None."""
        assert owner.kerberos is not None
        sasl = GssapiServer(owner.kerberos, owner.acceptor_credentials)
        sock.settimeout(TLS_HANDSHAKE_TIMEOUT_S)
        try:
            while not sasl.complete:
                head = _read_exact(sock, 4)
                length = None if head is None else client_token_length(head)
                token = None if length is None else _read_exact(sock, length)
                if token is None:
                    return None
                answer = sasl.evaluate(token)
                if answer is not None:
                    sock.sendall(challenge_reply(answer))
        except (SaslRefused, SaslFrameError) as exc:
            LOG.warning("HBase RPC connection from %s: Kerberos authentication failed: %s", self.client_address, exc)
            with suppress(OSError):
                sock.sendall(error_reply(SASL_EXCEPTION, str(exc)))
            return None
        sock.settimeout(None)
        LOG.info("HBase RPC connection from %s authenticated as %s (%s)", self.client_address, sasl.user, sasl.qop)
        return sasl

    def _serve(self, sock: socket.socket, owner: HBaseRpcServer) -> None:
        channel = self.channel = self._open(sock, owner)
        if channel is None:
            return
        head = channel.read_exact(FRAME_LENGTH.size)
        if head is None:
            return
        (length,) = FRAME_LENGTH.unpack(head)
        if not 0 <= length <= MAX_CONNECTION_HEADER:
            raise ConnectionRefused(FATAL_CONNECTION, f"connection header length {length} is out of range")
        raw = channel.read_exact(length)
        if raw is None:
            return
        header = RPC_pb2.ConnectionHeader()
        try:
            header.ParseFromString(raw)
        except DecodeError as exc:
            raise ConnectionRefused(FATAL_CONNECTION, f"connection header does not parse: {exc}") from None
        check_connection_header(header)
        if header.rpc_crypto_cipher_transformation and self._aes_agreed(channel, owner):
            self._send_cipher(channel, header.rpc_crypto_cipher_transformation)
        while not owner.stopped.is_set():
            head = channel.read_exact(FRAME_LENGTH.size)
            if head is None:
                return
            (length,) = FRAME_LENGTH.unpack(head)
            if not 0 < length <= owner.max_request:
                limit = f"hbase.ipc.max.request.size {owner.max_request}"
                raise ConnectionRefused(FATAL_CONNECTION, f"request of {length} bytes is out of range ({limit})")
            frame = channel.read_exact(length)
            if frame is None:
                return
            request = decode_request(frame)
            channel.sendall(owner.answer(request.call_id, request.method, request.message, request.cell_block))

    @staticmethod
    def _aes_agreed(channel: _Channel, owner: HBaseRpcServer) -> bool:
        """Whether HBase's CryptoAES replaces the GSS wrap: privacy agreed and the listener has
        ``hbase.rpc.crypto.encryption.aes.enabled`` (else the client's cipher is ignored, as HBase's server does)."""
        sasl = channel.sasl
        return bool(owner.kerberos and owner.kerberos.crypto_aes and isinstance(sasl, GssapiServer)) and (
            sasl.qop == "auth-conf"
        )

    @staticmethod
    def _send_cipher(channel: _Channel, transformation: str) -> None:
        """The ConnectionHeaderResponse with new AES keys, still GSS-wrapped; AES from then on
        (``ServerRpcConnection.setupCryptoCipher`` and ``responseConnectionHeader``)."""
        if transformation.upper() != TRANSFORMATION.upper():
            raise ConnectionRefused(FATAL_CONNECTION, f"cipher {transformation!r} is not supported ({TRANSFORMATION})")
        own, client = server_cipher_metas()
        response = RPC_pb2.ConnectionHeaderResponse(crypto_cipher_meta=client).SerializeToString()
        channel.sendall(FRAME_LENGTH.pack(len(response)) + response)
        channel.switch_to_aes(CryptoAes(own))
        LOG.info("HBase RPC connection: HBase's CryptoAES (%s) wraps the calls from here on", TRANSFORMATION)


class _Listener(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = False
    owner: HBaseRpcServer


class HBaseRpcServer:
    """An HBase RPC listener on ``host:port`` (0 = a free port) whose ReplicateWALEntry calls go to ``replicate``.

    ``advertised_host`` names this server in the exceptions it returns; ``tls`` serves TLS (see step 0 above);
    ``kerberos`` demands SASL GSSAPI of the clients (step 1 above); KerberosError when its keytab cannot serve.
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
        kerberos: ListenerKerberos | None = None,
    ):
        self.replicate = replicate
        self.kerberos = kerberos  # SASL GSSAPI on this listener (gssapi_server.py); None: SIMPLE only
        # read once, here: a keytab without the principal's key stops the server at start, not at the first client
        self.acceptor_credentials = kerberos.credentials() if kerberos is not None else None
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
