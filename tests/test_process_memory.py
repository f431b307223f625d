"""keep_freed_memory: a process that frees and allocates again tens of MB keeps the pages (real processes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replication.process_memory import keep_freed_memory

# Rounds of 8 blocks of 4 MB written (so their pages are touched), then freed: what a sink does per request.
_ROUNDS = """
import json, resource, sys
from replication.process_memory import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else None
faults = []
for _ in range(6):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    blocks = [b"x" * (4 << 20) for _ in range(8)]
    del blocks
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps({"kept": kept, "faults": faults}))
"""


def _faults(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _ROUNDS, mode], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_freed_memory_is_used_again_instead_of_being_mapped_again():
    default, kept = _faults("default"), _faults("keep")
    assert kept["kept"] is True
    pages = 8 * (4 << 20) // 4096  # the pages one round touches
    # by default the freed 32 MB go back to the kernel and every round faults them in again
    assert min(default["faults"][1:]) > pages // 2
    # kept: after the first round the heap already has them
    assert max(kept["faults"][1:]) < pages // 20


def test_it_says_whether_the_settings_were_taken():
    assert keep_freed_memory() is sys.platform.startswith("linux")
