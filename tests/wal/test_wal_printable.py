"""Bytes.toStringBinary, as HBase prints row keys and values."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replication.wal.printable import from_string_binary, to_string_binary


def test_printable_bytes_stay_and_others_are_upper_case_hex():
    assert to_string_binary(b"row-1 a:b") == "row-1 a:b"
    assert to_string_binary(b"\x00\x0a\xff\\\x7f") == "\\x00\\x0A\\xFF\\x5C\\x7F"
    assert to_string_binary(b"PBUF\x08") == "PBUF\\x08"


@given(st.binary(max_size=64))
def test_round_trip(data: bytes):
    assert from_string_binary(to_string_binary(data)) == data
