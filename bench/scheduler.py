"""Replication through the real scheduler: the stack `make up` runs (Airflow standalone, ZooKeeper, clusters
a (2 RS) → b (1 RS)), once with the ship DAG on the Spark Connect server (window) and once through
spark-submit, in the same run:

- capacity: ingest rows/s (4 clients) and the rows/s the scheduled DAG drains a backlog at;
- lag at 50% of min(ingest, scheduler capacity) over 10 minutes (quick: 2): p50 / p99 / max of the
  write-to-peer delay, read from the peer's WALs afterwards (every edit, none sampled);
- one DAG run's wall time split by task and by scheduling gaps (from Airflow's own metadata DB).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import _support as s

NAME = "scheduler"
TITLE = "Replication through the real scheduler (make up's stack): Spark Connect + window vs spark-submit"
REPO = Path(__file__).resolve().parent.parent
MODES = ("connect", "submit")


@dataclass
class Stack:
    """A `make up` stack on free ports in a state folder of its own."""

    state: Path
    mode: str
    source_key: str
    peer_root: str

    @property
    def source(self):  # what bench._support.load needs: .client()
        from replication.cluster.client import ClusterClient

        key = self.source_key

        class _Source:
            @staticmethod
            def client():
                return ClusterClient(key)

        return _Source()

    @property
    def peer(self):  # what bench._support.peer_delays needs: .root
        root = self.peer_root

        class _Peer:
            pass

        peer = _Peer()
        peer.root = root  # type: ignore[attr-defined]
        return peer


def _devstack(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    return subprocess.run([sys.executable, "-m", "replication.devstack.stack", *args], capture_output=True, text=True,
                          timeout=900, env=env, cwd=REPO)  # fmt: skip


@contextlib.contextmanager
def stack(tmp: str, mode: str):
    from replication.net import free_port
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    state = Path(tmp) / mode
    zk_port = free_port()
    args = ["--state", str(state), "--zk-port", str(zk_port), "--port", str(free_port()),
            "--spark-port", str(free_port()), "--spark-mode", mode]  # fmt: skip
    up = _devstack("up", *args)
    try:
        if up.returncode != 0:
            raise RuntimeError(f"scheduler bench: make up ({mode}) failed: {(up.stdout + up.stderr)[-1500:]}")
        for name in ("a", "b"):
            registry = TableRegistry(None, str(state / name))
            if not registry.exists(s.TABLE):
                registry.create(TableDescriptor.of(s.TABLE, ColumnFamilyDescriptor("f", scope=1)))
        yield Stack(state, mode, f"127.0.0.1:{zk_port}:/hbase-a", str(state / "b"))
    finally:
        _devstack("down", "--state", str(state))


def _ts(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def dag_runs(state: Path) -> list[dict[str, Any]]:
    """Every finished hbrep_ship run: queued/start/end, and its tasks' start/end (Airflow's metadata DB)."""
    db = sqlite3.connect(f"file:{state / 'airflow' / 'airflow.db'}?mode=ro", uri=True, timeout=30)
    try:
        runs = db.execute(
            "select run_id, queued_at, start_date, end_date, state from dag_run where dag_id='hbrep_ship' "
            "and end_date is not null order by start_date"
        ).fetchall()
        out = []
        for run_id, queued, started, ended, state_ in runs:
            tasks = db.execute(
                "select task_id, map_index, start_date, end_date, state from task_instance "
                "where dag_id='hbrep_ship' and run_id=?",
                (run_id,),
            ).fetchall()
            out.append(
                {
                    "run_id": run_id, "state": state_, "queued": _ts(queued), "start": _ts(started),
                    "end": _ts(ended),
                    "tasks": [{"task": t, "map": m, "start": _ts(a), "end": _ts(b), "state": st}
                              for t, m, a, b, st in tasks],
                }
            )  # fmt: skip
        return out
    finally:
        db.close()


def split(run: dict[str, Any]) -> dict[str, float]:
    """A run's wall time: queued→first task, each task's time, and the gaps between tasks (scheduling)."""
    tasks = sorted((t for t in run["tasks"] if t["start"] and t["end"]), key=lambda t: t["start"])
    out = {"wall": run["end"] - (run["queued"] or run["start"])}
    if tasks:
        out["queued to first task"] = tasks[0]["start"] - (run["queued"] or run["start"])
        busy_until, gaps = tasks[0]["start"], 0.0
        for t in tasks:
            out[f"task {t['task']}"] = out.get(f"task {t['task']}", 0.0) + (t["end"] - t["start"])
            gaps += max(0.0, t["start"] - busy_until)
            busy_until = max(busy_until, t["end"])
        out["gaps between tasks"] = gaps
        out["last task to run end"] = max(0.0, run["end"] - busy_until)
    return out


def _median_split(runs: list[dict[str, Any]]) -> dict[str, float]:
    splits = [split(r) for r in runs]
    keys = sorted({k for sp in splits for k in sp})
    return {k: s.percentile([sp.get(k, 0.0) for sp in splits], 50) for k in keys}


def _wait_drained(st: Stack, rows_prefix: bytes, expected: int, timeout: float) -> float:
    """Seconds until the peer's WALs hold ``expected`` rows with ``rows_prefix``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if len(s.peer_delays(st, prefix=rows_prefix)) >= expected:  # type: ignore[arg-type]
            return time.monotonic() - started
        time.sleep(2)
    raise RuntimeError(f"scheduler bench ({st.mode}): {expected} rows not on the peer after {timeout:.0f}s")


def one_mode(tmp: str, mode: str, quick: bool) -> dict[str, float]:
    duration = 120.0 if quick else 600.0
    backlog = 20000 if quick else 100000
    figures: dict[str, float] = {}
    with stack(tmp, mode) as st:
        time.sleep(70)  # the first scheduled runs: the DAGs are parsed and unpaused, the Connect session warms
        ingest = s.load(st, backlog, prefix=b"C")  # type: ignore[arg-type]
        drain_s = _wait_drained(st, b"C", ingest.rows, 900)
        capacity = ingest.rows / (ingest.seconds + drain_s)  # rows/s the scheduled DAG drained the backlog at
        figures[f"{mode}: ingest rows/s (4 clients)"] = ingest.rows_per_s
        figures[f"{mode}: scheduler drain rows/s (backlog written, then drained by scheduled runs)"] = capacity
        rate = 0.5 * min(ingest.rows_per_s, capacity)
        figures[f"{mode}: load rate (rows/s, 50% of min)"] = rate
        stop = threading.Event()
        loaded: list = []
        loader = threading.Thread(
            target=lambda: loaded.append(s.load(st, 10**9, rate=rate, prefix=b"L", stop=stop)),  # type: ignore[arg-type]
            daemon=True,
        )
        t0 = time.time()
        loader.start()
        time.sleep(duration)
        stop.set()
        loader.join(60)
        if not loaded:
            raise RuntimeError(f"scheduler bench ({mode}): the load failed")
        _wait_drained(st, b"L", loaded[0].rows, 600)
        delays = [d / 1000 for _ts, d in s.peer_delays(st, prefix=b"L")]  # type: ignore[arg-type]
        figures[f"{mode}: rows written under load"] = loaded[0].rows
        figures[f"{mode}: lag p50 (s)"] = s.percentile(delays, 50)
        figures[f"{mode}: lag p99 (s)"] = s.percentile(delays, 99)
        figures[f"{mode}: lag max (s)"] = max(delays)
        runs = [r for r in dag_runs(st.state) if r["start"] and r["start"] >= t0]
        figures[f"{mode}: DAG runs during the load"] = len(runs)
        for key, value in _median_split(runs).items():
            figures[f"{mode}: run split, median (s): {key}"] = value
        # nothing to ship: the load is over and drained; the next scheduled runs find nothing
        time.sleep(130)
        idle = [r for r in dag_runs(st.state) if r["start"] and r["start"] > time.time() - 125]
        for key, value in _median_split(idle).items():
            figures[f"{mode}: nothing to ship, run split, median (s): {key}"] = value
    return figures


def run(quick: bool) -> dict:
    """Both modes, one after the other, in this run."""
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="hbrep-sched-") as tmp:
        for mode in MODES:
            figures.update(one_mode(tmp, mode, quick))
    ratios = {
        "connect: lag p99 (s) (target <= 10)": figures["connect: lag p99 (s)"],
        "submit lag p99 / connect lag p99": figures["submit: lag p99 (s)"] / max(figures["connect: lag p99 (s)"], 1e-9),
        "connect: scheduler drain rows/s / ingest rows/s": figures[
            "connect: scheduler drain rows/s (backlog written, then drained by scheduled runs)"
        ]
        / figures["connect: ingest rows/s (4 clients)"],
    }
    return {
        "title": TITLE,
        "command": "make bench (bench/scheduler.py)" + (" QUICK=1" if quick else ""),
        "figures": figures,
        "ratios": ratios,
        "notes": [
            "Both stacks are what `make up` starts (replication.devstack.stack, airflow standalone with its scheduler, "
            "the ship DAG every minute, max_active_runs 1), on free ports, one after the other in this run: "
            "`connect` = hbrep.spark.mode connect with the embedded default window "
            "(stack.SHIP_WINDOW_MS), `submit` = spark-submit per run. Lag = the peer WAL key's write time minus "
            "the cell's timestamp (the client's clock at send), every edit of the load. Scheduler drain = a "
            "backlog written by 4 clients, then the time until every row is in the peer's WALs, shipped by "
            "whatever scheduled runs come. Run split: from Airflow's metadata DB (dag_run.queued_at, "
            "task_instance start/end); gaps = time between tasks where none of the run's tasks ran. "
            + s.load_average()
            + "."
        ],
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
