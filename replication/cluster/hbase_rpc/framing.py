"""Request and response frames of HBase's RPC (RPC.proto's header comment; ``ServerRpcConnection.processRequest``).

A request frame::

    int32 BE total length (of what follows)
    varint length | RequestHeader{call_id, method_name, request_param=true, cell_block_meta{length}, timeout}
    varint length | the request message (e.g. ReplicateWALEntryRequest)
    cell block    | cell_block_meta.length bytes (only when cell_block_meta is set)

A response frame mirrors it: int32 total length, a delimited ResponseHeader (``exception`` set when the
call failed; then no message follows), the delimited response message, an optional cell block.

The client side writes requests and reads responses (``encode_request``, ``decode_response``); hbrep's
HBase RPC listener does the opposite (``decode_request``, ``encode_response``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from google.protobuf.message import DecodeError, Message

from replication.proto import RPC_pb2
from replication.wal.varint import decode_varint, encode_varint

_I32 = struct.Struct(">i")
FRAME_LENGTH = _I32
CONNECTION_CALL_ID = 0xFFFFFFFF  # the server's call id -1 (uint32 on the wire): a connection-level error


class FrameError(ValueError):
    """Bytes that are not a well-formed HBase RPC request or response frame."""


def delimited(message: Message) -> bytes:
    """``Message#writeDelimitedTo``: varint length + the message bytes."""
    body = message.SerializeToString()
    return encode_varint(len(body)) + body


def encode_request(call_id: int, method: str, param: Message, cell_block: bytes = b"", timeout_ms: int = 0) -> bytes:
    """One whole request frame (length prefix included) calling ``method`` with ``param`` and ``cell_block``."""
    header = RPC_pb2.RequestHeader(call_id=call_id, method_name=method, request_param=True)
    if cell_block:
        header.cell_block_meta.length = len(cell_block)
    if timeout_ms > 0:
        header.timeout = timeout_ms
    body = delimited(header) + delimited(param) + cell_block
    return _I32.pack(len(body)) + body


@dataclass(frozen=True)
class Response:
    """A decoded response frame: its header, the response message bytes and the cell block (both maybe empty)."""

    header: RPC_pb2.ResponseHeader
    message: bytes
    cell_block: bytes

    @property
    def call_id(self) -> int:
        return self.header.call_id

    @property
    def exception(self) -> RPC_pb2.ExceptionResponse | None:
        return self.header.exception if self.header.HasField("exception") else None


def _delimited_at(frame: bytes, offset: int, what: str, side: str = "response") -> tuple[bytes, int]:
    try:
        head = decode_varint(frame, offset)
    except ValueError as exc:  # a varint longer than 10 bytes
        raise FrameError(f"{side} frame: bad length of its {what}: {exc}") from None
    if head is None:
        raise FrameError(f"{side} frame ends inside the length of its {what}")
    length, start = head
    if start + length > len(frame):
        raise FrameError(f"{side} {what} of {length} bytes runs past the frame ({len(frame)} bytes)")
    return frame[start : start + length], start + length


def decode_response(frame: bytes) -> Response:
    """The header, message and cell block of one response frame (``frame`` without its int32 length)."""
    raw_header, offset = _delimited_at(frame, 0, "ResponseHeader")
    header = RPC_pb2.ResponseHeader()
    try:
        header.ParseFromString(raw_header)
    except DecodeError as exc:
        raise FrameError(f"response header is not a ResponseHeader: {exc}") from None
    if header.HasField("exception") or offset == len(frame):
        return Response(header, b"", b"")
    message, offset = _delimited_at(frame, offset, "message")
    cell_block = b""
    if header.HasField("cell_block_meta"):
        cell_block = frame[offset : offset + header.cell_block_meta.length]
    return Response(header, message, cell_block)


@dataclass(frozen=True)
class Request:
    """A decoded request frame: its header, the request message bytes and the cell block (maybe empty)."""

    header: RPC_pb2.RequestHeader
    message: bytes
    cell_block: bytes

    @property
    def call_id(self) -> int:
        return self.header.call_id

    @property
    def method(self) -> str:
        return self.header.method_name


def decode_request(frame: bytes) -> Request:
    """The header, message and cell block of one request frame (``frame`` without its int32 length).

    Raises FrameError naming what is wrong (a truncated part, a header that does not parse, a cell
    block shorter than its ``cell_block_meta.length`` or bytes after it).
    """
    raw_header, offset = _delimited_at(frame, 0, "RequestHeader", "request")
    header = RPC_pb2.RequestHeader()
    try:
        header.ParseFromString(raw_header)
    except DecodeError as exc:
        raise FrameError(f"request header is not a RequestHeader: {exc}") from None
    if not header.request_param:
        if offset != len(frame):
            raise FrameError(f"request without a parameter has {len(frame) - offset} bytes after its header")
        return Request(header, b"", b"")
    message, offset = _delimited_at(frame, offset, "message", "request")
    block_length = header.cell_block_meta.length if header.HasField("cell_block_meta") else 0
    if len(frame) - offset != block_length:
        raise FrameError(
            f"request cell block is {len(frame) - offset} bytes, its header says {block_length} (call {header.call_id})"
        )
    return Request(header, message, frame[offset:])


def encode_response(
    call_id: int, message: Message | None = None, exception: RPC_pb2.ExceptionResponse | None = None
) -> bytes:
    """One whole response frame (length prefix included): ``exception`` alone when set, else the
    delimited ``message`` (``ServerCall.setResponse``; hbrep's responses carry no cell block)."""
    header = RPC_pb2.ResponseHeader(call_id=call_id)
    if exception is not None:
        header.exception.CopyFrom(exception)
        body = delimited(header)
    else:
        body = delimited(header) + (delimited(message) if message is not None else b"")
    return _I32.pack(len(body)) + body
