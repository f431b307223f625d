"""Peak memory of a ship task vs WAL size, at a fixed ``replication.source.size.capacity``: does it grow with
the WAL, and how many batch capacities does it hold.

A source with one region server writes one WAL of each size (no roll in between); a subprocess runs
``ship_queue`` for that queue (as a Spark Python worker would, with the worker's malloc settings:
process_memory.keep_freed_memory) and reports its RSS before shipping and
its RSS high-water mark while shipping (VmHWM, reset through /proc/self/clear_refs after the imports).
The batch capacity is fixed at 4 MB for every WAL size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from bench import _support as s

NAME = "ship_memory"
TITLE = "Ship task peak memory vs WAL size (fixed batch capacity)"
MB = 1 << 20
CAPACITY = 4 * MB

_CHILD = r"""
import json, sys, time
from replication.process_memory import keep_freed_memory
keep_freed_memory()  # as hbrep's Spark daemon sets it before it forks the Python workers (spark_daemon.py)
from replication.source.manifest import Manifest, read_text, write_text, ShipResult
from replication.source.replication_source import ship_queue
import replication.cluster.sink_client, replication.wal.reader, replication.source.endpoint  # imports first


def status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


manifest = Manifest.from_json(read_text(sys.argv[1]))
# Reset the RSS high-water mark (VmHWM) so the peak is the shipping's own, not the imports' (which
# allocate and free more than a ship task ever holds); ru_maxrss cannot be reset.
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status_kb("VmRSS")
t0 = time.monotonic()
results = [ship_queue(manifest, q) for q in manifest.queues]
elapsed = time.monotonic() - t0
peak = status_kb("VmHWM")
write_text(sys.argv[2], ShipResult(manifest.cycle_id, results).to_json())
print(json.dumps({"before_kb": before, "peak_kb": peak, "seconds": elapsed,
                  "status": [r.status for r in results],
                  "bytes": sum(int(r.metrics.get("logReadInBytes", 0)) for r in results),
                  "batches": sum(int(r.metrics.get("shippedBatches", 0)) for r in results)}))
"""


def _ship_in_subprocess(pair) -> dict:
    from replication.source.cycle import commit_step, snapshot_step
    from replication.source.manifest import result_path_for
    from replication.zk.client import connected

    with connected(pair.source_key) as zk:
        outcome = snapshot_step(zk, pair.source_key, pair.conf, owner="bench-memory")
        result_path = result_path_for(outcome.manifest_path)
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, outcome.manifest_path, result_path],
            capture_output=True,
            text=True,
            cwd=str(s.REPO),
        )
        if proc.returncode != 0:
            raise RuntimeError(f"ship subprocess failed: {proc.stderr.strip().splitlines()[-1:]}")
        measured = json.loads(proc.stdout.strip().splitlines()[-1])
        commit_step(zk, pair.source_key, pair.conf, outcome.manifest_path, owner="bench-memory")
    if any(st != "ok" for st in measured["status"]):
        raise RuntimeError(f"ship task status {measured['status']}")
    return measured


def run(quick: bool) -> dict:
    """Write a WAL of each size to a 1-server source, ship it in a subprocess, record peak RSS."""
    # the smallest WAL fits in one batch: its growth is the ship task's fixed cost (modules imported on
    # first use, the gRPC channel, one batch and its request); the larger ones show what the WAL adds
    sizes = [4, 32] if quick else [4, 64, 256]
    overrides = {
        "replication.source.size.capacity": str(CAPACITY),
        "hbase.regionserver.hlog.blocksize": str(4096 * MB),  # no size roll during the write
    }
    value_size = 1000
    measured: dict[int, dict] = {}
    with s.replication_pair(source_rs=1, peer_rs=2, overrides=overrides) as pair:
        server = pair.source.live_servers()[0]
        for size in sizes:
            with pair.source.client() as client:
                client.roll_wal(server)  # a fresh WAL for this size
            s.load(pair, size * MB // (value_size + 22), threads=2, batch=500, value_size=value_size, prefix=b"m")
            wal_dir = os.path.join(pair.source.root, "WALs", server)
            newest = max((os.path.join(wal_dir, n) for n in os.listdir(wal_dir)), key=os.path.getmtime)
            m = _ship_in_subprocess(pair)
            m["wal_mb"] = os.path.getsize(newest) / MB
            measured[size] = m
            time.sleep(0.5)
    figures: dict[str, float | int] = {"replication.source.size.capacity (MB)": CAPACITY / MB}
    for size, m in measured.items():
        figures[f"{size} MB WAL: bytes read (MB)"] = m["bytes"] / MB
        figures[f"{size} MB WAL: batches shipped"] = m["batches"]
        figures[f"{size} MB WAL: RSS before shipping (MB)"] = m["before_kb"] / 1024
        figures[f"{size} MB WAL: peak RSS of the ship task (MB)"] = m["peak_kb"] / 1024
        figures[f"{size} MB WAL: peak growth while shipping (MB)"] = (m["peak_kb"] - m["before_kb"]) / 1024
        figures[f"{size} MB WAL: ship time (s)"] = m["seconds"]

    def growth(size: int) -> float:
        return max(1, measured[size]["peak_kb"] - measured[size]["before_kb"]) / 1024

    tiny, mid, big = sizes[0], sizes[-2], sizes[-1]
    ratios = {
        f"WAL size {big} MB / {mid} MB": big / mid,
        f"peak growth {big} MB / {mid} MB WAL": growth(big) / growth(mid),
        f"peak growth of the {big} MB WAL beyond the {tiny} MB one's / batch capacity": (growth(big) - growth(tiny))
        / (CAPACITY / MB),
        f"peak growth while shipping / batch capacity ({big} MB WAL)": growth(big) / (CAPACITY / MB),
    }
    plot = s.plot_series(
        "ship_memory_vs_wal.png",
        f"Ship task peak RSS vs WAL size (batch capacity {CAPACITY // MB} MB)",
        "WAL size (MB)",
        "MB",
        {
            "peak RSS": ([float(x) for x in sizes], [measured[x]["peak_kb"] / 1024 for x in sizes]),
            "WAL size (what an unbounded reader would hold)": ([float(x) for x in sizes], [float(x) for x in sizes]),
            "peak growth while shipping": (
                [float(x) for x in sizes],
                [(measured[x]["peak_kb"] - measured[x]["before_kb"]) / 1024 for x in sizes],
            ),
        },
    )
    return {
        "title": TITLE,
        "command": "make bench (bench/ship_memory.py)",
        "figures": figures,
        "ratios": ratios,
        "plots": [{"path": plot, "caption": "peak RSS of one ship task vs the WAL size it ships"}],
        "notes": [
            "One source region server (so one queue, one WAL per size; the WAL is rolled before each size "
            f"and never rolled by size during the write), {value_size}-byte values, peer B with 2 region "
            "servers. The ship task is ship_queue in a fresh Python process (what a Spark Python worker "
            "runs); RSS before = VmRSS after imports and manifest load, peak = VmHWM after the queue is "
            "shipped, the high-water mark having been reset (/proc/self/clear_refs) after the imports, "
            "whose transient peak is not the ship task's. "
            f"What the data shows: the growth does not follow the WAL ({big / mid:.0f}x the WAL, "
            f"{growth(big) / growth(mid):.2f}x the growth from {mid} to {big} MB) but it is not bounded by the "
            f"batch capacity either: {growth(big):.0f} MB for the {big} MB WAL, "
            f"{growth(big) / (CAPACITY / MB):.0f}x the {CAPACITY // MB} MB capacity; the {tiny} MB WAL (one "
            f"batch) already grows {growth(tiny):.0f} MB ({growth(tiny) / (CAPACITY / MB):.0f}x: the ship "
            "task's fixed cost: modules imported on first use, the gRPC channel, one batch and its request), "
            f"and a larger WAL adds {growth(big) - growth(tiny):.0f} MB "
            f"({(growth(big) - growth(tiny)) / (CAPACITY / MB):.0f}x). "
            "It is not bounded to a few capacities, and why: a task holds up to ~3 batches at once (the reader "
            "thread runs replication.source.nb.batches (1) batch ahead of the shipper, as HBase's "
            "reader/shipper queue: one shipping, one queued, one being read), the reader's 8 MB read chunk and "
            "its refill, and the request being built (cell block join, protobuf message, serialization: three "
            "copies of a batch), i.e. about 3 + 4 + 3 = 10 capacities of Python objects at 4 MB "
            "(a by-hand tracemalloc run on a 64 MB WAL: Python allocations peaked at 38 MB, ~9.5 capacities); "
            "the rest is glibc's heap. The task runs with the Spark workers' malloc settings "
            "(process_memory.keep_freed_memory: blocks under 32 MB come from the heap, and freed memory stays "
            "in it), so the heap keeps the most the task held at once and reuses it for the next batches "
            f"({growth(big) / growth(mid):.2f}x the growth from {mid} to {big} MB). With glibc's defaults "
            "(before the workers set it), this bench measured a growth of 60 MB for the 64 MB WAL and 71 MB "
            "for the 256 MB one (bench/results/ship_memory.json at 33c0baa, code of 74d18ea); by hand, "
            "MALLOC_MMAP_THRESHOLD_=131072 had cut the growth by 14-23 MB on a 128 MB WAL, at the price of a "
            "fresh mmap and its page faults for every batch-sized block, which the workers now avoid "
            "(process_memory.py). Bounding it nearer one capacity would take a reader that decodes in place from "
            "one reused buffer and a request serialized straight from the batch, which hbrep does not have; "
            "what the data supports is only that the growth levels off as the WAL grows (one capacity "
            "measured). Passes "
            "before 2026-11-23 read "
            "ru_maxrss, whose import-time peak hid all of this (growth 0).",
        ],
    }
