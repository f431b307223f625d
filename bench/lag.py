"""Replication lag under a steady load at 50% of measured capacity, ship cycles back to back:
p50/p99 of the write-to-peer delay, overall and over time (10 minutes; the quick pass runs 20 seconds).

Delay of one edit = the peer WAL key's write time (when the peer's sink appended it) minus the cell
timestamp (the source client's clock when it sent the write), read from the peer's WALs afterwards, so
every replicated edit is counted, none sampled.
"""

from __future__ import annotations

import threading
import time

from bench import _support as s

NAME = "lag"
TITLE = "Replication lag at 50% of capacity (write-to-peer delay over time)"


def run(quick: bool) -> dict:
    """Measure capacity, run the steady load with back-to-back cycles, read every delay from the peer."""
    duration = 20.0 if quick else 600.0
    bucket_s = 2.0 if quick else 20.0
    spark = s.spark()
    with s.replication_pair(overrides=s.STEADY_CONF) as pair:
        s.load(pair, 400, prefix=b"w")
        s.drain(pair, spark)
        # capacity: the source's ingest rate and the replication rate of draining that backlog
        ingest = s.load(pair, 3000 if quick else 20000, prefix=b"c")
        drained = s.drain(pair, spark)
        replication_rate = drained.rows / drained.seconds
        capacity = min(ingest.rows_per_s, replication_rate)
        rate = 0.5 * capacity

        stop = threading.Event()
        loaded: list = []
        loader = threading.Thread(
            target=lambda: loaded.append(s.load(pair, 10**9, rate=rate, prefix=b"L", stop=stop)), daemon=True
        )
        t_start = time.time()
        loader.start()
        cycle_times: list[float] = []
        while time.time() - t_start < duration:
            t0 = time.monotonic()
            report = s.cycle(pair, spark_session=spark)
            cycle_times.append(time.monotonic() - t0)
            bad = [q for q in report.queues if q.status != "ok"]
            if bad:
                raise RuntimeError(f"lag bench: queue {bad[0].queue} failed: {bad[0].error}")
        stop.set()
        loader.join(timeout=60)
        tail = s.drain(pair, spark)
        delays = s.peer_delays(pair, prefix=b"L")
    if not loaded:
        raise RuntimeError("lag bench: the load thread failed")
    written = loaded[0].rows
    if len(delays) < written:
        raise RuntimeError(f"lag bench: {written} rows written under load, only {len(delays)} found on the peer")
    values = [d for _ts, d in delays]
    t0_ms = min(ts for ts, _ in delays)
    buckets: dict[int, list[int]] = {}
    for ts, d in delays:
        buckets.setdefault(int((ts - t0_ms) / 1000 / bucket_s), []).append(d)
    xs = [(b + 0.5) * bucket_s for b in sorted(buckets)]
    p50s = [s.percentile(buckets[b], 50) / 1000 for b in sorted(buckets)]
    p99s = [s.percentile(buckets[b], 99) / 1000 for b in sorted(buckets)]
    plot = s.plot_series(
        "lag_over_time.png",
        f"Write-to-peer delay at 50% of capacity ({rate:,.0f} rows/s), per {bucket_s:.0f} s of writes",
        "seconds since the load started (by write time)",
        "delay (s)",
        {"p50": (xs, p50s), "p99": (xs, p99s)},
    )
    p50, p99 = s.percentile(values, 50) / 1000, s.percentile(values, 99) / 1000
    mean_cycle = sum(cycle_times) / len(cycle_times)
    label = "20 s (quick)" if quick else "10 min"
    figures = {
        "capacity: ingest rows/s (4 clients)": ingest.rows_per_s,
        "capacity: replication rows/s (drain)": replication_rate,
        "load rate = 50% of min(ingest, replication) (rows/s)": rate,
        f"load duration ({label}) (s)": duration,
        "rows written under load": written,
        "achieved load rate (rows/s)": written / loaded[0].seconds,
        "client batches re-sent under load": loaded[0].retries,
        "rows found on the peer (delays measured)": len(values),
        "cycles under load": len(cycle_times),
        "cycle time under load, mean (s)": mean_cycle,
        "cycle time under load, max (s)": max(cycle_times),
        "cycles to drain after the load stopped": tail.cycles,
        "write-to-peer delay p50 (s)": p50,
        "write-to-peer delay p99 (s)": p99,
        "write-to-peer delay max (s)": max(values) / 1000,
        "worst bucket p99 (s)": max(p99s),
    }
    ratios = {
        "p99 delay / mean cycle time": p99 / mean_cycle,
        "p50 delay / mean cycle time": p50 / mean_cycle,
        "last bucket p99 / first bucket p99 (>> 1 = falling behind)": p99s[-1] / max(p99s[0], 1e-3),
    }
    return {
        "title": TITLE,
        "command": "make bench (bench/lag.py)",
        "figures": figures,
        "ratios": ratios,
        "plots": [{"path": plot, "caption": "p50 / p99 write-to-peer delay over the run"}],
        "notes": [
            "Capacity is measured first in the same run: ingest with 4 clients (100 rows per batch) and the "
            "rate at which back-to-back cycles drain that backlog; the steady load runs at half the smaller "
            "of the two, from 4 rate-limited client threads, while cycles (Spark job in one local[2] "
            "session) run back to back. An edit waits for the next snapshot (half a cycle on average), then "
            "until the peer appends it, which happens inside the ship, before the job's end and the commit "
            "that close the cycle; so the p50 is expected between 0.5 and 1.5 mean cycle times. In this run: "
            f"p50 {p50:.2f} s = {p50 / mean_cycle:.2f} mean cycles ({mean_cycle:.2f} s), p99 {p99:.2f} s = "
            f"{p99 / mean_cycle:.1f} mean cycles; the p99 follows the slowest cycles (max {max(cycle_times):.2f} s), "
            "not the mean. A p99 growing bucket over bucket would mean the source falls behind (last / first "
            f"bucket p99: {p99s[-1] / max(p99s[0], 1e-3):.2f}). " + s.load_average() + ".",
        ],
    }
