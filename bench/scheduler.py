"""Replication through the real scheduler: the stack `make up` runs (Airflow standalone, ZooKeeper, clusters
a (2 RS) → b (1 RS)), once with the ship DAG on the Spark Connect server (window) and once through
spark-submit, in the same run. Per mode, in this order:

- backlogs: the ship DAG paused (no run active), a backlog written by 4 clients (1M 100-byte rows, then
  1 GB of 1 KB rows, as the engine-only backlog of bench/e2e.py: ingest rows/s), then the DAG unpaused and
  a run triggered through the REST API; the scheduler's rows/s = backlog rows / (trigger → the end of the
  ship that carried the backlog's last row to the peer);
- lag at 50% of min(ingest, scheduler rows/s) for 10 minutes (quick: 2): p50 / p99 / max of the
  write-to-peer delay, read from the peer's WALs afterwards (every edit, none sampled);
- one DAG run's wall time split by task and by scheduling gaps (Airflow's own metadata DB), for the runs
  with nothing to ship (no load) and with a little to ship (100 rows every 10 s);
- each ship-window pass's time, from the ship task's log (``Pass N (...): ... in X s``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench import _support as s
from bench.cpu_share import CpuSampler
from replication.devstack.postgres import PostgresServer
from replication.devstack.stack import SHIP_SCHEDULE, SHIP_WINDOW_MS

NAME = "scheduler"
TITLE = "Replication through the real scheduler (make up's stack): Spark Connect + window vs spark-submit"
REPO = Path(__file__).resolve().parent.parent

MODES = ("connect", "submit")
PARTIAL = Path(tempfile.gettempdir()) / "hbrep-bench-scheduler-partial.json"
DAG = "hbrep_ship"
PASS_LINE = re.compile(r"Pass (\d+) \((\S+)\): (\d+) queue\(s\), (\d+) rows, (\d+) bytes in ([\d.]+)s")


@dataclass
class Stack:
    """A `make up` stack on free ports in a state folder of its own."""

    state: Path
    mode: str
    source_key: str
    peer_root: str
    api_port: int

    @property
    def source(self):  # what bench._support.load needs: .client()
        from replication.cluster.client import ClusterClient

        key = self.source_key

        class _Source:
            @staticmethod
            def client():
                return ClusterClient(key)

        return _Source()

    def api(self):
        """A logged-in REST client of the stack's Airflow (admin)."""
        from replication.devstack.airflow_api import AirflowApi
        from replication.devstack.airflow_stack import admin_password

        return AirflowApi(f"http://127.0.0.1:{self.api_port}", "admin", admin_password(self.state / "airflow"))


@dataclass
class PeerRows:
    """The peer's replicated cells, read incrementally: a WAL whose size changed is read on from where the
    last poll stopped (a poll must not read every WAL again on a 2-core machine that is also shipping: the
    bench's own CPU shows in the CPU-while-it-shipped figures)."""

    root: str
    seen: dict[str, tuple[int, int, list[tuple[bytes, int, int]]]] = field(default_factory=dict)
    rows_by_first_byte: dict[bytes, set[bytes]] = field(default_factory=dict)

    def cells(self) -> list[tuple[bytes, int, int]]:
        """(row, cell timestamp ms, delay ms) of every cell in the peer's WALs and oldWALs."""
        self._read_new()
        return [cell for _size, _pos, cells in self.seen.values() for cell in cells]

    def _read_new(self) -> None:
        """Read what the peer's WALs gained since the last call."""
        from replication.fs import get_filesystem
        from replication.wal.errors import CorruptWALError
        from replication.wal.reader import open_wal

        fs, root = get_filesystem(self.root)
        for sub in ("WALs", "oldWALs"):
            for dirpath, _dirs, files in os.walk(os.path.join(root, sub)):
                for name in files:
                    path = os.path.join(dirpath, name)
                    with contextlib.suppress(FileNotFoundError):
                        size = os.path.getsize(path)
                        old_size, position, out = self.seen.get(name, (-1, 0, []))
                        if size == 0 or old_size == size:
                            continue
                        try:
                            reader = open_wal(path, fs=fs, start=position)
                            new = self._read(reader)
                        except CorruptWALError:  # closed since (its trailer after the entries): read it whole
                            out, reader = [], open_wal(path, fs=fs)
                            new = self._read(reader)
                        out.extend(new)
                        self.seen[name] = (size, reader.position, out)

    def _read(self, reader: Any) -> list[tuple[bytes, int, int]]:
        out = []
        for read in reader:
            wt = read.entry.key.write_time
            for c in read.entry.cells:
                row = bytes(c.row)
                out.append((row, c.timestamp, wt - c.timestamp))
                self.rows_by_first_byte.setdefault(row[:1], set()).add(row)
        return out

    def delays(self, prefix: bytes) -> list[float]:
        """Delay in seconds of every cell whose row starts with ``prefix`` (one per row: the first copy)."""
        first: dict[bytes, int] = {}
        for row, _ts, delay in self.cells():
            if row.startswith(prefix) and row not in first:
                first[row] = delay
        return [d / 1000 for d in first.values()]

    def arrival_span(self, prefix: bytes) -> tuple[float, float]:
        """(first, last) wall time (epoch s) at which the peer wrote a row with ``prefix`` (its WAL key's
        write time): when the rows arrived, not when a poll noticed them."""
        times = [(ts + delay) / 1000 for row, ts, delay in self.cells() if row.startswith(prefix)]
        return min(times), max(times)

    def count(self, prefix: bytes) -> int:
        """Distinct rows starting with ``prefix`` (non-empty) on the peer."""
        self._read_new()
        return sum(1 for row in self.rows_by_first_byte.get(prefix[:1], ()) if row.startswith(prefix))


def _devstack(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    return subprocess.run([sys.executable, "-m", "replication.devstack.stack", *args], capture_output=True, text=True,
                          timeout=900, env=env, cwd=REPO)  # fmt: skip


def engine(mode: str) -> str:
    """The ship DAG's engine of a bench mode: ``connect`` (``connect``, ``connect-dist``) or ``submit``."""
    return "connect" if mode.startswith("connect") else "submit"


def is_dist(mode: str) -> bool:
    """Whether a bench mode runs on the distributed stack (``make up DIST=1``: Celery workers, a Spark
    standalone cluster, cluster a's root and the work dir on HDFS)."""
    return mode.endswith("-dist")


@contextlib.contextmanager
def stack(tmp: str, mode: str, *extra: str):
    from replication.fs import get_filesystem
    from replication.net import free_port
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    state = Path(tmp) / mode
    zk_port, api_port = free_port(), free_port()
    args = ["--state", str(state), "--zk-port", str(zk_port), "--port", str(api_port),
            "--spark-port", str(free_port()), "--spark-mode", engine(mode), *extra]  # fmt: skip
    if is_dist(mode):
        args.append("--dist")
    up = _devstack("up", *args)
    try:
        if up.returncode != 0:
            raise RuntimeError(f"scheduler bench: make up ({mode}) failed: {(up.stdout + up.stderr)[-1500:]}")
        peer_root, source_root = json.loads((state / "stack.json").read_text())["roots"]  # b, then a (stack.py)
        for root in (peer_root, source_root):  # a's root is on HDFS in the distributed stack
            registry = TableRegistry(*get_filesystem(root))
            if not registry.exists(s.TABLE):
                registry.create(TableDescriptor.of(s.TABLE, ColumnFamilyDescriptor("f", scope=1)))
        yield Stack(state, mode, f"127.0.0.1:{zk_port}:/hbase-a", peer_root, api_port)
    finally:
        _devstack("down", "--state", str(state))


def _ts(text: str | datetime | None) -> float | None:
    if not text:
        return None
    if isinstance(text, datetime):
        return text.timestamp()
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class _MetadataDb:
    """The stack's Airflow metadata database (database ``airflow`` on its PostgreSQL server), for reads;
    ``execute`` takes ``?`` placeholders as sqlite3 does."""

    def __init__(self, state: Path) -> None:
        self.connection = PostgresServer(state / "postgres").connect("airflow")
        self.connection.autocommit = True

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        cursor = self.connection.cursor()
        cursor.execute(sql.replace("?", "%s"), args)
        return cursor

    def close(self) -> None:
        self.connection.close()


def dag_runs(state: Path, finished: bool = True) -> list[dict[str, Any]]:
    """hbrep_ship runs (finished ones, or all): queued/start/end, and its tasks' start/end (metadata DB)."""
    db = _MetadataDb(state)
    try:
        runs = db.execute(
            "select run_id, queued_at, start_date, end_date, state from dag_run where dag_id=? "
            + ("and end_date is not null " if finished else "")
            + "order by start_date",
            (DAG,),
        ).fetchall()
        out = []
        for run_id, queued, started, ended, state_ in runs:
            tasks = db.execute(
                "select task_id, map_index, start_date, end_date, state from task_instance where dag_id=? and run_id=?",
                (DAG, run_id),
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
    keys = sorted({k for sp in splits for k in sp}, key=lambda k: (k != "wall", k))
    return {k: s.percentile([sp.get(k, 0.0) for sp in splits], 50) for k in keys}


def ship_task_logs(state: Path) -> list[Path]:
    """The ship tasks' log files: in the stack's Airflow home (local executor) and in each Celery worker's
    own Airflow home (the distributed stack: dist/celery/<worker>/airflow)."""
    homes = [state / "airflow", *sorted((state / "dist" / "celery").glob("*/airflow"))]
    pattern = "run_id=*/task_id=peer.ship/**/*.log"
    return [path for home in homes for path in (home / "logs" / f"dag_id={DAG}").glob(pattern)]


def passes(state: Path) -> list[dict[str, Any]]:
    """Every ship-window pass the ship tasks logged: time (end, epoch s), queues, rows, seconds."""
    out: dict[str, dict[str, Any]] = {}
    for path in ship_task_logs(state):
        for line in path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                item = json.loads(line)
                match = PASS_LINE.search(item["event"])
                if match:
                    out[match.group(2)] = {"at": _ts(item["timestamp"]), "window": match.group(2).rsplit("-p", 1)[0],
                                           "queues": int(match.group(3)),
                                           "rows": int(match.group(4)), "seconds": float(match.group(6))}  # fmt: skip
    return sorted(out.values(), key=lambda p: p["at"])


def _window_ends(state: Path, t0: float, t1: float) -> dict[str, int]:
    """How the ship windows that ended between ``t0`` and ``t1`` ended (the ship task's summary log line)."""
    ends: dict[str, int] = {}
    for path in ship_task_logs(state):
        for line in path.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                item = json.loads(line)
                match = re.search(r"'ended': '([^']*)'", item["event"])
                at = _ts(item["timestamp"])
                if match and "window on" in item["event"] and at is not None and t0 <= at <= t1:
                    ends[match.group(1)] = ends.get(match.group(1), 0) + 1
    return ends


def _wait_drained(st: Stack, peer: PeerRows, prefix: bytes, expected: int, timeout: float, poll: float = 1.0) -> float:
    """Seconds until the peer's WALs hold ``expected`` rows with ``prefix`` (polled every ``poll`` s: each
    poll re-reads the peer's growing WALs, CPU the shipping shares)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if peer.count(prefix) >= expected:
            return time.monotonic() - started
        time.sleep(poll)
    raise RuntimeError(f"scheduler bench ({st.mode}): {expected} rows not on the peer after {timeout:.0f}s")


def _wait_shipped(st: Stack, peer: PeerRows, prefix: bytes, expected: int, since: float, timeout: float) -> None:
    """Wait until the peer holds ``expected`` rows with ``prefix``, reading its WALs only after each ship
    that ended after ``since`` (epoch s): never while a pass ships, whose CPU the reading would take."""
    deadline = time.monotonic() + timeout
    mark = since
    while time.monotonic() < deadline:
        end = ship_end_after(st, mark)
        if end is None:
            time.sleep(0.5)
            continue
        if peer.count(prefix) >= expected:
            return
        mark = end + 1e-3
    raise RuntimeError(f"scheduler bench ({st.mode}): {expected} rows not on the peer after {timeout:.0f}s")


def _wait_runs_ended(st: Stack, before: float, timeout: float = 300) -> None:
    """Wait until every run that started before ``before`` (epoch s) has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = dag_runs(st.state, finished=False)
        if all(r["end"] for r in runs if r["start"] and r["start"] < before):
            return
        time.sleep(1)
    raise RuntimeError(f"scheduler bench ({st.mode}): a ship run started before the phase's end still running")


def _pause_for_backlog(st: Stack, api: Any) -> None:
    """Pause the ship DAG and wait until none of its tasks runs. A paused DAG's running run gets no more
    tasks scheduled (a task already started, such as a ship window, runs to its end); it stays frozen,
    lease and all, and goes on where it stopped once the DAG is unpaused, before the triggered run."""
    api.set_paused(DAG, True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        db = _MetadataDb(st.state)
        try:
            (active,) = db.execute(
                "select count(*) from task_instance where dag_id=? and state in ('running', 'queued')", (DAG,)
            ).fetchone()
        finally:
            db.close()
        if not active:
            return
        time.sleep(1)
    raise RuntimeError(f"scheduler bench ({st.mode}): ship tasks still running 300 s after the pause")


def _settle(st: Stack, timeout: float = 600) -> None:
    """Pause the verify DAG (make up's stack starts its daily catch-up runs at once, each a spark-submit job;
    they are not replication and would run under the figures), wait until none of its tasks runs, and wait
    for the first finished ship run (the DAGs parsed, the engine warm)."""
    with st.api() as api:
        api.set_paused("hbrep_verify", True)
        for one in api.runs("hbrep_verify"):  # runs created before the pause would still start
            if one["state"] in ("queued", "running"):
                run_path = f"/dags/hbrep_verify/dagRuns/{quote(one['dag_run_id'], safe='')}"
                api.call("PATCH", run_path, json={"state": "failed"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        db = _MetadataDb(st.state)
        try:
            (verify_tasks,) = db.execute(
                "select count(*) from task_instance where dag_id='hbrep_verify' and state in ('running', 'queued')"
            ).fetchone()
        finally:
            db.close()
        if dag_runs(st.state) and not verify_tasks:
            return
        time.sleep(2)
    raise RuntimeError(f"scheduler bench ({st.mode}): no ship run finished within {timeout:.0f}s of make up")


def ship_end_after(st: Stack, at: float) -> float | None:
    """When the ship that wrote a row to the peer at ``at`` (epoch s) was over: in connect mode the end of
    the first window pass that shipped something and ended at or after ``at`` (its log line is written
    after the pass's commit); in submit mode the end of the first ship task (the spark-submit job; its
    positions are committed by the next task) that ended at or after it."""
    if engine(st.mode) == "connect":
        ends = [p["at"] for p in passes(st.state) if p["queues"] and p["at"] >= at]
    else:
        ends = [t["end"] for r in dag_runs(st.state) for t in r["tasks"]
                if t["task"] == "peer.ship" and t["end"] and t["end"] >= at]  # fmt: skip
    return min(ends) if ends else None


def backlog(st: Stack, peer: PeerRows, rows: int, value_size: int, prefix: bytes, label: str) -> dict[str, float]:
    """The DAG paused, ``rows`` written; unpaused and triggered. Figures: ingest rows/s; seconds from the
    trigger to the first and to the last row on the peer (the peer's WAL write times: when the peer began
    applying the batch that held it) and to the end of the ship that carried the last row; scheduler
    rows/s = rows / (trigger to that end); with a window, the passes that shipped it and their rows/s."""
    with st.api() as api:
        _pause_for_backlog(st, api)
        written = s.load(st, rows, value_size=value_size, prefix=prefix)  # type: ignore[arg-type]
        sampler = CpuSampler(st.source_key)
        sampler.start()
        triggered = time.time()
        api.set_paused(DAG, False)
        api.trigger(DAG)
    try:
        _wait_shipped(st, peer, prefix, written.rows, triggered, 900)
        first, last = peer.arrival_span(prefix)
        deadline = time.monotonic() + 300
        while (done := ship_end_after(st, last)) is None:  # the carrying ship's log line / task end lands after
            if time.monotonic() > deadline:
                raise RuntimeError(f"scheduler bench ({st.mode}): no ship ended after the backlog's last row")
            time.sleep(1)
    finally:
        sampler.stop()
    m = st.mode
    shipped = [p for p in passes(st.state) if triggered <= p["at"] <= done and p["queues"]]
    pass_s = sum(p["seconds"] for p in shipped)
    # CPU by component while the backlog shipped: the passes (connect), or trigger to ship end (submit)
    t0 = min((p["at"] - p["seconds"] for p in shipped), default=triggered)
    cpu = sampler.figures(f"{m}: {label} backlog: ", t0, done)
    out = {
        f"{m}: {label} backlog: rows": written.rows,
        f"{m}: {label} backlog: ingest rows/s (4 clients, DAG paused)": written.rows_per_s,
        f"{m}: {label} backlog: trigger to first row on the peer (s)": first - triggered,
        f"{m}: {label} backlog: trigger to last row on the peer (s)": last - triggered,
        f"{m}: {label} backlog: trigger to the end of the ship that carried the last row (s)": done - triggered,
        f"{m}: {label} backlog: scheduler rows/s": written.rows / (done - triggered),
    }
    if shipped:  # connect mode: the window's passes that shipped the backlog (submit logs no passes)
        out[f"{m}: {label} backlog: passes that shipped it"] = len(shipped)
        out[f"{m}: {label} backlog: seconds in those passes"] = pass_s
        out[f"{m}: {label} backlog: rows/s within the passes"] = sum(p["rows"] for p in shipped) / max(pass_s, 1e-3)
    return {**out, **cpu}


def _started_in(st: Stack, t0: float, t1: float) -> list[dict[str, Any]]:
    return [r for r in dag_runs(st.state) if r["start"] and t0 <= r["start"] < t1]


def one_mode(tmp: str, mode: str, quick: bool) -> dict[str, float]:
    duration = 120.0 if quick else 600.0
    # Large enough that the figure is the shipping rate more than the run's start (2-3 s here): 200k and
    # 100k rows (at 4c8ee48) were written in 2-4 s, about the time Airflow took to start the run.
    small_rows = 30_000 if quick else 1_000_000
    kb_rows = 20_000 if quick else (1 << 30) // 1020  # 1 GB of 1000-byte values + 20-byte keys (bench/e2e.py)
    if is_dist(mode) and not quick:
        # A tenth there: the distributed stack's region servers write their WALs over WebHDFS, one APPEND
        # per sync, and each APPEND waits about 0.4 s for the DataNode's close of the file (its DFSClient's
        # first completeFile retry, dfs.client.block.write.locateFollowingBlock.initial.delay.ms). At
        # 9e5cfdc 4 clients wrote about 450 rows/s of 100 bytes there: 1M rows would take 40 minutes.
        small_rows, kb_rows = small_rows // 10, kb_rows // 10
    phase = 125.0  # nothing to ship, a little to ship: two scheduled runs or more each
    f: dict[str, float] = {}
    with stack(tmp, mode) as st:
        peer = PeerRows(st.peer_root)
        _settle(st)
        f.update(backlog(st, peer, small_rows, 100, b"C", "100-byte"))
        f.update(backlog(st, peer, kb_rows, 1000, b"K", "1 KB"))
        ingest = f[f"{mode}: 100-byte backlog: ingest rows/s (4 clients, DAG paused)"]
        capacity = f[f"{mode}: 100-byte backlog: scheduler rows/s"]
        rate = 0.5 * min(ingest, capacity)
        f[f"{mode}: load rate (rows/s, 50% of min(ingest, scheduler rows/s))"] = rate

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
        loader.join(120)
        t1 = time.time()
        if not loaded:
            raise RuntimeError(f"scheduler bench ({mode}): the load failed")
        _wait_drained(st, peer, b"L", loaded[0].rows, 900)
        delays = peer.delays(b"L")
        f[f"{mode}: load: minutes"] = duration / 60
        f[f"{mode}: load: rows written"] = loaded[0].rows
        f[f"{mode}: lag p50 (s)"] = s.percentile(delays, 50)
        f[f"{mode}: lag p99 (s)"] = s.percentile(delays, 99)
        f[f"{mode}: lag max (s)"] = max(delays)
        under_load = _started_in(st, t0, t1)
        f[f"{mode}: load: DAG runs started"] = len(under_load)
        for key, value in _median_split(under_load).items():
            f[f"{mode}: under load, run split, median (s): {key}"] = value
        load_passes = [p for p in passes(st.state) if t0 <= p["at"] <= t1 and p["queues"]]
        if load_passes:
            f[f"{mode}: under load: passes that shipped"] = len(load_passes)
            f[f"{mode}: under load: pass (s, median)"] = s.percentile([p["seconds"] for p in load_passes], 50)
            f[f"{mode}: under load: pass (s, p90)"] = s.percentile([p["seconds"] for p in load_passes], 90)

        in_load = [p for p in passes(st.state) if t0 <= p["at"] <= t1]
        pairs = itertools.pairwise(in_load)
        between = [b["at"] - a["at"] - b["seconds"] for a, b in pairs if a["window"] != b["window"]]
        windows = _window_ends(st.state, t0, t1)
        f[f"{mode}: under load: windows ended because the next run waited for the lease"] = windows.get(
            "successor waiting for the lease", 0
        )
        f[f"{mode}: under load: windows ended at the window's end"] = windows.get("window over", 0)
        if between:  # from one window's last pass to the next window's first pass: nobody ships meanwhile
            f[f"{mode}: under load: between two windows, no pass (s, median)"] = s.percentile(between, 50)
            f[f"{mode}: under load: between two windows, no pass (s, max)"] = max(between)
            span = in_load[-1]["at"] - in_load[0]["at"]
            f[f"{mode}: under load: share of the time between windows"] = sum(between) / max(span, 1e-9)

        # nothing to ship: the load is over and drained, so a run that starts now finds nothing
        t2 = time.time()
        time.sleep(phase)
        t2_end = time.time()
        _wait_runs_ended(st, t2_end)
        idle = _started_in(st, t2, t2_end)
        f[f"{mode}: nothing to ship: DAG runs"] = len(idle)
        for key, value in _median_split(idle).items():
            f[f"{mode}: nothing to ship, run split, median (s): {key}"] = value
        if idle:  # with two or three runs a median hides one slow run: the slowest is given too
            f[f"{mode}: nothing to ship: run wall (s, max)"] = max(split(r)["wall"] for r in idle)
        empty = [p for p in passes(st.state) if t2 <= p["at"] <= t2_end and not p["queues"]]
        if empty:
            f[f"{mode}: nothing to ship: pass (s, median)"] = s.percentile([p["seconds"] for p in empty], 50)

        # a little to ship: 100 rows every 10 s
        t3 = time.time()
        burst = 0
        while time.time() - t3 < phase:
            s.load(st, 100, prefix=b"S%03d" % burst)  # type: ignore[arg-type]
            burst += 1
            time.sleep(max(0.0, t3 + 10 * burst - time.time()))
        t4 = time.time()
        _wait_runs_ended(st, t4)
        little = _started_in(st, t3, t4)
        f[f"{mode}: a little to ship (100 rows / 10 s): DAG runs"] = len(little)
        for key, value in _median_split(little).items():
            f[f"{mode}: a little to ship, run split, median (s): {key}"] = value
        warm = [p for p in passes(st.state) if t3 <= p["at"] and p["queues"]]
        if warm:
            f[f"{mode}: a little to ship: passes that shipped"] = len(warm)
            f[f"{mode}: a little to ship: pass on the warm engine (s, median)"] = s.percentile(
                [p["seconds"] for p in warm], 50
            )
        f[f"{mode}: 1-minute load average at the end"] = os.getloadavg()[0]
    return f


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run(quick: bool, modes: tuple[str, ...] = MODES, make_result: Any = None) -> dict:
    """The modes, one after the other, in this run; ``make_result`` (default :func:`result`) builds the
    result dict from the figures."""
    from bench.registry import head_commit

    commit = head_commit()  # at the start: the stacks import the tree as it is now
    f: dict[str, float] = {}
    loads = [f"start: {_uptime()}"]
    with tempfile.TemporaryDirectory(prefix="hbrep-sched-") as tmp:
        for mode in modes:
            f.update(one_mode(tmp, mode, quick))
            loads.append(f"after {mode}: {_uptime()}")
            # kept outside the results folder: a mode that fails later does not lose this one's figures
            PARTIAL.write_text(json.dumps({"figures": f, "machine_load": loads, "commit": commit}, indent=2))
    return (make_result or result)(f, loads, commit, quick)


def result(f: dict[str, float], loads: list[str], commit: str, quick: bool) -> dict:
    """The result dict of both modes' figures (see run)."""
    c = "connect"
    ratios = {
        "connect: lag p99 (s) (target <= 10)": f[f"{c}: lag p99 (s)"],
        "submit lag p99 / connect lag p99": f["submit: lag p99 (s)"] / max(f[f"{c}: lag p99 (s)"], 1e-9),
        "connect: 100-byte backlog: scheduler rows/s / ingest rows/s": f[f"{c}: 100-byte backlog: scheduler rows/s"]
        / f[f"{c}: 100-byte backlog: ingest rows/s (4 clients, DAG paused)"],
        "connect: 1 KB backlog: scheduler rows/s / ingest rows/s": f[f"{c}: 1 KB backlog: scheduler rows/s"]
        / f[f"{c}: 1 KB backlog: ingest rows/s (4 clients, DAG paused)"],
        "submit: 100-byte backlog: scheduler rows/s / ingest rows/s": f["submit: 100-byte backlog: scheduler rows/s"]
        / f["submit: 100-byte backlog: ingest rows/s (4 clients, DAG paused)"],
        "submit: 1 KB backlog: scheduler rows/s / ingest rows/s": f["submit: 1 KB backlog: scheduler rows/s"]
        / f["submit: 1 KB backlog: ingest rows/s (4 clients, DAG paused)"],
    }
    warm = f.get(f"{c}: a little to ship: pass on the warm engine (s, median)")
    if warm is not None:
        ratios["connect: a little to ship: pass on the warm engine (s, median) (target <= 1)"] = warm
    empty_wall = f.get(f"{c}: nothing to ship, run split, median (s): wall")
    if empty_wall is not None:
        window_s = f.get(f"{c}: nothing to ship, run split, median (s): task peer.ship", 0.0)
        ratios["connect: nothing to ship: run wall without the ship task's open window (s) (target <= 5)"] = (
            empty_wall - window_s
        )
        ratios["connect: nothing to ship: run wall (s), window included"] = empty_wall
    if "submit: nothing to ship, run split, median (s): wall" in f:
        ratios["submit: nothing to ship: run wall (s) (target <= 5)"] = f[
            "submit: nothing to ship, run split, median (s): wall"
        ]
    return {
        "title": TITLE,
        "command": "make bench (bench/scheduler.py)" + (" QUICK=1" if quick else ""),
        "figures": f,
        "ratios": ratios,
        "commit": commit,
        "machine_load": loads,
        "notes": [
            f"Measured at commit {commit}. Machine load "
            "(uptime; other engineers share these 2 cores): " + "; ".join(loads) + ".",
            "Both stacks are what `make up` starts (replication.devstack.stack: Airflow's scheduler, DAG "
            "processor, triggerer and API server, "
            f"the ship DAG on the schedule '{SHIP_SCHEDULE}'), on free ports, one after the other "
            "in this run at the same load sizes: `connect` = hbrep.spark.mode connect with the embedded default "
            "window "
            f"({SHIP_WINDOW_MS / 1000:.0f} s, stack.SHIP_WINDOW_MS) and max_active_runs 2 (the next run's ship task "
            "waits for the peer's lease and the open window hands over after its current pass), `submit` = "
            "spark-submit per run, one pass, max_active_runs 1. "
            "The verify DAG is paused once the stack is up and its catch-up runs marked failed (daily runs "
            "since its start date, each a spark-submit job: not replication); failover and log cleaner run "
            "on their schedules as in make up. "
            "Backlog: the ship DAG paused (a run in flight finishes the task it is in and stays frozen; it "
            "goes on when the DAG is unpaused, ahead of the triggered run, and its remaining tasks count in "
            "the drain time), "
            "the rows written by 4 clients (100 rows per batch): 1M rows of 100 bytes, then 1 GB of 1 KB rows "
            "(the size of the engine-only backlog, bench/e2e.py), "
            "then the DAG unpaused and a run triggered through the REST API; scheduler rows/s = rows / (trigger to "
            "the end of the ship that carried the last row: connect, the window pass's end, logged after its "
            "commit; submit, the ship task's end, the spark-submit job), so it includes the scheduler's start "
            "of the run and the run's tasks before the ship. 'Trigger to last row on the peer' is the peer's "
            "WAL write time of the last row, which is when the peer began applying the batch that held it "
            "(before the commit at 4c8ee48 the scheduler rows/s was taken to that point, with 200k and 100k "
            "rows). 'Rows/s within the passes' = the rows of the window "
            "passes that ended between the trigger and that end / their seconds (the ship task's log), the "
            "rate once a pass runs. With a window the pause waits for the open window's "
            "end (no next run comes to take it over). "
            "Lag = the peer WAL key's write time minus the cell's timestamp (the "
            "client's clock at send), every edit of the load. Run split: from Airflow's metadata DB "
            "(dag_run.queued_at, task_instance start/end), median over the runs that started in the phase "
            "(with nothing to ship the slowest run's wall is given too); "
            "gaps = time between tasks where none of the run's tasks ran. With a window the ship task stays "
            "open for the window even with nothing to ship (passes every replication.source.sleepforretries), "
            "so its run's wall is about the window; the target row 'without the ship task' takes it out. "
            "Pass times: from the ship task's log (ship_window: 'Pass N ... in X s'). 'CPU s while it shipped': "
            "each process's CPU time (psutil, sampled every 0.25 s by bench/cpu_share.py) over the passes that "
            "shipped the backlog (connect) or from the trigger to the ship task's end (submit), summed by "
            "component; a process that lived between two samples is missed, so each share is a lower bound. "
            "The bench reads the peer's WALs to see the backlog arrive only after a ship has ended, so that "
            "reading does not take the passes' CPU.",
        ],
    }
