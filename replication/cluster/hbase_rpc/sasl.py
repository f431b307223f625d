"""The SASL exchange of HBase's RPC and the security layer it sets up (bytes only; GSSAPI is in ``gssapi.py``).

After a preamble whose auth byte is 81 (``AuthMethod.KERBEROS``, SASL mechanism GSSAPI), the client and the
server trade SASL tokens before the ConnectionHeader (HBase's ``NettyHBaseSaslRpcClientHandler``,
``SaslChallengeDecoder``; the server's ``ServerRpcConnection.doRawSaslReply``)::

    client → server   int32 BE length | token            (the initial response, then one per challenge)
    server → client   int32 status 0 (SUCCESS) | int32 length | challenge
                      int32 status 0 | int32 -88          (SaslUtil.SWITCH_TO_SIMPLE_AUTH: the server is SIMPLE)
                      int32 status 1 (ERROR) | int32 n | n bytes class | int32 m | m bytes message
                                                          (WritableUtils.writeString twice; then it closes)

When the negotiated quality of protection is ``auth-int`` or ``auth-conf`` (``hbase.rpc.protection``
integrity / privacy), everything after the exchange, the ConnectionHeader included, travels in SASL-wrapped
packets, each ``int32 BE length | wrapped bytes`` (``SaslWrapHandler`` / ``SaslUnwrapHandler``), in both
directions; the unwrapped bytes are the ordinary frames.

GSSAPI's security layer (RFC 4752 section 3.1): once the Kerberos context is set up, the server sends a
wrapped 4-byte word, the layers it offers (bit 1 none, 2 integrity, 4 privacy) and its largest receive
buffer; the client answers with one chosen layer, its own largest buffer and an authorization id
(empty: the authenticated principal itself, as HBase's Java client sends).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

AUTH_KERBEROS = 81  # AuthMethod.KERBEROS.code
SASL_SUCCESS, SASL_ERROR, SASL_FATAL = 0, 1, 2  # SaslStatus
SWITCH_TO_SIMPLE_AUTH = -88  # SaslUtil.SWITCH_TO_SIMPLE_AUTH
MAX_CHALLENGE = 1024 * 1024  # SaslChallengeDecoder.MAX_CHALLENGE_SIZE
MAX_WRAPPED = 256 * 1024 * 1024
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")

# hbase.rpc.protection's values and the SASL names (SaslUtil.QualityOfProtection)
PROTECTIONS = {"authentication": "auth", "integrity": "auth-int", "privacy": "auth-conf"}
LAYER_BITS = {"auth": 1, "auth-int": 2, "auth-conf": 4}
STRONGEST_FIRST = ("auth-conf", "auth-int", "auth")
CLIENT_MAX_BUFFER = 0xFFFFFF  # the most a 3-byte size can say: hbrep reads packets of any size


class SaslFrameError(ValueError):
    """Bytes of the SASL exchange or of a wrapped packet that are not what HBase's server sends."""


@dataclass(frozen=True)
class SaslReply:
    """One server message of the exchange: a challenge, the request to fall back to SIMPLE, or an error."""

    challenge: bytes = b""
    switch_to_simple: bool = False
    error_class: str = ""
    error: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error_class or self.error)


def sasl_token(token: bytes) -> bytes:
    """A client token as sent: int32 length + the token."""
    return _I32.pack(len(token)) + token


def decode_reply(data: bytes) -> tuple[SaslReply, int] | int:
    """The first server message in ``data`` and the bytes it took, or, when ``data`` holds only part of one,
    how many bytes (in all) are needed before it can say more; SaslFrameError for a status or a length
    HBase's client would refuse (``SaslChallengeDecoder``)."""
    if len(data) < 8:
        return 8
    (status,) = _I32.unpack_from(data, 0)
    if status == SASL_SUCCESS:
        (length,) = _I32.unpack_from(data, 4)
        if length == SWITCH_TO_SIMPLE_AUTH:
            return SaslReply(switch_to_simple=True), 8
        if length < 0 or length > MAX_CHALLENGE:
            raise SaslFrameError(f"SASL challenge length {length} is out of range (0..{MAX_CHALLENGE})")
        if len(data) < 8 + length:
            return 8 + length
        return SaslReply(challenge=bytes(data[8 : 8 + length])), 8 + length
    if status not in (SASL_ERROR, SASL_FATAL):
        raise SaslFrameError(f"SASL status {status} is not SUCCESS, ERROR or FATAL")
    strings: list[str] = []
    offset = 4
    for what in ("exception class", "exception message"):
        if len(data) < offset + 4:
            return offset + 4
        (length,) = _I32.unpack_from(data, offset)
        if length < -1 or length > MAX_CHALLENGE:  # WritableUtils.writeString: -1 is null
            raise SaslFrameError(f"SASL error's {what} length {length} is out of range")
        offset += 4
        if length > 0:
            if len(data) < offset + length:
                return offset + length
            strings.append(bytes(data[offset : offset + length]).decode("utf-8", "replace"))
            offset += length
        else:
            strings.append("")
    return SaslReply(error_class=strings[0], error=strings[1]), offset


def wrapped_packet(wrapped: bytes) -> bytes:
    """A wrapped packet as sent: int32 length + the wrapped bytes."""
    return _I32.pack(len(wrapped)) + wrapped


def packet_length(head: bytes) -> int:
    """The length a wrapped packet's 4-byte head announces; SaslFrameError when it is out of range."""
    (length,) = _I32.unpack(head)
    if not 0 < length <= MAX_WRAPPED:
        raise SaslFrameError(f"SASL-wrapped packet length {length} is out of range (1..{MAX_WRAPPED})")
    return length


def sasl_qops(protection: str) -> tuple[str, ...]:
    """The SASL qops of an ``hbase.rpc.protection`` value (``authentication``, ``integrity``, ``privacy``,
    comma-separated, or SASL's own ``auth``/``auth-int``/``auth-conf``), in the order given; ValueError naming
    the value otherwise (``SaslUtil.getQop``). Empty means ``auth``."""
    qops: list[str] = []
    for part in (p.strip().lower() for p in protection.split(",")):
        if not part:
            continue
        qop = PROTECTIONS.get(part, part if part in LAYER_BITS else None)
        if qop is None:
            raise ValueError(f"{part!r} is not one of authentication, integrity, privacy")
        if qop not in qops:
            qops.append(qop)
    return tuple(qops) or ("auth",)


@dataclass(frozen=True)
class SecurityLayerOffer:
    """The server's offer (the unwrapped 4-byte word): the qops it allows and its largest receive buffer."""

    qops: tuple[str, ...]
    max_buffer: int


def decode_offer(word: bytes) -> SecurityLayerOffer:
    """The offer in the server's unwrapped security-layer message; SaslFrameError unless it is 4 bytes."""
    if len(word) != 4:
        raise SaslFrameError(f"GSSAPI security layer offer is {len(word)} bytes, not 4")
    (value,) = _U32.unpack(word)
    bits = value >> 24
    return SecurityLayerOffer(tuple(q for q in STRONGEST_FIRST if bits & LAYER_BITS[q]), value & 0xFFFFFF)


def choose_qop(wanted: tuple[str, ...], offer: SecurityLayerOffer) -> str | None:
    """The strongest of ``wanted`` the server offers (as the JDK's GSSAPI client, strongest first), else None."""
    return next((q for q in STRONGEST_FIRST if q in wanted and q in offer.qops), None)


def security_layer_answer(qop: str, authorization_id: str = "") -> bytes:
    """The client's answer before wrapping: the chosen layer, its largest receive buffer (0 without a
    layer) and the authorization id."""
    size = 0 if qop == "auth" else CLIENT_MAX_BUFFER
    return _U32.pack(LAYER_BITS[qop] << 24 | size) + authorization_id.encode()


# -- the server's side (hbrep's HBase RPC listener, ``gssapi_server.py``) --------------------------------------
def challenge_reply(token: bytes) -> bytes:
    """A server challenge as sent: int32 SUCCESS | int32 length | token (``doRawSaslReply``)."""
    return _I32.pack(SASL_SUCCESS) + _I32.pack(len(token)) + token


def switch_to_simple_reply() -> bytes:
    """The answer of a SIMPLE server to a client that began SASL: int32 SUCCESS | int32 -88."""
    return _I32.pack(SASL_SUCCESS) + _I32.pack(SWITCH_TO_SIMPLE_AUTH)


def _writable_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _I32.pack(len(data)) + data


def error_reply(error_class: str, message: str) -> bytes:
    """A failed exchange as sent before the server closes: int32 ERROR | class | message
    (``WritableUtils.writeString`` each)."""
    return _I32.pack(SASL_ERROR) + _writable_string(error_class) + _writable_string(message)


def client_token_length(head: bytes) -> int:
    """The length a client token's 4-byte head announces; SaslFrameError when it is out of range."""
    (length,) = _I32.unpack(head)
    if not 0 <= length <= MAX_CHALLENGE:
        raise SaslFrameError(f"SASL token length {length} is out of range (0..{MAX_CHALLENGE})")
    return length


def security_layer_offer(qops: tuple[str, ...], max_buffer: int = CLIENT_MAX_BUFFER) -> bytes:
    """The server's offer before wrapping: the layers of ``qops`` and its largest receive buffer."""
    bits = 0
    for qop in qops:
        bits |= LAYER_BITS[qop]
    return _U32.pack(bits << 24 | (max_buffer & 0xFFFFFF))


@dataclass(frozen=True)
class SecurityLayerAnswer:
    """The client's unwrapped answer: the one layer it chose, its largest buffer, its authorization id."""

    qop: str
    max_buffer: int
    authorization_id: str


def decode_answer(data: bytes) -> SecurityLayerAnswer:
    """The client's answer to the offer; SaslFrameError unless it is 4 bytes (+ an id) choosing one layer."""
    if len(data) < 4:
        raise SaslFrameError(f"GSSAPI security layer answer is {len(data)} bytes, not at least 4")
    (value,) = _U32.unpack_from(data, 0)
    bits = value >> 24
    chosen = [qop for qop, bit in LAYER_BITS.items() if bits == bit]
    if not chosen:
        raise SaslFrameError(f"GSSAPI security layer answer chooses layers {bits:#x}, not exactly one")
    try:
        authorization_id = data[4:].decode("utf-8")
    except UnicodeDecodeError:
        raise SaslFrameError("GSSAPI authorization id is not UTF-8") from None
    return SecurityLayerAnswer(chosen[0], value & 0xFFFFFF, authorization_id)
