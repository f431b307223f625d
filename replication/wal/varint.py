"""Protobuf base-128 varints, as used for the length prefix of ``writeDelimitedTo``."""

from __future__ import annotations


def encode_varint(value: int) -> bytes:
    """The unsigned varint encoding of ``value`` (>= 0)."""
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(buf: bytes | memoryview, offset: int, limit: int | None = None) -> tuple[int, int] | None:
    """(value, offset after it) of the varint at ``offset``, or None when ``buf`` (or ``limit``) ends first.

    Raises ValueError for a varint longer than 10 bytes.
    """
    end = len(buf) if limit is None else min(limit, len(buf))
    if offset < end:
        b = buf[offset]
        if b < 0x80:
            return b, offset + 1
    result = 0
    shift = 0
    pos = offset
    while pos < end:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ValueError(f"varint at offset {offset} is longer than 10 bytes")
    return None


def delimited(message_bytes: bytes) -> bytes:
    """``message_bytes`` with its varint32 length in front (protobuf ``writeDelimitedTo``)."""
    return encode_varint(len(message_bytes)) + message_bytes
