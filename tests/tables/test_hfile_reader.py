"""hbrep's HFile reader refuses what it cannot read with one HFileError line naming the file, whatever the
bytes (its agreement with HBase's own HFile writer is checked in tests/hbase_source/test_bulk_load_from_hbase.py)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replication.tables.hfile import TRAILER_MAGIC, TRAILER_SIZE_V3, HFileError, read_hfile


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=5000))
def test_any_bytes_are_cells_or_one_hfile_error(data):
    try:
        read_hfile(data, "f1")
    except HFileError as exc:
        assert "f1" in str(exc) and "\n" not in str(exc)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=TRAILER_SIZE_V3 - 12))
def test_a_version_3_trailer_with_garbage_is_one_hfile_error(body):
    trailer = (TRAILER_MAGIC + body).ljust(TRAILER_SIZE_V3 - 4, b"\x00") + struct.pack(">i", 3)
    try:
        read_hfile(b"x" * 100 + trailer, "f2")
    except HFileError as exc:
        assert "f2" in str(exc)


def test_other_versions_and_short_files_are_named():
    with pytest.raises(HFileError, match="f3 is not an HFile"):
        read_hfile(b"ab", "f3")
    with pytest.raises(HFileError, match="HFile version 2"):
        read_hfile(b"\x00" * 300 + struct.pack(">i", 2), "f4")
