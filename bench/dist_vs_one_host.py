"""Replication through the real scheduler on the distributed stack beside the one-host stack, in one run
(issue 41): `make up` (LocalExecutor family, Spark Connect on a local master, cluster a's root on local disk)
and `make up DIST=1` (CeleryExecutor with two workers on Redis, Spark Connect on a Spark standalone cluster of
two workers, cluster a's root and the work dir on HDFS), both with the ship DAG in connect mode and its
window. Per stack, bench/scheduler.py's phases: two backlogs (scheduler rows/s vs ingest rows/s), lag at 50%
of capacity (p50/p99/max), runs with nothing and with a little to ship.
"""

from __future__ import annotations

from typing import Any

from bench import scheduler

NAME = "dist_vs_one_host"
TITLE = "Replication through the real scheduler: the distributed stack (Celery, Spark cluster, HDFS) beside make up's"
MODES = ("connect", "connect-dist")


def run(quick: bool) -> dict:
    """Both stacks, one after the other, in this run (see module doc)."""
    return scheduler.run(quick, MODES, make_result=result)


def result(f: dict[str, float], loads: list[str], commit: str, quick: bool) -> dict[str, Any]:
    """The figures of both stacks, and the distributed stack's figures over the one-host stack's."""
    one, dist = MODES
    ratios: dict[str, float] = {}
    for mode in MODES:
        ratios[f"{mode}: lag p99 (s) (target <= 10)"] = f[f"{mode}: lag p99 (s)"]
        for size in ("100-byte", "1 KB"):
            ratios[f"{mode}: {size} backlog: scheduler rows/s / ingest rows/s"] = (
                f[f"{mode}: {size} backlog: scheduler rows/s"]
                / f[f"{mode}: {size} backlog: ingest rows/s (4 clients, DAG paused)"]
            )
    ratios["distributed lag p99 / one-host lag p99"] = f[f"{dist}: lag p99 (s)"] / max(f[f"{one}: lag p99 (s)"], 1e-9)
    for size in ("100-byte", "1 KB"):
        ratios[f"distributed / one-host: {size} backlog scheduler rows/s"] = f[
            f"{dist}: {size} backlog: scheduler rows/s"
        ] / max(f[f"{one}: {size} backlog: scheduler rows/s"], 1e-9)
    return {
        "title": TITLE,
        "command": f"make bench ONLY={NAME} (bench/{NAME}.py)" + (" QUICK=1" if quick else ""),
        "figures": f,
        "ratios": ratios,
        "commit": commit,
        "machine_load": loads,
        "notes": [
            f"Measured at commit {commit}. Machine load (uptime): " + "; ".join(loads) + ".",
            "`connect` = the stack `make up` starts; `connect-dist` = `make up DIST=1` (replication/devstack/"
            "dist_stack.py). Both on one 2-core machine, one after the other, through the same phases as "
            "bench/scheduler.py (its notes say how each figure is taken; the backlogs' sizes: below). On one "
            "machine the distributed stack runs more processes on the same cores (two Celery workers, a Spark "
            "master and two Spark workers, a NameNode and a DataNode, Redis), so its figures say what the "
            "distribution costs here, not what separate hosts would give.",
            "The distributed stack's backlogs are a tenth of the one-host stack's (100,000 rows of 100 bytes "
            "and 100 MB of 1 KB rows): its region servers write their WALs over WebHDFS, one APPEND per sync, "
            "and each APPEND waits for the DataNode to close the file, so its ingest is far slower (the "
            "`ingest rows/s` figures). Rows/s figures are rates, so the sizes do not enter the ratios directly; "
            "the larger backlog amortizes a run's start better.",
        ],
    }
