"""The native_vs_hbrep bench's instruments: a paced load, one lag probe for both sides, CPU by process kind,
and py-spy over hbrep's Python processes.

- :class:`PacedLoad`: rows of 1 KB into both tables of A at a fixed rate (one Thrift connection).
- :class:`LagProbe`: every ``interval`` s writes one stamped row into each table of A, and polls B until
  it is there; each probe's write-to-visible time, per side.
- :class:`KindSampler`: :class:`bench.cpu_share.CpuSampler` over the process trees of this bench only
  (other users of the machine are left out), named by kind: source region servers, peer region servers,
  HBase masters and Thrift, Spark's JVM, Spark's Python workers (hbrep's ship job), Airflow, hbrep's
  Airflow tasks.
- :func:`profile_start` / :func:`profile_summary`: py-spy ``record --format raw`` of the given pids
  (subprocesses followed), summed into shares of samples by function and by hbrep module.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from bench.cpu_share import EXEC_GRACE_S, CpuSampler
from replication.devstack.hbase import RealHBase
from replication.devstack.native_pair import FAMILY, TABLE_OF, row_key

PROBE_PREFIX = b"probe-"


class PacedLoad(threading.Thread):
    """Rows ``row_key(start + i)`` of ``value`` into every table in ``tables`` at ``rate`` rows/s per table,
    in batches of ``batch``, until :meth:`stop`; ``written`` counts the rows of one table."""

    def __init__(self, cluster: RealHBase, tables: list[str], start: int, rate: float, value: bytes,
                 batch: int = 50) -> None:  # fmt: skip
        super().__init__(name="paced-load", daemon=True)
        self.cluster, self.tables, self.start_at, self.rate = cluster, tables, start, rate
        self.value, self.batch = value, batch
        self.written = 0
        self.error = ""
        self.seconds = 0.0
        self._halt = threading.Event()

    def stop(self) -> None:
        """Stop after the batch in flight."""
        self._halt.set()
        self.join(120)

    def _put(self, connection, table: str, rows: list[bytes], timeout: float = 240.0):
        """One batch of puts, reconnecting and retrying while A does not take it; the connection in use."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with connection.table(table).batch() as batch:
                    for row in rows:
                        batch.put(row, {b"f:q": self.value})
                return connection
            except Exception:
                if time.monotonic() > deadline:
                    raise
                connection.close()
                time.sleep(0.5)
                connection = self.cluster.happybase_connection()

    def run(self) -> None:
        connection = self.cluster.happybase_connection()
        began = time.monotonic()
        try:
            while not self._halt.is_set():
                rows = [row_key(self.start_at + self.written + i) for i in range(self.batch)]
                for table in self.tables:
                    connection = self._put(connection, table, rows)
                self.written += self.batch
                due = began + self.written / self.rate
                self._halt.wait(max(0.0, due - time.monotonic()))
        except Exception as exc:  # reported by the caller
            self.error = f"paced load stopped at row {self.written}: {exc}"
        finally:
            self.seconds = time.monotonic() - began
            connection.close()


@dataclass
class Probe:
    """One probe row: when it was written into A (epoch s) and when each side first saw it on B."""

    row: bytes
    written: float
    seen: dict[str, float] = field(default_factory=dict)


class LagProbe:
    """One sampler for both sides: every ``interval`` s a stamped row into each side's table on A (one
    thread), and B polled every ``poll`` s for the oldest probes each side has not shown yet (another
    thread, so a B that does not answer, in an outage, never holds up the writes)."""

    def __init__(
        self, source: RealHBase, peer: RealHBase, tag: bytes = b"", interval: float = 1.0, poll: float = 0.1
    ) -> None:
        self.source, self.peer, self.interval, self.poll = source, peer, interval, poll
        self.tag = tag  # in every probe's row key, so probes of another sampler (an earlier round) never count
        self.probes: list[Probe] = []
        self.error = ""
        self._halt = threading.Event()
        self._threads = [threading.Thread(target=self._write, name="probe-write", daemon=True),
                         threading.Thread(target=self._read, name="probe-read", daemon=True)]  # fmt: skip

    def start(self) -> None:
        """Start writing and polling."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop writing and polling."""
        self._halt.set()
        for thread in self._threads:
            thread.join(60)

    def _write(self) -> None:
        writer = self.source.happybase_connection()
        n = 0
        try:
            while not self._halt.is_set():
                now = time.time()
                row = PROBE_PREFIX + self.tag + b"%08d" % n
                n += 1
                for table in TABLE_OF.values():
                    writer = self.source.put_until_taken(writer, table, row, {b"f:probe": b"%.6f" % now})
                self.probes.append(Probe(row, now))
                self._halt.wait(max(0.0, now + self.interval - time.time()))
        except Exception as exc:
            self.error = f"lag probe stopped writing: {exc}"
        finally:
            writer.close()

    def _read(self) -> None:
        reader = None
        while not self._halt.is_set():
            reader = self._poll(reader)
            self._halt.wait(self.poll)
        if reader is not None:
            reader.close()

    def _poll(self, reader):
        """Look on B for the oldest probes a side has not shown yet (one region, so they arrive in order);
        B may be down (an outage): the connection is dropped and made again at the next poll."""
        try:
            reader = reader or self.peer.happybase_connection(timeout=5_000)
            for side, table in TABLE_OF.items():
                pending = [p for p in list(self.probes) if side not in p.seen][:50]
                if not pending:
                    continue
                found = {row for row, _ in reader.table(table).rows([p.row for p in pending], columns=[FAMILY])}
                now = time.time()
                for probe in pending:
                    if probe.row in found:
                        probe.seen[side] = now
            return reader
        except Exception:
            with contextlib.suppress(Exception):
                if reader is not None:
                    reader.close()
            return None

    def all_seen(self, until: float) -> bool:
        """True when both sides have shown every probe written up to ``until``."""
        return all(len(p.seen) == len(TABLE_OF) for p in list(self.probes) if p.written <= until)

    def lags(self, side: str, t0: float, t1: float) -> list[float]:
        """Write-to-visible seconds of ``side``'s probes written in [t0, t1] (unseen ones left out)."""
        return [p.seen[side] - p.written for p in self.probes if t0 <= p.written <= t1 and side in p.seen]

    def unseen(self, side: str, t0: float, t1: float) -> int:
        """Probes written in [t0, t1] that ``side`` never delivered."""
        return sum(1 for p in self.probes if t0 <= p.written <= t1 and side not in p.seen)

    def back_under(self, side: str, after: float, limit: float) -> float | None:
        """The first moment (epoch s) after ``after`` when a probe of ``side`` written after ``after`` was
        seen within ``limit`` s of its write; None when none was yet."""
        times = [p.seen[side] for p in self.probes
                 if p.written >= after and side in p.seen and p.seen[side] - p.written < limit]  # fmt: skip
        return min(times) if times else None


KINDS = (
    "source region servers",
    "peer region servers",
    "HBase masters and Thrift servers",
    "Spark (the Connect server's JVM)",
    "Spark's Python workers (hbrep's ship job)",
    "hbrep's Airflow tasks (ship windows: snapshot, commit)",
    "Airflow (scheduler, DAG processor, triggerer, API server, executor)",
)


class KindSampler(CpuSampler):
    """CPU seconds per process kind (:data:`KINDS`) of this bench's own process trees."""

    def __init__(self, roots: dict[int, str], airflow_sid: int, interval: float = 0.5) -> None:
        super().__init__(source_key="", interval=interval)
        self.roots, self.airflow_sid = roots, airflow_sid

    def _kind(self, pid: int, ppid: dict[int, int], name: str) -> str:
        """The kind of ``pid``: that of the nearest root among it and its ancestors (a Python process under
        Spark's JVM is a Python worker), else an Airflow task or Airflow when in Airflow's session, else other."""
        member, depth = pid, 0
        while member and depth < 64:
            kind = self.roots.get(member)
            if kind is not None:
                if kind == KINDS[3] and member != pid and "python" in name.lower():
                    return KINDS[4]
                return kind
            member, depth = ppid.get(member, 0), depth + 1
        try:
            if os.getsid(pid) != self.airflow_sid:
                return "other"
            title = " ".join(psutil.Process(pid).cmdline())
        except (OSError, psutil.Error):
            return "other"
        if title.startswith("airflow worker -- ") and "LocalExecutor" not in title:
            return KINDS[5]
        return KINDS[6]

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.time()
            procs = list(psutil.process_iter(["ppid", "name", "create_time"]))
            ppid = {p.pid: p.info["ppid"] or 0 for p in procs}
            sample: dict[tuple[int, float], float] = {}
            for proc in procs:
                key = (proc.pid, proc.info["create_time"] or 0.0)
                if self._names.get(key, "other") == "other" or now - key[1] < EXEC_GRACE_S:
                    self._names[key] = self._kind(proc.pid, ppid, proc.info["name"] or "")
                if self._names[key] == "other":
                    continue
                try:
                    cpu = proc.cpu_times()
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
                sample[key] = cpu.user + cpu.system
            self._times.append(now)
            self._samples.append(sample)
            self._stop.wait(self.interval)


def profile_start(pids: list[int], out: Path, rate: int = 50) -> list[subprocess.Popen]:
    """py-spy ``record`` (raw collapsed stacks, subprocesses followed, idle frames left out) of each pid,
    into ``out``-<pid>.txt, until :func:`profile_stop`."""
    spy = str(Path(sys.executable).parent / "py-spy")
    procs = []
    for pid in pids:
        command = [spy, "record", "--pid", str(pid), "--subprocesses", "--format", "raw", "--rate", str(rate),
                   "--nonblocking", "--output", f"{out}-{pid}.txt"]  # fmt: skip
        procs.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def profile_stop(procs: list[subprocess.Popen]) -> None:
    """SIGINT each py-spy (it then writes its file), SIGKILL one that has not ended within 30 s."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def profile_summary(out: Path, top: int = 6) -> dict[str, float]:
    """Shares of py-spy's samples in ``out``-*.txt: the ``top`` functions by self time (the leaf frame)
    and the ``top`` hbrep modules (the innermost ``replication/`` frame of a stack, else the leaf's file)."""
    leaves: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    total = 0
    for path in sorted(out.parent.glob(f"{out.name}-*.txt")):
        for line in path.read_text(errors="replace").splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = [f for f in stack.split(";") if f and not f.startswith("process ")]
            if not frames:
                continue
            n = int(count)
            total += n
            leaves[_short(frames[-1])] += n
            ours = [f for f in frames if "replication/" in f]
            modules[_module(ours[-1] if ours else frames[-1])] += n
    if not total:
        return {}
    out_figures = {"profile: samples": float(total)}
    for name, n in leaves.most_common(top):
        out_figures[f"profile: self time: {name}"] = n / total
    for name, n in modules.most_common(top):
        out_figures[f"profile: module: {name}"] = n / total
    return out_figures


def _short(frame: str) -> str:
    """``function (path/file.py:line)`` → ``function (file.py)``."""
    function, _, where = frame.partition(" (")
    file = where.split(":")[0].rstrip(")")
    return f"{function} ({Path(file).name})" if file else function


def _module(frame: str) -> str:
    where = frame.partition(" (")[2].split(":")[0].rstrip(")")
    if "replication/" in where:
        return "replication/" + where.split("replication/", 1)[1]
    return Path(where).name or frame
