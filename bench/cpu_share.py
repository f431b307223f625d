"""Who used the machine's CPU during a stretch of a benchmark: per-process CPU time, by component.

:class:`CpuSampler` reads every process's CPU time (user + system, psutil) every ``interval`` seconds
in a thread; :meth:`CpuSampler.used` gives the CPU seconds each component spent between two instants
(the samples nearest them). A process that starts and ends between two samples is missed, and one that
ends inside the stretch counts until its last sample: the figures are a lower bound of each share.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections import Counter

import psutil

# (what a command line contains, the component it is) in order; the first match wins.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("pyspark.daemon", "Spark's Python workers"),
    ("pyspark/daemon", "Spark's Python workers"),
    ("pyspark.worker", "Spark's Python workers"),
    ("SparkConnectServer", "the Spark Connect JVM"),
    ("SparkSubmit", "Spark's JVM (spark-submit, or an in-process session's driver)"),
    ("QuorumPeerMain", "ZooKeeper"),
    ("airflow", "Airflow (scheduler, API server, DAG processor, triggerer, tasks)"),
)
# How figures() names its figures (bench/registry.cpu_shares reads them back).
SPAN_FIGURE = "CPU sampled while it shipped"
USED_FIGURE = "CPU s while it shipped: "
# A process is named again at each sample while younger than this: until its exec it has its parent's name.
EXEC_GRACE_S = 2.0


class CpuSampler:
    """Samples every process's CPU seconds in a thread until :meth:`stop` (or the ``with`` block's end)."""

    def __init__(self, source_key: str, interval: float = 0.25) -> None:
        self.source_key = source_key
        self.interval = interval
        self._names: dict[tuple[int, float], str] = {}
        self._times: list[float] = []
        self._samples: list[dict[tuple[int, float], float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def __enter__(self) -> CpuSampler:
        self.start()
        return self

    def start(self) -> None:
        """Start sampling in the background."""
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop sampling (the samples taken stay readable)."""
        self._stop.set()
        self._thread.join(10)

    def _component(self, proc: psutil.Process) -> str:
        if proc.pid == os.getpid():
            return "the bench (load clients, sampler)"
        cmd = " ".join(proc.cmdline())
        if "replication.cluster.regionserver" in cmd:
            return "source region servers" if self.source_key in cmd else "peer region servers"
        return next((name for key, name in COMPONENTS if key in cmd), "other")

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.time()
            sample: dict[tuple[int, float], float] = {}
            for proc in psutil.process_iter():
                try:
                    key = (proc.pid, proc.create_time())  # a pid reused by a new process is a new key
                    if key not in self._names or now - key[1] < EXEC_GRACE_S:
                        # a young process may still carry its parent's command line (fork, then exec)
                        self._names[key] = self._component(proc)
                    cpu = proc.cpu_times()
                    sample[key] = cpu.user + cpu.system
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
            self._times.append(now)
            self._samples.append(sample)
            self._stop.wait(self.interval)

    def used(self, t0: float, t1: float) -> dict[str, float]:
        """CPU seconds per component between the samples nearest ``t0`` and ``t1`` (epoch seconds).

        A process first seen after ``t0`` counts from its start (its whole CPU time); one that ended
        before ``t1`` counts until its last sample. Empty when fewer than two samples fall in the stretch.
        """
        i, j = self._nearest(t0), self._nearest(t1)
        if j <= i:
            return {}
        before, last = self._samples[i], {}
        for sample in self._samples[i : j + 1]:
            last.update(sample)  # a process that ended in the stretch keeps its last sampled CPU time
        used: Counter[str] = Counter()
        for key, cpu in last.items():
            used[self._names[key]] += max(0.0, cpu - before.get(key, 0.0))
        return dict(used)

    def span(self, t0: float, t1: float) -> float:
        """Seconds between the samples :meth:`used` takes for ``t0`` and ``t1``."""
        i, j = self._nearest(t0), self._nearest(t1)
        return self._times[j] - self._times[i] if j > i else 0.0

    def _nearest(self, t: float) -> int:
        """Index of the first sample at or after ``t`` (the last sample when none is; -1 when none was taken)."""
        return min(bisect.bisect_left(self._times, t), len(self._times) - 1)

    def figures(self, prefix: str, t0: float, t1: float) -> dict[str, float]:
        """The result figures of a stretch: ``<prefix>`` + SPAN_FIGURE (seconds, with the core count) and
        ``<prefix>`` + USED_FIGURE + component for each component, largest first (read by
        bench/registry.cpu_shares)."""
        out = {f"{prefix}{SPAN_FIGURE} (s, x {os.cpu_count()} cores)": self.span(t0, t1)}
        for name, used in sorted(self.used(t0, t1).items(), key=lambda kv: -kv[1]):
            out[f"{prefix}{USED_FIGURE}{name}"] = used
        return out
