"""How hbrep's long-lived processes use the C heap: they keep the memory they freed, to use it again.

A region server's sink receives each replication request as one bytes object of up to tens of MB (a batch
of ``replication.source.nb.capacity`` entries), and a Spark Python worker builds one of the same size per
request it ships. glibc's malloc serves a block that large from a fresh ``mmap`` and gives it back with
``munmap`` when it is freed (its threshold adapts, but only up to 32 MB), and it trims freed memory at the
top of its heaps back to the kernel past 128 KB. Each new request then touches pages the kernel must map
and zero again: under perf, zeroing new pages (``clear_page_erms``) was 46% of the peer region server's CPU
during a 1 KB-row backlog (engine only, 512 MB). Like a JVM heap, which HBase's region servers keep at
their -Xmx, the memory is kept: a block under 32 MB comes from the heap, and freed memory stays in it up
to 1 GiB. Measured on the same backlog with warm servers, one run each (engine only, so noisy): the peer
region server's CPU was 2.96 CPU-s (230k page faults) with glibc's defaults, 1.78 (144k) with these
settings given as MALLOC_* environment variables, and 1.16 with this module.

``mallopt`` is glibc's; elsewhere (musl, macOS) nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20  # the largest value glibc accepts (HEAP_MAX_SIZE / 2 on 64-bit)
TRIM_THRESHOLD_BYTES = 1 << 30


def keep_freed_memory() -> bool:
    """Make this process's malloc serve blocks under MMAP_THRESHOLD_BYTES from its heap and keep up to
    TRIM_THRESHOLD_BYTES of freed memory instead of returning it to the kernel; True when glibc took both
    settings, False where there is no ``mallopt`` (nothing changed)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
