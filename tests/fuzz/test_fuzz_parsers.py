"""Bounded fuzzing of hbrep's parsers (a few thousand inputs each): mutated real files and raw bytes.

Every input must end in a result or an ``HbrepError``: any other exception, a run over the deadline
(a hang) or a large memory growth fails. ``make fuzz`` runs the same targets for longer under atheris.
"""

from __future__ import annotations

import contextlib
import os
import resource

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from targets import TARGETS, seeds

from replication.errors import HbrepError

EXAMPLES = int(os.environ.get("HBREP_FUZZ_EXAMPLES", "2000"))
MEMORY_GROWTH_LIMIT_KB = 512 * 1024


@st.composite
def mutated(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    """A seed with a few byte-level mutations: flips, overwrites with edge values, cuts, inserts, splices."""
    data = bytearray(draw(st.sampled_from(corpus)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["flip", "set", "cut", "insert", "truncate", "splice", "varint"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and data:
            data[at] = draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x22]))
        elif op == "cut" and data:
            del data[at : at + draw(st.integers(1, 16))]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "truncate":
            del data[at:]
        elif op == "splice":
            other = draw(st.sampled_from(corpus))
            data[at:] = other[draw(st.integers(0, max(len(other) - 1, 0))) :]
        elif op == "varint":  # a huge length / count where a small one was
            data[at:at] = draw(st.sampled_from([b"\xff\xff\xff\xff\x0f", b"\xff" * 9 + b"\x01", b"\x80" * 5]))
    return bytes(data)


def inputs(target: str) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(seeds(target)), st.binary(max_size=512))


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_input_ends_in_a_result_or_an_hbrep_error(target: str) -> None:
    run = TARGETS[target]
    for seed in seeds(target):  # the seeds themselves parse
        run(seed)
    start_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    @settings(max_examples=EXAMPLES, deadline=2000, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(inputs(target))
    def one(data: bytes) -> None:
        with contextlib.suppress(HbrepError):
            run(data)

    one()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start_kb
    assert grown < MEMORY_GROWTH_LIMIT_KB, f"{target}: peak memory grew by {grown} KiB"


# Inputs the fuzzers found that raised something other than an HbrepError (fixed; kept as regressions).
FOUND = {
    "znode_value": [
        b"rs \x00\nrs1,1,1/1\nrs2,2,2",  # journal: a non-numeric 'rs' count (ValueError)
        b"rs 1\nrs --------------------1\nr\nrs 1",  # journal: the same, past a too-lenient first fix
        b"PBUF\n\x0b\x80s1,16020,1",  # cluster id: invalid UTF-8 in the protobuf string (TypeError)
        b'PBUF\n\x13zk1,zk2:2181:/hbase"\x06\n\x01k\x12\x01v*\x12\n\r\n\x07\x9c\x97fault\x12\x02t1\x12\x01f2'
        b"\x02ns8\x00@\x00X\x00",  # peer: a table namespace that is not UTF-8 (UnicodeDecodeError)
    ],
    "wal_file": [b"PWAL" + b"\xff" * 7 + b"\xef" * 33 + b"P\x08Pr*5org.apac\x8f\x97*5e."],  # header varint
}


@pytest.mark.parametrize(("target", "data"), [(t, d) for t, found in FOUND.items() for d in found])
def test_inputs_the_fuzzers_found_end_in_a_result_or_an_hbrep_error(target: str, data: bytes) -> None:
    with contextlib.suppress(HbrepError):  # znode_value keeps each parser's HbrepError to itself
        TARGETS[target](data)
