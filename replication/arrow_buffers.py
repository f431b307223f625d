"""Arrow arrays built from Python buffers, not from Python sequences.

``pa.array(list)`` (and ``RecordBatch.from_pylist``, ``pa.scalar``) first asks pandas whether the list is
array-like, and so imports pandas whenever it is installed: 0.2-0.7 s of CPU in a fresh process (measured in
a region server's first memstore flush and in each new Spark Python worker's ship result). Arrays made here
from their data and offsets buffers need no conversion and import nothing.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

import pyarrow as pa

MAX_BINARY_BYTES = (1 << 31) - 1  # binary()/string() have 32-bit offsets


def binary_array(values: list[bytes], arrow_type: pa.DataType | None = None) -> pa.Array:
    """One array of ``values`` (binary, or ``arrow_type`` such as ``pa.string()`` for UTF-8 bytes); their
    total length must stay within MAX_BINARY_BYTES (``binary_column`` splits larger ones)."""
    offsets = array("i", accumulate(map(len, values), initial=0))
    return pa.Array.from_buffers(
        arrow_type or pa.binary(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))]
    )


def binary_column(values: list[bytes]) -> pa.Array | pa.ChunkedArray:
    """``values`` as binary: one array, or a chunked array when they exceed MAX_BINARY_BYTES together."""
    if sum(map(len, values)) <= MAX_BINARY_BYTES:
        return binary_array(values)
    chunks, start, size = [], 0, 0
    for index, value in enumerate(values):
        if size + len(value) > MAX_BINARY_BYTES and index > start:
            chunks.append(binary_array(values[start:index]))
            start, size = index, 0
        size += len(value)
    chunks.append(binary_array(values[start:]))
    return pa.chunked_array(chunks, pa.binary())


def fixed_width_array(arrow_type: pa.DataType, typecode: str, values: list[int]) -> pa.Array:
    """``values`` as ``arrow_type`` (int64 with typecode "q", int32 with "i"), no nulls."""
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(array(typecode, values))])
