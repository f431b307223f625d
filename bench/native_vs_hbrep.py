"""Real HBase → real HBase at scale: HBase's own replication vs hbrep's DAGs under Airflow's scheduler.

Both sides on the same clusters in one run (replication/devstack/native_pair.py): real HBase 2.6 A and
B with three region servers each on this machine's two cores, table ``native_t`` shipped by an ordinary
HBase peer, ``hbrep_t`` by an hbrep shadow peer whose ``hbrep_ship`` DAG runs under Airflow's real
scheduler (local executor) with ship windows on a Spark Connect server. Each round, alternating which
side goes first:

1. **backlog drain, both together** (the issue's figure): ROWS rows of 1 KB written into both tables of A
   through Thrift while neither ships; then both sides started at once (HBase's enable_replication_peer; the
   ship DAG unpaused and triggered; the order of the two calls alternating by round), each timed until B
   holds its last row. CPU seconds of this bench's process trees by kind over the whole stretch, per million
   rows of both tables (the region servers serve both sides, so this CPU is not split by side). Both
   stopped again.
   **backlog drain, each alone**: a second backlog, then the first side started alone and timed to its
   last row, then the second side likewise (the first one left running, with nothing more to ship):
   rows/s, and CPU seconds by kind per million rows that are this side's own.
2. **lag under steady load** (the issue's): both running, rows written into each table at 50% of the slower
   side's drain rate together of the round, for STEADY minutes; one probe (bench/native_probe.py) writes a
   stamped row into each table every second and polls B: p50, p99 and max of write-to-visible per side, and
   each side's p50 in the stage's first and last minute (on this machine that load is close to what each side
   ships, and in some runs the lag grows through the stage: see LOAD_SHARE). The load then stops and both
   drain it.
   **lag under a light load**: 10% of the slower side's solo drain into each table for LIGHT minutes, the
   same probe: the lag when neither side is overloaded.
3. **catch-up after a peer outage**: the light load goes on, B's region servers are stopped for OUTAGE minutes
   and started again; the time from their start until each side's probe sees a row within 2 s of its write.

Then the load stops, both sides drain it, and both are stopped (the native peer disabled, the ship DAG
paused and its runs ended) before the next round's backlog. In the first round hbrep's drain runs under
py-spy (the Airflow scheduler with its executor's task processes, and Spark's Python workers): the
profile's shares by function and by hbrep module are figures of the result, which explain a missed goal.

Sizes: the issue's (1,000,000 rows, 10-minute load, 10-minute outage, 3 rounds; and a 3-minute light load)
unless ``--quick`` or the environment (BENCH_NATIVE_ROWS, BENCH_NATIVE_STEADY_MIN, BENCH_NATIVE_OUTAGE_MIN,
BENCH_NATIVE_ROUNDS, BENCH_NATIVE_LIGHT_MIN) says otherwise; the section's title names the sizes that ran.
BENCH_NATIVE_BUDGET_MIN (minutes from the start) stops the run from starting another round once passed; the
notes then say so.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote

import psutil

from bench._support import percentile
from bench.native_probe import KINDS, KindSampler, LagProbe, PacedLoad, profile_start, profile_stop, profile_summary
from replication.devstack.airflow_api import ACTIVE
from replication.devstack.jvm import port_accepts
from replication.devstack.native_pair import (
    HBREP_PEER,
    NATIVE_PEER,
    SHIP_DAG,
    TABLE_OF,
    NativePair,
    has_row,
    load_rows,
    native_pair,
    row_key,
)

NAME = "native_vs_hbrep"
VALUE = b"v" * 1024
REGIONSERVERS = 3
WINDOW_MS = 120_000  # the embedded stack's (make up) ship window, with runs every minute
LAG_UNDER_S = 2.0
# Disk: at the issue's sizes a round writes about 16 GB of 1 KB rows into A and again into B (the backlog and the
# 20 minutes of load), which filled this machine's disk in the first round. Both tables' store files are
# compressed (GZ, on both clusters, so both sides pay for it alike) and HBase's cleaners drop archived WALs and
# store files after a minute (HBase: 10 and 5 minutes); WALs themselves are never compressed (hbrep reads them).
COMPRESSION = "GZ"
DISK_SITE = {
    "hbase.master.logcleaner.ttl": "60000",
    "hbase.master.hfilecleaner.ttl": "60000",
    "hbase.master.cleaner.interval": "60000",  # the cleaners' chore (HBase: every 10 minutes)
}
# B's master updates hbase:meta (regions of a stopped server reassigned) while the outage stops meta's region
# server too; with HBase's 31 client retries (about 7 minutes) it aborted within the 10-minute outage (at
# efb4a40, round 1) and B's region servers, started again, never joined. More retries keep it waiting instead.
PEER_SITE = {"hbase.client.retries.number": "200"}
SIDES = (NATIVE_PEER, HBREP_PEER)
CPU_ALONE = "CPU s per million rows drained alone: "
DRAIN_TOGETHER = "backlog drain rows/s, both enabled together"
DRAIN_ALONE = "backlog drain rows/s, each alone"
LAG_STEADY = "lag p99 under the issue's steady load (50% of the slower drain together)"
LAG_LIGHT = "lag p99 under a light load (10% of the slower drain alone)"
NAN = float("nan")
# The issue's steady load: 50% of the slower side's drain rate with both sides enabled together, into each table
# (each side's drain is of its own table). On this 2-core machine (six region servers, two masters and Thrift
# servers, Airflow, Spark and the load) that is close to what either side ships beside the load: at efb4a40 (4,634
# rows/s per table) both sides' lag grew for the whole 10 minutes, at ddad395 (5,427 asked, 4,379 written; then
# 2,334) neither did. The stage is run as the issue asks and reported as what it is (the lag in its first and last
# minute beside p50/p99/max); a light load, LIGHT_SHARE of the slower solo drain into each table, then gives the
# lag when neither side is overloaded, and carries the outage.
LOAD_SHARE = 0.50
LIGHT_SHARE = 0.10


@dataclass(frozen=True)
class Sizes:
    """What one run measures: backlog rows, steady-load minutes, outage minutes, rounds."""

    rows: int
    steady_min: float
    outage_min: float
    rounds: int
    light_min: float = 3

    def label(self) -> str:
        return (f"{self.rows:,} rows of 1 KB, {self.steady_min:g}-minute steady load, {self.outage_min:g}-minute "
                f"peer outage, {self.rounds} rounds, {self.light_min:g}-minute light load")  # fmt: skip


FULL = Sizes(1_000_000, 10, 10, 3)
QUICK = Sizes(20_000, 1, 1, 3, 0.5)


ISSUE_SIZES = {"rows": "rows", "steady_min": "steady-load minutes", "outage_min": "outage minutes", "rounds": "rounds"}


def departures(sz: Sizes) -> str:
    """The issue's sizes that ``sz`` does not keep, each with the issue's value ("" when it keeps them all; the
    light load is this bench's own, not the issue's)."""

    def shown(value: float) -> str:
        return f"{value:,}" if isinstance(value, int) else f"{value:g}"

    return ", ".join(
        f"{name} {shown(getattr(sz, key))} (the issue's {shown(getattr(FULL, key))})"
        for key, name in ISSUE_SIZES.items()
        if getattr(sz, key) != getattr(FULL, key)
    )


def sizes(quick: bool, env: dict[str, str] | None = None) -> Sizes:
    """The issue's sizes (or ``--quick``'s), each overridden by its BENCH_NATIVE_* variable when set."""
    env = dict(os.environ if env is None else env)
    base = QUICK if quick else FULL
    return Sizes(
        rows=int(env.get("BENCH_NATIVE_ROWS", base.rows)),
        steady_min=float(env.get("BENCH_NATIVE_STEADY_MIN", base.steady_min)),
        outage_min=float(env.get("BENCH_NATIVE_OUTAGE_MIN", base.outage_min)),
        rounds=int(env.get("BENCH_NATIVE_ROUNDS", base.rounds)),
        light_min=float(env.get("BENCH_NATIVE_LIGHT_MIN", base.light_min)),
    )


def _say(line: str) -> None:
    print(f"[{NAME}] {time.strftime('%H:%M:%S')} {line}", flush=True)


def _start(pair: NativePair, side: str) -> None:
    if side == NATIVE_PEER:
        pair.source.admin("enable-peer", NATIVE_PEER)
    else:
        pair.api.set_paused(SHIP_DAG, False)
        pair.api.trigger(SHIP_DAG)


def _stop_both(pair: NativePair, timeout: float) -> None:
    """The native peer disabled; the ship DAG paused and every run of it ended (marked failed, so a window
    stops after its pass in flight; else it ends at its window's end)."""
    pair.source.admin("disable-peer", NATIVE_PEER)
    pair.pause_hbrep()
    for run in pair.api.runs(SHIP_DAG, states=ACTIVE):
        # an operator's stop: the window's task is killed, its on_kill ends the window after its pass
        with contextlib.suppress(Exception):
            pair.api.call("PATCH", f"/dags/{SHIP_DAG}/dagRuns/{quote(run['dag_run_id'], safe='')}",
                          json={"state": "failed"})  # fmt: skip
    deadline = time.monotonic() + timeout
    while pair.api.runs(SHIP_DAG, states=ACTIVE):
        if time.monotonic() > deadline:
            raise TimeoutError(f"ship DAG runs still active {timeout:.0f}s after the pause")
        time.sleep(2)


def _not_shipped_yet(pair: NativePair, side: str, row: bytes) -> None:
    """Raise when ``row`` (a backlog's last) is already in ``side``'s table on B before ``side`` was started: the
    side went on shipping after its stop, and its drain time would be meaningless."""
    if has_row(pair.peer, TABLE_OF[side], row):
        raise RuntimeError(f"{side}: the backlog's last row {row!r} was on B before {side} was started "
                           "(the side was still shipping after its stop)")  # fmt: skip


def _wait_rows(pair: NativePair, row: bytes, timeout: float, sides: tuple[str, ...] = SIDES) -> dict[str, float]:
    """Epoch seconds when ``row`` is first seen in each of ``sides``' tables on B (TimeoutError after ``timeout``)."""
    deadline = time.monotonic() + timeout
    seen: dict[str, float] = {}
    while True:
        for side in sides:
            if side not in seen and has_row(pair.peer, TABLE_OF[side], row):
                seen[side] = time.time()
        if len(seen) == len(sides):
            return seen
        if time.monotonic() > deadline:
            missing = sorted(set(sides) - set(seen))
            raise TimeoutError(f"{', '.join(missing)}: row {row!r} not on B within {timeout:.0f}s")
        time.sleep(0.2)


def _roots(pair: NativePair, spark_pid: int) -> dict[int, str]:
    """The bench's JVM pids by kind (KINDS): the region servers, masters and Thrift of both, Spark's JVM."""
    roots: dict[int, str] = {spark_pid: KINDS[3]}
    for cluster, rs_kind in ((pair.source, KINDS[0]), (pair.peer, KINDS[1])):
        for name, jvm in cluster.processes().items():
            pid = jvm.read_pid()
            if pid is not None:
                roots[pid] = rs_kind if name.startswith("rs") else KINDS[2]
    return roots


def _python_roots(spark_pid: int, airflow_sid: int) -> list[int]:
    """What py-spy follows: the Airflow scheduler (its executor's workers and their task processes are its
    children) and the Python children of Spark's JVM (pyspark's daemon and its workers)."""
    pids = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        try:
            if os.getsid(proc.pid) == airflow_sid and proc.ppid() == airflow_sid and "airflow scheduler" in cmd:
                pids.append(proc.pid)
        except (OSError, psutil.Error):
            continue
    with contextlib.suppress(psutil.Error):
        pids += [c.pid for c in psutil.Process(spark_pid).children() if "python" in c.name().lower()]
    return pids


def _restart_peer_regionservers(pair: NativePair) -> None:
    layout = pair.peer.layout()
    jvms = pair.peer.processes(pair.peer.classpath())
    for index, port in enumerate(layout.regionserver_ports, start=1):
        jvms[f"rs{index}"].start(lambda p=port: port_accepts(p), timeout=240)


def _stop_peer_regionservers(pair: NativePair) -> None:
    for index in range(1, len(pair.peer.layout().regionserver_ports) + 1):
        pair.peer.regionserver(index).stop()


def _per_million(used: dict[str, float], rows: int) -> dict[str, float]:
    return {kind: used.get(kind, 0.0) / rows * 1e6 for kind in KINDS}


def _spread(values: list[float], fmt: str = "{:,.0f}") -> str:
    return " / ".join(fmt.format(v) for v in values)


@dataclass
class Measured:
    """Every figure a run collects, per side and per round."""

    drain: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SIDES})  # both together
    drain_alone: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SIDES})
    lag: dict[str, list[tuple[float, float, float]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    lag_edges: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    lag_light: dict[str, list[tuple[float, float, float]]] = field(default_factory=lambda: {s: [] for s in SIDES})
    catchup: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SIDES})
    cpu: dict[str, list[dict[str, float]]] = field(default_factory=lambda: {s: [] for s in SIDES})  # alone
    cpu_together: list[dict[str, float]] = field(default_factory=list)  # per million rows of both tables
    unseen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SIDES, 0))
    ingest: list[float] = field(default_factory=list)
    asked: list[float] = field(default_factory=list)
    achieved: list[float] = field(default_factory=list)
    asked_light: list[float] = field(default_factory=list)
    achieved_light: list[float] = field(default_factory=list)
    profile: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


@dataclass
class Rounds:
    """The stages of one round on a running pair (see the module doc), recording into ``m``."""

    pair: NativePair
    sampler: KindSampler
    spark_pid: int
    sz: Sizes
    state: Path
    m: Measured

    def backlog_drain(self, r: int) -> None:
        """Both drains of the round: the sides started together on one backlog, then one by one on another."""
        order = list(SIDES) if r % 2 == 0 else list(reversed(SIDES))
        self._drain_together(r, order)
        _stop_both(self.pair, timeout=WINDOW_MS / 1000 + 180)
        self._drain_alone(r, order)

    def _write_backlog(self, r: int, base: int, what: str) -> bytes:
        """ROWS rows from ``base`` into both tables of A; the last row's key."""
        began = time.monotonic()
        for table in TABLE_OF.values():
            load_rows(self.pair.source, table, base, self.sz.rows, VALUE)
        self.m.ingest.append(2 * self.sz.rows / (time.monotonic() - began))
        _say(f"round {r + 1}: {what} backlog written ({self.m.ingest[-1]:,.0f} rows/s into A)")
        return row_key(base + self.sz.rows - 1)

    def _drain_together(self, r: int, order: list[str]) -> None:
        last = self._write_backlog(r, 2 * r * self.sz.rows, "first")
        for side in SIDES:
            _not_shipped_yet(self.pair, side, last)
        started: dict[str, float] = {}

        def start(side: str) -> None:
            t0 = time.time()
            _start(self.pair, side)
            # native: from enable_replication_peer's return (the tool JVM's start left out)
            started[side] = time.time() if side == NATIVE_PEER else t0

        with ThreadPoolExecutor(max_workers=len(SIDES)) as pool:
            calls = []
            for side in order:
                calls.append(pool.submit(start, side))
                time.sleep(0.05)  # the round's first side's call goes out first
            for call in calls:
                call.result()  # a side that did not start raises here
        seen = _wait_rows(self.pair, last, timeout=max(900.0, self.sz.rows / 10))
        for side in SIDES:
            self.m.drain[side].append(self.sz.rows / (seen[side] - started[side]))
        used = self.sampler.used(min(started.values()), max(seen.values()))
        self.m.cpu_together.append(_per_million(used, 2 * self.sz.rows))
        _say(f"round {r + 1}: together, " + ", ".join(f"{s} {self.m.drain[s][-1]:,.0f} rows/s" for s in SIDES))

    def _drain_alone(self, r: int, order: list[str]) -> None:
        last = self._write_backlog(r, (2 * r + 1) * self.sz.rows, "second")
        for side in order:
            _not_shipped_yet(self.pair, side, last)  # the second side was stopped while the first drained
            profiled = side == HBREP_PEER and r == 0  # the round every run has (a budget may end it early)
            spy = profile_start(_python_roots(self.spark_pid, self.pair.airflow.proc.pid), self.state / "profile") \
                if profiled else []  # fmt: skip
            t0 = time.time()
            _start(self.pair, side)
            if side == NATIVE_PEER:  # from enable_replication_peer's return: the tool JVM's start left out
                t0 = time.time()
            t1 = _wait_rows(self.pair, last, timeout=max(600.0, self.sz.rows / 20), sides=(side,))[side]
            if spy:
                profile_stop(spy)
                self.m.profile = profile_summary(self.state / "profile")
            self.m.drain_alone[side].append(self.sz.rows / (t1 - t0))
            self.m.cpu[side].append(_per_million(self.sampler.used(t0, t1), self.sz.rows))
            _say(f"round {r + 1}: {side} alone drained {self.m.drain_alone[side][-1]:,.0f} rows/s")

    def steady_and_outage(self, r: int) -> None:
        """The issue's steady load with the probe, drained; then the light load, and B's region servers stopped
        and started under it; both sides drained of it at the end."""
        probe = LagProbe(self.pair.source, self.pair.peer, tag=b"r%d-" % r)
        probe.start()
        try:
            self._steady(r, probe, 10**8 + r * 10**7)
            self._light_and_outage(r, probe, 10**8 + r * 10**7 + 6 * 10**6)
        finally:
            probe.stop()
        if probe.error:
            raise RuntimeError(probe.error)

    @contextlib.contextmanager
    def _paced(self, rate: float, first_row: int) -> Iterator[PacedLoad]:
        """A paced load at ``rate`` rows/s per table (about 20 batches a second) for the block; after it, the
        load stopped (raising its error, if any) and each side's table on B holding its last row. A block that
        raises only stops the load."""
        load = PacedLoad(
            self.pair.source, list(TABLE_OF.values()), first_row, rate, VALUE, batch=max(50, int(rate / 20))
        )
        load.start()
        try:
            yield load
        finally:
            load.stop()
        if load.error:
            raise RuntimeError(load.error)
        for side in SIDES:
            _wait_rows(self.pair, row_key(first_row + load.written - 1), timeout=1200, sides=(side,))

    def _lag_figures(self, probe: LagProbe, s0: float, s1: float, wait: float) -> dict[str, tuple]:
        """Each side's (p50, p99, max) of the probes written in [s0, s1], once all are seen (or ``wait`` s)."""
        deadline = time.monotonic() + wait
        while not probe.all_seen(s1) and time.monotonic() < deadline:
            time.sleep(0.5)
        out = {}
        for side in SIDES:
            values = probe.lags(side, s0, s1) or [float("inf")]
            self.m.unseen[side] += probe.unseen(side, s0, s1)
            out[side] = (percentile(values, 50), percentile(values, 99), max(values))
        return out

    def _steady(self, r: int, probe: LagProbe, first_row: int) -> None:
        rate = LOAD_SHARE * min(self.m.drain[s][-1] for s in SIDES)
        self.m.asked.append(rate)
        with self._paced(rate, first_row) as load:  # both sides then ship what it left
            s0 = time.time()
            time.sleep(self.sz.steady_min * 60)
            s1 = time.time()
        self.m.achieved.append(load.written / (s1 - s0))
        lags = self._lag_figures(probe, s0, s1, wait=300)
        minute = min(60.0, (s1 - s0) / 2)
        for side in SIDES:
            self.m.lag[side].append(lags[side])
            edges = [probe.lags(side, s0, s0 + minute), probe.lags(side, s1 - minute, s1)]
            self.m.lag_edges[side].append(tuple(percentile(e, 50) if e else float("inf") for e in edges))
            _say(f"round {r + 1}: {side} lag p50/p99/max {lags[side]} s at {rate:,.0f} rows/s (50%), "
                 f"p50 first/last minute {self.m.lag_edges[side][-1]}")  # fmt: skip

    def _light_and_outage(self, r: int, probe: LagProbe, first_row: int) -> None:
        rate = LIGHT_SHARE * min(self.m.drain_alone[s][-1] for s in SIDES)
        self.m.asked_light.append(rate)
        with self._paced(rate, first_row) as load:
            s0 = time.time()
            time.sleep(self.sz.light_min * 60)
            s1 = time.time()
            self.m.achieved_light.append(load.written / (s1 - s0))
            lags = self._lag_figures(probe, s0, s1, wait=300)  # the light load goes on meanwhile
            for side in SIDES:
                self.m.lag_light[side].append(lags[side])
                _say(f"round {r + 1}: {side} lag p50/p99/max {lags[side]} s at {rate:,.0f} rows/s (light)")
            self._outage(r, probe)

    def _outage(self, r: int, probe: LagProbe) -> None:
        _stop_peer_regionservers(self.pair)
        _say(f"round {r + 1}: B's region servers stopped for {self.sz.outage_min:g} min")
        time.sleep(self.sz.outage_min * 60)
        restarted = time.time()
        _restart_peer_regionservers(self.pair)
        self.sampler.roots.update(_roots(self.pair, self.spark_pid))  # the new region servers' pids
        deadline = time.monotonic() + max(300.0, 3 * self.sz.outage_min * 60)
        back: dict[str, float] = {}
        while len(back) < len(SIDES) and time.monotonic() < deadline:
            for side in SIDES:
                moment = probe.back_under(side, restarted, LAG_UNDER_S)
                if side not in back and moment is not None:
                    back[side] = moment - restarted
            time.sleep(1)
        for side in SIDES:
            self.m.catchup[side].append(back.get(side, float("inf")))
        _say(f"round {r + 1}: catch-up {back}")


def run(quick: bool) -> dict:
    """Each side's drain, lag under load, catch-up and CPU per million rows, and hbrep / native."""
    from replication.devstack.spark_connect import SparkConnectServer
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.net import free_port

    sz = sizes(quick)
    load_before = _uptime()
    began = time.monotonic()
    m = Measured()
    with tempfile.TemporaryDirectory(prefix="bench-native-") as tmp:
        state = Path(tmp)
        zk = ZooKeeperServer(state / "zk", free_port())
        zk.start()
        spark = SparkConnectServer(state / "spark", free_port(), driver_memory_mb=1024)
        try:
            spark.start()
            with native_pair(state, zk.port, spark.port, free_port(), regionservers=REGIONSERVERS, heap_mb=768,
                             window_ms=WINDOW_MS, tag="bench-native", compression=COMPRESSION,
                             extra_site=DISK_SITE, peer_site=PEER_SITE) as pair:  # fmt: skip
                _say(f"clusters ({REGIONSERVERS} region servers each) and Airflow up; sizes: {sz.label()}")
                spark_pid = spark.read_pid() or 0
                with KindSampler(_roots(pair, spark_pid), pair.airflow.proc.pid) as sampler:
                    rounds = Rounds(pair, sampler, spark_pid, sz, state, m)
                    pair.add_peers()
                    budget = float(os.environ.get("BENCH_NATIVE_BUDGET_MIN", "0")) * 60  # 0: no limit
                    for r in range(sz.rounds):
                        if budget and r and time.monotonic() - began > budget:
                            m.failures.append(f"round {r + 1} not started: BENCH_NATIVE_BUDGET_MIN passed")
                            break
                        try:
                            rounds.backlog_drain(r)
                            rounds.steady_and_outage(r)
                            _stop_both(pair, timeout=WINDOW_MS / 1000 + 180)
                        except Exception as exc:  # the rounds done so far are kept, and the notes say why it stopped
                            m.failures.append(f"round {r + 1}: {type(exc).__name__}: {exc}")
                            _say(f"stopping after {m.failures[-1]}")
                            break
        finally:
            spark.stop()
            zk.stop()
    return _result(sz, m, load_before)


def _ratio(hbrep: float, native: float) -> float:
    return hbrep / native if native else float("inf")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _result(sz: Sizes, m: Measured, load_before: str) -> dict:
    drain, lag, catchup, cpu, unseen = m.drain, m.lag, m.catchup, m.cpu, m.unseen
    ran = replace(sz, rounds=min(len(v) for v in catchup.values()))  # the rounds run to their end

    def med(values) -> float:
        values = list(values)
        return statistics.median(values) if values else float("nan")

    f: dict[str, object] = {
        "sizes run": ran.label() + ("" if ran == sz else f" (of {sz.rounds} planned)"),
        "region servers per cluster (on this machine's two cores)": REGIONSERVERS,
        "backlogs written into A (rows/s, both tables; two per round)": _spread(m.ingest),
        "steady load per table (rows/s: 50% of the slower drain together, per round)": _spread(m.asked),
        "steady load per table, written (rows/s, per round)": _spread(m.achieved),
        "light load per table (rows/s: 10% of the slower drain alone, per round)": _spread(m.asked_light),
        "light load per table, written (rows/s, per round)": _spread(m.achieved_light),
    }
    for side in SIDES:
        f[f"{side}: backlog drain, both enabled together (rows/s, median)"] = med(drain[side])
        f[f"{side}: backlog drain, both enabled together (rows/s, per round)"] = _spread(drain[side])
    for side in SIDES:
        f[f"{side}: backlog drain, alone (rows/s, median)"] = med(m.drain_alone[side])
        f[f"{side}: backlog drain, alone (rows/s, per round)"] = _spread(m.drain_alone[side])
    for load, lags in (("50%", lag), ("light", m.lag_light)):
        for side in SIDES:
            f[f"{side}: lag p50 under the {load} load (s, median of rounds)"] = med(x[0] for x in lags[side])
            f[f"{side}: lag p99 under the {load} load (s, median of rounds)"] = med(x[1] for x in lags[side])
            f[f"{side}: lag max under the {load} load (s, max of rounds)"] = max(
                (x[2] for x in lags[side]), default=NAN
            )
            f[f"{side}: lag p99 under the {load} load (s, per round)"] = _spread([x[1] for x in lags[side]], "{:.2f}")
    for side in SIDES:
        f[f"{side}: lag p50 in the 50% load's first / last minute (s, per round)"] = ", ".join(
            _spread(list(edge), "{:.1f}") for edge in m.lag_edges[side]
        )
    for side in SIDES:
        f[f"{side}: probes written under either load never seen on B"] = unseen[side]
    for side in SIDES:
        f[f"{side}: catch-up after the outage (s, median)"] = med(catchup[side])
        f[f"{side}: catch-up after the outage (s, per round)"] = _spread(catchup[side], "{:.1f}")
    for side in SIDES:
        for kind in KINDS:
            values = [c[kind] for c in cpu[side]]
            if med(values) >= 0.05:
                f[f"{side}: {CPU_ALONE}{kind} (median)"] = med(values)
        f[f"{side}: {CPU_ALONE}all kinds (median)"] = med(sum(c.values()) for c in cpu[side])
    for kind in KINDS:
        values = [c[kind] for c in m.cpu_together]
        if med(values) >= 0.05:
            f[f"both together: CPU s per million rows drained (both tables): {kind} (median)"] = med(values)
    cores = os.cpu_count() or 1
    for side in SIDES:
        peer_rs = med(c[KINDS[1]] for c in cpu[side])
        f[f"{side}: drain ceiling if the peer's region servers had all {cores} cores (rows/s)"] = (
            cores * 1e6 / peer_rs if peer_rs else float("inf")
        )
    f.update(m.profile)
    lag_p99 = {load: {side: f[f"{side}: lag p99 under the {load} load (s, median of rounds)"] for side in SIDES}
               for load in ("50%", "light")}  # fmt: skip
    ratios = {
        f"hbrep / native: {DRAIN_TOGETHER} (target >= 1.5)": _ratio(med(drain[HBREP_PEER]), med(drain[NATIVE_PEER])),
        f"hbrep / native: {DRAIN_ALONE} (target >= 1.5)": _ratio(
            med(m.drain_alone[HBREP_PEER]), med(m.drain_alone[NATIVE_PEER])
        ),
        f"hbrep / native: {LAG_STEADY} (target <= 2)": _ratio(lag_p99["50%"][HBREP_PEER], lag_p99["50%"][NATIVE_PEER]),
        f"hbrep / native: {LAG_LIGHT} (target <= 2)": _ratio(
            lag_p99["light"][HBREP_PEER], lag_p99["light"][NATIVE_PEER]
        ),
        "hbrep / native: catch-up time after the outage (target <= 1)": _ratio(
            med(catchup[HBREP_PEER]), med(catchup[NATIVE_PEER])
        ),
    }
    full = sz == FULL
    not_the_issues = f"; NOT the issue's sizes: {off}" if (off := departures(sz)) else ""
    command = "make bench ONLY=native_vs_hbrep"
    if not full:
        command += (
            f" BENCH_NATIVE_ROWS={sz.rows} BENCH_NATIVE_STEADY_MIN={sz.steady_min:g}"
            f" BENCH_NATIVE_OUTAGE_MIN={sz.outage_min:g} BENCH_NATIVE_ROUNDS={sz.rounds}"
            f" BENCH_NATIVE_LIGHT_MIN={sz.light_min:g}"
        )
    if os.environ.get("BENCH_NATIVE_BUDGET_MIN"):
        command += f" BENCH_NATIVE_BUDGET_MIN={os.environ['BENCH_NATIVE_BUDGET_MIN']}"
    return {
        "title": f"Real HBase → real HBase at scale, through the scheduler: HBase's native replication vs hbrep "
        f"({ran.label()}{not_the_issues})",
        "command": command,
        "figures": f,
        "ratios": ratios,
        "machine_load": [load_before, _uptime()],
        "notes": [
            f"Real HBase 2.6 A and B, {REGIONSERVERS} region servers each, all on this machine's two cores with "
            "Airflow, Spark Connect and the load (other engineers' work shares the cores too; uptime before/after: "
            f"{load_before}; {_uptime()}). native = an ordinary HBase peer of A (table native_t); hbrep = a "
            "shadow peer of A (table hbrep_t) shipped by the hbrep_ship DAG under Airflow's real scheduler, "
            f"ship windows of {WINDOW_MS // 1000} s on a Spark Connect server, runs every minute. Both tables' "
            f"store files {COMPRESSION}-compressed on both clusters and HBase's WAL and store-file cleaners at 60 s "
            "(the round's 16 GB of rows per cluster did not fit this machine's disk otherwise); WALs uncompressed. "
            "Each table is one region (created unsplit, rows written in key order), so each table's writes land "
            "on one region server of A and of B at a time.",
            "Backlog drain, both together (the issue's figure and ratio): both tables' backlog written while "
            "neither side ships, then both started at once (the two calls in threads, the round's first side's "
            "first), each side timed from its own start (native: from the return of enable_replication_peer, "
            "HBase's Admin call; hbrep: from the REST call that unpauses and triggers the ship DAG, so the "
            "scheduler's start of the run counts) to its last row on B; the two share the cores, the source's and "
            "the peer's region servers. CPU over that stretch is given per million rows of both tables, not split "
            "by side. Backlog drain, alone: a second backlog, each side started alone, the round's first side "
            "alternating; the first side stays running (idle) while the second drains, so its idle processes "
            "count in the second side's CPU. CPU per side ('drained alone'): user+system seconds of this bench's "
            "process trees only (psutil), by kind, over that side's solo drain, per million rows drained. Drain "
            "ceiling: the machine's cores over the peer region servers' CPU per row alone (HBase's "
            "ReplicationSink on B, the same code for both sides), the rows/s no shipper passes on this machine.",
            "Steady load (the issue's): 50% of the slower side's drain rate with both enabled together, into each "
            "table, for the steady minutes, written by one Thrift client (where 'written' is below the rate asked, "
            "that client fell short). On this machine that is close to what each side ships beside the load: in "
            "efb4a40's round 1 (4,634 rows/s) both lags grew through the stage (p50 of the first / last minute: "
            "native 6.7 / 108 s, hbrep 17.5 / 137 s; that run ended at B's master abort, since fixed), so each "
            "side's p50 of the stage's first and last minute is given beside p50/p99/max: a last minute far above "
            "the first is overload. The load then stops and both sides ship what it left. "
            "Light load: 10% of the slower side's solo drain into each table, for the light minutes: the lag when "
            "neither side is overloaded. Lag: one probe for both sides writes a stamped row into each table of A "
            "every second and polls B every 0.1 s; write-to-visible. Catch-up: under the light load, B's region "
            f"servers stopped (SIGTERM) for the outage, then started; the time from their start until a probe "
            f"written after it is seen within {LAG_UNDER_S:g} s.",
            "Profile: py-spy over hbrep's Python processes (the Airflow scheduler with its task processes, Spark's "
            "Python workers) during hbrep's drain alone of the first round; 'profile:' figures are shares of its "
            "samples (idle threads left out), by leaf function and by innermost hbrep module.",
            *(["Stopped early: " + "; ".join(m.failures)] if m.failures else []),
        ],
    }
