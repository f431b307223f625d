"""Shared pieces of the replication benchmarks (not a benchmark itself: no NAME).

- :func:`replication_pair`: a real ZooKeeper, source cluster A → peer cluster B, table ``bench`` on both,
  peer ``1`` added; everything stopped on exit.
- :func:`spark`: one local[2] SparkSession for every benchmark of a ``make bench`` run.
- :func:`load`: a timestamped parallel write load (cell timestamp = client wall clock in ms, so the peer's
  WAL tells when each edit arrived).
- :func:`drain`: ship cycles back to back until nothing is left to ship.
- :func:`peer_delays`: write-to-peer delay of every replicated cell, read from the peer's WALs.
- :func:`plot_series`: a PNG under bench/results/ (matplotlib, Agg).
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Where results and plots go: bench/results/, or bench/results/quick/ during a quick pass (set by the registry).
RESULTS = REPO / "bench" / "results"
TABLE = "bench"
FAMILY = b"f"

# Small retry settings as in the tests; everything else is HBase's defaults.
BENCH_CONF = {
    "replication.source.sleepforretries": "100",
    "replication.source.maxretriesmultiplier": "4",
    "hbrep.source.ship.max.attempts": "6",
    "replication.sleep.before.failover": "0",
}
# Region servers of the throughput and lag benchmarks keep their ZooKeeper session through CPU starvation
# (load average 15 on 2 cores seen here: the embedded 6 s session expired for all of A's servers once,
# mid-backlog). The failover benchmark keeps the embedded 6 s, since it measures detection.
STEADY_CONF = {"zookeeper.session.timeout": "30000"}

_SPARK = None


def spark():
    """The run's SparkSession (local[2]); created on first use, reused by every benchmark."""
    global _SPARK
    if _SPARK is None:
        from replication.spark import spark_session

        _SPARK = spark_session("hbrep-bench", master="local[2]")
    return _SPARK


@dataclass
class BenchPair:
    """Source cluster, peer cluster, their keys (ClusterKey) and the shared configuration."""

    source: object
    peer: object
    source_key: object
    peer_key: object
    conf: object
    zk_port: int
    tmp: str


@contextlib.contextmanager
def zookeeper(tmp: str) -> Iterator[object]:
    """A real standalone ZooKeeper server on a free loopback port, stopped on exit."""
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.net import free_port

    server = ZooKeeperServer(Path(tmp) / "zk", free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def replication_pair(
    source_rs: int = 3, peer_rs: int = 2, overrides: dict[str, str] | None = None, peer: bool = True
) -> Iterator[BenchPair]:
    """ZooKeeper + cluster A (``source_rs`` servers) → B (``peer_rs``), table ``bench`` (f, scope 1), peer 1."""
    from replication.cluster.embedded import start_cluster
    from replication.config import Config
    from replication.fs import get_filesystem
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey
    from replication.zk.layout import ZNodePaths
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    conf = Config.load(env={}, overrides={**BENCH_CONF, **(overrides or {})})
    with tempfile.TemporaryDirectory(prefix="hbrep-bench-") as tmp, zookeeper(tmp) as zk:
        conf = conf.with_overrides({"hbrep.state.dir": os.path.join(tmp, "state")})
        a_key, b_key = f"127.0.0.1:{zk.port}:/bench-a", f"127.0.0.1:{zk.port}:/bench-b"
        with (
            start_cluster(a_key, os.path.join(tmp, "a"), source_rs, conf=conf, name="a") as a,
            start_cluster(b_key, os.path.join(tmp, "b"), peer_rs, conf=conf, name="b") as b,
        ):
            for cluster in (a, b):
                fs, root = get_filesystem(cluster.root)
                TableRegistry(fs, root).create(TableDescriptor.of(TABLE, ColumnFamilyDescriptor("f", scope=1)))
            pair = BenchPair(a, b, ClusterKey.parse(a_key), ClusterKey.parse(b_key), conf, zk.port, tmp)
            if peer:
                with connected(pair.source_key) as zkc:
                    ReplicationPeerStorage(zkc, ZNodePaths(conf, parent=pair.source_key.znode_parent)).add_peer(
                        "1", ReplicationPeerConfig(cluster_key=b_key), enabled=True
                    )
            try:
                yield pair
            except BaseException:
                _print_server_logs(tmp)  # the temp dir (and the logs) go away on exit
                raise


def _print_server_logs(tmp: str, lines: int = 15) -> None:
    """The last lines of every region server log under ``tmp`` (on stderr), to say why a bench failed."""
    import glob
    import sys

    for path in sorted(glob.glob(os.path.join(tmp, "*", ".hbrep", "logs", "*.log"))):
        with open(path, errors="replace") as log:
            tail = log.readlines()[-lines:]
        print(f"--- {path}", *tail, sep="", file=sys.stderr)


def cycle(pair: BenchPair, *, spark_session=None):
    """One ship cycle of the pair's source (Spark job in ``spark_session``, or spark-submit when None)."""
    from replication.jobs.launch import runner_for
    from replication.source.cycle import run_cycle
    from replication.zk.client import connected

    with connected(pair.source_key) as zk:
        return run_cycle(zk, pair.source_key, pair.conf, runner=runner_for(pair.conf, spark_session))


@dataclass
class DrainStats:
    cycles: int
    seconds: float
    rows: int
    bytes: int
    entries: int
    cycle_seconds: list[float]


def drain(pair: BenchPair, spark_session, max_cycles: int = 200) -> DrainStats:
    """Ship cycles back to back until a cycle finds nothing to ship; totals over the cycles that shipped."""
    from replication.errors import HbrepError

    rows = nbytes = entries = cycles = 0
    times: list[float] = []
    for _ in range(max_cycles):
        t0 = time.monotonic()
        report = cycle(pair, spark_session=spark_session)
        times.append(time.monotonic() - t0)
        failed = [q for q in report.queues if q.status not in ("ok", "disabled")]
        if failed:
            raise HbrepError(f"bench: queue {failed[0].queue} failed: {failed[0].error}")
        if not report.spark_job:
            times.pop()
            break
        cycles += 1
        for peer in report.peers.values():
            rows += peer.rows_shipped
            nbytes += peer.bytes_shipped
            entries += peer.entries_shipped
    # the last (empty) cycle only confirmed the drain: its time is not shipping time
    return DrainStats(cycles, sum(times), rows, nbytes, entries, times)


@dataclass
class LoadResult:
    rows: int
    bytes: int
    seconds: float
    retries: int = 0  # batches re-sent through a fresh client

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds

    @property
    def mb_per_s(self) -> float:
        return self.bytes / self.seconds / 1e6


def load(
    pair: BenchPair,
    rows: int,
    *,
    threads: int = 4,
    batch: int = 100,
    value_size: int = 100,
    rate: float | None = None,
    prefix: bytes = b"r",
    stop: threading.Event | None = None,
) -> LoadResult:
    """Write ``rows`` cells (one per row) from ``threads`` clients; cell ts = wall clock ms at send time.

    ``rate`` caps the total rows/s (spread over the threads); ``stop`` ends the load early.
    Bytes counted = row + family + qualifier + value (the user payload, as bench/ingest.py).
    """
    from replication.wal.model import Cell, CellType

    value = os.urandom(value_size)
    per_thread = rows // threads
    written = [0] * threads
    errors: list[BaseException] = []

    retries = [0] * threads

    def send(i: int, clients: list, cells: list) -> None:
        """client.batch, re-sent (same cells: idempotent) through a fresh client when a server did not
        answer in time: a ClusterClient marks such a server dead for good, which a CPU-starved region
        server flushing its memstore can trigger on this shared machine."""
        from replication.errors import HbrepError

        for attempt in range(20):
            try:
                clients[0].batch(TABLE, cells)
                return
            except HbrepError:
                if attempt == 19:
                    raise
                retries[i] += 1
                with contextlib.suppress(Exception):
                    clients[0].close()
                time.sleep(1.0)
                clients[0] = pair.source.client()

    def worker(i: int) -> None:
        clients = [pair.source.client()]
        try:
            t_start = time.monotonic()
            n = 0
            thread_rate = rate / threads if rate else None
            while n < per_thread and not (stop is not None and stop.is_set()):
                k = min(batch, per_thread - n)
                ts = int(time.time() * 1000)
                cells = [
                    Cell(b"%s%02d-%010d" % (prefix, i, n + j), FAMILY, b"q", ts, int(CellType.PUT), value)
                    for j in range(k)
                ]
                send(i, clients, cells)
                n += k
                written[i] = n
                if thread_rate:
                    ahead = n / thread_rate - (time.monotonic() - t_start)
                    if ahead > 0:
                        time.sleep(ahead)
        except BaseException as exc:  # surfaced by the caller
            errors.append(exc)
        finally:
            with contextlib.suppress(Exception):
                clients[0].close()

    start = time.monotonic()
    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.monotonic() - start
    if errors:
        raise errors[0]
    total = sum(written)
    row_len = len(prefix) + 2 + 1 + 10
    return LoadResult(total, total * (row_len + 1 + 1 + value_size), elapsed, sum(retries))


def peer_delays(pair: BenchPair, prefix: bytes | None = None) -> list[tuple[int, int]]:
    """(write time ms, delay ms) of every cell the peer received: the peer WAL key's write time (when the
    sink appended it) minus the cell timestamp (when the source client sent it)."""
    from replication.fs import get_filesystem
    from replication.wal.reader import open_wal

    fs, root = get_filesystem(pair.peer.root)
    out: list[tuple[int, int]] = []
    for sub in ("WALs", "oldWALs"):
        base = os.path.join(root, sub)
        for dirpath, _dirs, files in os.walk(base):
            for name in files:
                path = os.path.join(dirpath, name)
                if os.path.getsize(path) == 0:
                    continue
                for read in open_wal(path, fs=fs):
                    key = read.entry.key
                    for cell in read.entry.cells:
                        if prefix is None or bytes(cell.row).startswith(prefix):
                            out.append((cell.timestamp, key.write_time - cell.timestamp))
    return out


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return float(ordered[k])


def plot_series(
    filename: str,
    title: str,
    xlabel: str,
    ylabel: str,
    series: dict[str, tuple[list[float], list[float]]],
    *,
    logx: bool = False,
    logy: bool = False,
    hline: tuple[float, str] | None = None,
) -> str:
    """Draw ``series`` (label → (xs, ys)) as lines with markers into RESULTS/<filename>; return the
    path relative to the repository root (for the BENCHMARKS.md link)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    RESULTS.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", markersize=3, label=label)
    if hline is not None:
        ax.axhline(hline[0], color="red", linestyle="--", linewidth=1, label=hline[1])
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = RESULTS / filename
    fig.savefig(path)
    plt.close(fig)
    return os.path.relpath(path, REPO)


def load_average() -> str:
    """'load average X on N cores' for the notes."""
    return f"1-minute load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
