"""What hbrep_airflow's PreloadingLocalExecutor buys over Airflow's own LocalExecutor, through the real scheduler.

The one-host stack of `make up` (connect mode: ship windows on the Spark Connect server) is started twice in one
run, once per executor (``replication.devstack.stack up --executor``), in the order the rounds alternate. The
ship DAG's cron is a year away (``HBREP_SHIP_SCHEDULE``), so every window is one this bench starts: per trial,
with no ship task running, one row is put on cluster a and a ship run is triggered through the REST API; the
figures are the time from the trigger until a get on cluster b finds the row (what a user waiting for a first
write sees), and the first pass's own seconds from the ship task's log (the Connect client's import falls in
it when the task process did not inherit it). Windows are 3 s, so each trial's window ends before the next.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import _support as s

NAME = "executor_preload"
TITLE = "PreloadingLocalExecutor vs LocalExecutor: a fresh ship window's first write, through the scheduler"
EXECUTORS = {
    "PreloadingLocalExecutor": "hbrep_airflow.executors.preloading.PreloadingLocalExecutor",
    "LocalExecutor": "LocalExecutor",
}
WINDOW_MS = 3000
DAG = "hbrep_ship"


def sizes(quick: bool) -> dict[str, int]:
    """Trials per executor and rounds: ``BENCH_PRELOAD_TRIALS`` (10; quick 3), ``BENCH_PRELOAD_ROUNDS`` (1)."""
    return {
        "trials": int(os.environ.get("BENCH_PRELOAD_TRIALS", 3 if quick else 10)),
        "rounds": int(os.environ.get("BENCH_PRELOAD_ROUNDS", 1)),
    }


def _ship_tasks_active(state: Path) -> int:
    from bench.scheduler import _MetadataDb

    db = _MetadataDb(state)
    try:
        (n,) = db.execute(
            "select count(*) from task_instance where dag_id=? and state in ('running', 'queued', 'scheduled')",
            (DAG,),
        ).fetchone()
    finally:
        db.close()
    return int(n)


def _wait_idle(state: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while _ship_tasks_active(state):
        if time.monotonic() > deadline:
            raise RuntimeError(f"executor_preload: ship tasks still active {timeout:.0f} s on")
        time.sleep(0.5)


def _first_passes(state: Path) -> list[float]:
    """The first pass's seconds of every ship window (its task's log)."""
    from bench.scheduler import passes

    first: dict[str, float] = {}
    for p in passes(state):
        first.setdefault(p["window"], p["seconds"])
    return list(first.values())


def _one_executor(tmp: str, label: str, n: dict[str, int], round_no: int) -> dict[str, list[float]]:
    from bench.failover_events import _env, _has_row
    from bench.scheduler import _settle, stack
    from replication.cluster.client import ClusterClient
    from replication.config import Config

    with _env({"HBREP_SHIP_SCHEDULE": "0 0 1 1 *"}), \
            stack(f"{tmp}/{label}-{round_no}", "connect", "--executor", EXECUTORS[label],
                  "--ship-window-ms", str(WINDOW_MS)) as st:  # fmt: skip
        with st.api() as api:
            api.trigger(DAG)  # _settle waits for a finished ship run: the cron alone would not start one
        _settle(st)
        peer_key = st.source_key.replace("/hbase-a", "/hbase-b")
        latencies: list[float] = []
        with ClusterClient(st.source_key, Config.load()) as src, ClusterClient(peer_key, Config.load(env={})) as peer:
            for i in range(n["trials"]):
                _wait_idle(st.state)
                time.sleep(1)
                row = b"preload-%s-%d-%d" % (label.encode(), round_no, i)
                src.put(s.TABLE, row, b"f", b"q", b"v")
                with st.api() as api:
                    t0 = time.monotonic()
                    api.trigger(DAG)
                deadline = t0 + 180
                while not _has_row(peer, row):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"executor_preload ({label}): the row never reached the peer")
                    time.sleep(0.05)
                latencies.append(time.monotonic() - t0)
                print(f"[executor_preload] {label} round {round_no} trial {i + 1}: {latencies[-1]:.2f} s", flush=True)
        _wait_idle(st.state)
        return {"latency": latencies, "first pass": _first_passes(st.state)[-n["trials"] :]}


def run(quick: bool) -> dict:
    """Both executors, alternating first per round (see the module doc)."""
    from bench.registry import head_commit

    commit = head_commit()
    n = sizes(quick)
    got: dict[str, dict[str, list[float]]] = {k: {"latency": [], "first pass": []} for k in EXECUTORS}
    loads = [f"start: {s.load_average()}"]
    with tempfile.TemporaryDirectory(prefix="hbrep-preload-") as tmp:
        for round_no in range(n["rounds"]):
            order = list(EXECUTORS) if round_no % 2 == 0 else list(reversed(EXECUTORS))
            for label in order:
                one = _one_executor(tmp, label, n, round_no)
                for key, values in one.items():
                    got[label][key].extend(values)
                loads.append(f"after {label} (round {round_no + 1}): {s.load_average()}")
    f: dict[str, float] = {}
    for label, values in got.items():
        for key, xs in values.items():
            if xs:
                f[f"{label}: {key} (s, median)"] = statistics.median(xs)
                f[f"{label}: {key} (s, max)"] = max(xs)
    ratios: dict[str, Any] = {}
    with contextlib.suppress(KeyError, ZeroDivisionError):
        ratios["LocalExecutor / PreloadingLocalExecutor: trigger -> row on the peer, median"] = (
            f["LocalExecutor: latency (s, median)"] / f["PreloadingLocalExecutor: latency (s, median)"]
        )
        ratios["LocalExecutor - PreloadingLocalExecutor: first pass (s, median)"] = (
            f["LocalExecutor: first pass (s, median)"] - f["PreloadingLocalExecutor: first pass (s, median)"]
        )
    return {
        "title": TITLE,
        "command": "make bench ONLY=executor_preload" + (" QUICK=1" if quick else ""),
        "figures": f,
        "ratios": ratios,
        "commit": commit,
        "notes": [
            f"Measured at commit {commit}; {n['trials']} trials per executor per round, {n['rounds']} round(s), "
            f"ship windows of {WINDOW_MS} ms (BENCH_PRELOAD_TRIALS, BENCH_PRELOAD_ROUNDS). Machine load: "
            + "; ".join(loads)
            + ".",
            "Through Airflow's real scheduler: make up's one-host stack (PostgreSQL, scheduler, DAG processor, "
            "triggerer, API server, Spark Connect server) per executor; latency = REST trigger of hbrep_ship -> "
            "a get on the peer finds the row put just before it; first pass = the window's first pass's seconds "
            "(snapshot, the job on the Connect server, commit) from the ship task's log.",
        ],
    }
