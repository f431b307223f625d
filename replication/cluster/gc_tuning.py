"""Garbage-collector settings of a region-server process.

A region server keeps every unflushed cell in its memstore: millions of small long-lived objects
(Cells and their bytes) that hold no reference cycles. CPython's default thresholds (700, 10, 10) run
a young collection every 700 allocations and a full one each time the long-lived objects grew by a
quarter, and every full collection walks the whole memstore again. Measured with gc.callbacks on the
peer's servers while they applied 600k replicated cells: ~1.1 s of collections per server, 0.85 s of
it full ones, about a fifth of their busy time; with (20000, 20, 10) and the start-up objects frozen:
0.3-0.4 s and 0.015 s. Cycles are still collected, by the young collections and the rarer full ones.
(HBase tunes its region servers' JVM collector in hbase-env.sh; this is the Python counterpart.)
"""

from __future__ import annotations

import gc

from replication.config import Config, parse_gc_thresholds

GC_THRESHOLDS_KEY = "hbrep.regionserver.gc.thresholds"


def tune_gc(conf: Config) -> tuple[int, int, int]:
    """Freeze the objects allocated so far (imports, start-up) out of future collections and set the
    thresholds from ``hbrep.regionserver.gc.thresholds``; returns the thresholds set."""
    thresholds = parse_gc_thresholds(conf.get_str(GC_THRESHOLDS_KEY))
    gc.freeze()
    gc.set_threshold(*thresholds)
    return thresholds
