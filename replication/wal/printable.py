"""Bytes as HBase prints them: ``Bytes.toStringBinary`` (WALPrettyPrinter, the shell, HBase's logs).

Letters, digits and `` `~!@#$%^&*()-_=+[]{}|;:'",.<>/?`` and the space stay as they are; every other
byte (a backslash too) becomes ``\\xHH`` with upper-case hex, so the text maps back to the bytes.
"""

from __future__ import annotations

import re
import string

_KEPT = frozenset((string.ascii_letters + string.digits + " `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?").encode())
_TABLE = [chr(b) if b in _KEPT else f"\\x{b:02X}" for b in range(256)]
_ESCAPE = re.compile(rb"\\x([0-9A-Fa-f]{2})")


def to_string_binary(data: bytes) -> str:
    """``Bytes.toStringBinary(data)``: printable ASCII kept, everything else as ``\\xHH``."""
    return "".join(_TABLE[b] for b in data)


def from_string_binary(text: str) -> bytes:
    """``Bytes.toBytesBinary(text)``: the inverse of :func:`to_string_binary`."""
    return _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("latin-1"))
