"""Arrow arrays from buffers: the same arrays as pyarrow's conversion, without importing pandas."""

import subprocess
import sys

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from replication import arrow_buffers


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=20), max_size=30))
def test_binary_array_equals_the_converted_array(values):
    assert arrow_buffers.binary_array(values).equals(pa.array(values, pa.binary()))


@given(st.lists(st.text(max_size=10), max_size=20))
def test_a_string_array_from_utf8_bytes(values):
    built = arrow_buffers.binary_array([v.encode() for v in values], pa.string())
    assert built.to_pylist() == values


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=20))
def test_fixed_width_int64(values):
    assert arrow_buffers.fixed_width_array(pa.int64(), "q", values).to_pylist() == values


def test_a_column_over_the_binary_limit_is_chunked(monkeypatch):
    monkeypatch.setattr(arrow_buffers, "MAX_BINARY_BYTES", 10)
    column = arrow_buffers.binary_column([b"v" * i for i in range(8)])
    assert [sum(map(len, chunk.to_pylist())) for chunk in column.chunks] == [10, 5, 6, 7]
    assert column.to_pylist() == [b"v" * i for i in range(8)]


def test_no_array_built_here_imports_pandas():
    """The reason the module exists: pyarrow's own conversion imports pandas (the control proves it can)."""
    probe = (
        "import sys, pyarrow as pa\n"
        "from replication import arrow_buffers as ab\n"
        "ab.binary_column([b'x']); ab.binary_array([b'y'], pa.string()); ab.fixed_width_array(pa.int64(), 'q', [1])\n"
        "clean = 'pandas' not in sys.modules\n"
        "pa.array([b'x'])\n"
        "print(clean, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
