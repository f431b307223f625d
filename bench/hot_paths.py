"""The two hot paths of the end-to-end path found with pyinstrument (bench/profile_ship.py), before and
after their optimization, measured in the same run: the baseline ``replication`` package is extracted
from git (commit BASELINE) into a temp dir and each path is timed in a child process per tree,
alternating baseline / current to share the machine's noise.

1. Sink apply (replication/cluster/sink.py, service.py, regionserver.py, wal_group.py, region.py): every
   shipped cell was decoded, then encoded again for the owner hop and again for the WAL append, and
   the owner decoded and re-encoded it once more; routing sorted the server list per cell; memstore
   sizing and family checks cost a call per cell. Now the shipped cell bytes are forwarded as they are
   (to the owner and into the WAL) whenever they are exactly the cells' encoding, with one owner lookup
   per row and one family check per family. Since then the owners' shares are forwarded on a pool
   while the receiving server writes its own share (they were sequential); that shows in the wall
   figure, not in the CPU one.
   Then the request decoding inside it (replication/wal/cell_codec.py, model.py): the Cell
   dataclass is frozen, and its generated __init__ assigned each field through object.__setattr__
   (1.5 µs a Cell, now 0.5 µs through the slot descriptors); the cells' places in the cell block were
   found by a second pass over the decoded cells, now recorded while decoding; the size field was
   read twice per cell. Since 3c43ad6 the sink cuts the cell block into Arrow columns instead
   (replication/wal/cell_columns.py: strided copies for a run of cells of one layout).
2. The filter loop (replication/source/filters.py): a method call per cell for the family decision and
   memoryview slices compared as row keys.
3. The collector of a region-server process (replication/cluster/gc_tuning.py): full collections walked
   the whole memstore again as it grew; the same tree is timed with CPython's defaults and with the
   region-server settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

NAME = "hot_paths"
TITLE = "Hot paths of the ship path: before / after optimization (same run)"
BASELINE = "3a254dc6eada0256c4f8e383a89a8ae38af478b0"  # main before the optimization commit
REPO = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().parent / "_hot_child.py"


def _extract_baseline(dest: str) -> str:
    archive = os.path.join(dest, "baseline.tar")
    with open(archive, "wb") as out:
        subprocess.run(["git", "archive", BASELINE, "replication"], cwd=REPO, stdout=out, check=True)
    tree = os.path.join(dest, "baseline")
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def _child(mode: str, tree: str, work: str, extra_env: dict[str, str] | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": tree, **(extra_env or {})}
    os.makedirs(work, exist_ok=True)
    proc = subprocess.run([sys.executable, str(CHILD), mode, work], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"hot path child {mode} ({tree}) failed: {proc.stderr.strip().splitlines()[-1:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if os.path.realpath(result["package"]) != os.path.realpath(tree):
        raise RuntimeError(f"child imported replication from {result['package']}, not {tree}")
    return result


def run(quick: bool) -> dict:
    """Time both hot paths for the baseline and current trees (1 round quick, 3 full); best of each."""
    rounds = 1 if quick else 3
    best: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="hbrep-hot-") as tmp:
        trees = {"before": _extract_baseline(tmp), "after": str(REPO)}
        for i in range(rounds):
            for mode in ("sink", "decode", "filter"):
                for label, tree in trees.items():
                    r = _child(mode, tree, os.path.join(tmp, f"{mode}-{label}-{i}"))
                    best[(mode, label)] = max(best.get((mode, label), 0.0), r["cells_per_s"])
                    if mode == "sink":
                        key = ("sink_cpu", label)
                        best[key] = max(best.get(key, 0.0), r["cells_per_cpu_s"])
            # 3. the collector of a region-server process: current tree, CPython's defaults vs tune_gc
            for label, setting in (("before", "default"), ("after", "tuned")):
                r = _child("memstore", str(REPO), os.path.join(tmp, f"gc-{label}-{i}"), {"HOT_GC": setting})
                best[("memstore", label)] = max(best.get(("memstore", label), 0.0), r["cells_per_s"])
                gc_key = ("gc_s", label)
                best[gc_key] = min(best.get(gc_key, float("inf")), r["gc_seconds"])
    figures = {
        "sink apply, before (cells/s, wall)": best[("sink", "before")],
        "sink apply, after (cells/s, wall)": best[("sink", "after")],
        "sink apply, before (cells per CPU second of both peer servers)": best[("sink_cpu", "before")],
        "sink apply, after (cells per CPU second of both peer servers)": best[("sink_cpu", "after")],
        "sink request decoding, before (cells per CPU second)": best[("decode", "before")],
        "sink request decoding, after (cells per CPU second)": best[("decode", "after")],
        "filter loop, before (cells per CPU second)": best[("filter", "before")],
        "filter loop, after (cells per CPU second)": best[("filter", "after")],
        "memstore fill, gc defaults (cells per CPU second)": best[("memstore", "before")],
        "memstore fill, region-server gc settings (cells per CPU second)": best[("memstore", "after")],
        "memstore fill of 800k cells, time in collections, gc defaults (s)": best[("gc_s", "before")],
        "memstore fill of 800k cells, time in collections, region-server gc settings (s)": best[("gc_s", "after")],
        "rounds (best of)": rounds,
    }
    ratios = {
        "sink apply: after / before (CPU of both peer servers)": best[("sink_cpu", "after")]
        / best[("sink_cpu", "before")],
        "sink apply: after / before (wall)": best[("sink", "after")] / best[("sink", "before")],
        "sink request decoding: after / before": best[("decode", "after")] / best[("decode", "before")],
        "filter loop: after / before": best[("filter", "after")] / best[("filter", "before")],
        "memstore fill: region-server gc settings / gc defaults": best[("memstore", "after")]
        / best[("memstore", "before")],
    }
    return {
        "title": TITLE,
        "command": "make bench (bench/hot_paths.py)",
        "figures": figures,
        "ratios": ratios,
        "notes": [
            "Found with pyinstrument on the end-to-end path (bench/profile_ship.py; text profiles "
            "bench/results/profile_*_before.txt and *_after.txt): shipping 40,000 rows spent ~2/3 of its "
            "time waiting on the peer's sink, and the sink spent it decoding cells, routing them to their "
            "owner (a sort of the server list per cell), re-encoding them for the WAL and the owner hop, "
            "and sizing them for the memstore; the source spent most of its own CPU in the per-cell "
            "filter loop. Baseline = git " + BASELINE[:7] + "; both trees timed in child processes in "
            "this run, alternating.",
            "Sink apply = ReplicationSink.replicate_request on an in-process region server of a 2-server "
            "peer (requests of 20 entries x 100 cells; half the rows go to the other server's process), "
            "each request durable (WAL append + fsync) before the next. Timed two ways: CPU seconds of "
            "both peer servers (this process's threads + the other server's process, from /proc), which "
            "is the work the optimization removed; and wall time, which adds the fsync waits and the "
            "noise of three processes on two cores. Sink request decoding = the decoding step of it alone "
            "(requests of 20 entries x 100 cells, as each tree's sink decodes them: Cell objects in the "
            "baseline, Arrow columns with the cells' bounds in the block now), in CPU time. Filter loop = "
            "WALReader ship path "
            "+ EntryFilter over a WAL of 100-cell entries (the shape a region server writes per client "
            "batch).",
            "Memstore fill = the sink's request decoding into a region's memstore, kept there as a region "
            "server keeps cells until a flush (800k cells), in CPU time, in the current tree with CPython's "
            "gc defaults (700, 10, 10) and with the region-server process settings (replication/cluster/"
            "gc_tuning.py: start-up objects frozen, thresholds 20000, 20, 10). Found with gc.callbacks on "
            "the peer's servers during the end-to-end drain (~1.1 s of collections per server for 600k "
            "cells, most of it full collections walking the memstore again).",
            "Since the sink cuts a request's cell block into Arrow columns (replication/wal/cell_columns.py: "
            "a run of cells of one layout by strided copies, no Python object per cell), which the WAL "
            "append, the memstore and the flush take as they are, the sink apply figure includes that too. "
            "Memstore fill decodes with decode_request (Cell objects, as a client's cells arrive), so it "
            "still shows what the collector settings do for a memstore of objects; the sink's columns give "
            "the collector nothing to walk.",
        ],
    }
