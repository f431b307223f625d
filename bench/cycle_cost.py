"""Cost of one ship cycle: nothing to ship (must start no Spark job, target <= 2 s); a little to ship
(10 rows) through spark-submit as production runs it, split into snapshot, Spark start, work, commit;
and the same little cycle in an already running SparkSession (in-process)."""

from __future__ import annotations

import os
import statistics
import time

from bench import _support as s

NAME = "cycle_cost"
TITLE = "Ship cycle cost: nothing to ship, a little to ship, Spark start vs work"


def _steps(pair, spark_session=None) -> dict[str, float]:
    """One cycle by its steps; seconds per step, the job's own work time, and whether Spark ran."""
    from replication.jobs.launch import runner_for
    from replication.source.cycle import commit_step, ship_step, snapshot_step
    from replication.zk.client import connected

    owner = f"bench-{os.getpid()}"
    with connected(pair.source_key) as zk:
        t0 = time.monotonic()
        outcome = snapshot_step(zk, pair.source_key, pair.conf, owner=owner)
        t1 = time.monotonic()
        result = ship_step(outcome.manifest_path, pair.conf, runner=runner_for(pair.conf, spark_session))
        t2 = time.monotonic()
        report = commit_step(zk, pair.source_key, pair.conf, outcome.manifest_path, owner=owner)
        t3 = time.monotonic()
    failed = [q for q in report.queues if q.status != "ok"]
    assert not failed, failed
    work = max(0.0, (result.finished_ms - result.started_ms) / 1000.0) if result.queues else 0.0
    return {
        "snapshot": t1 - t0,
        "ship": t2 - t1,
        "commit": t3 - t2,
        "total": t3 - t0,
        "work": work,
        "spark_job": float(report.spark_job),
        "rows": float(sum(p.rows_shipped for p in report.peers.values())),
        "queues": float(outcome.queues),
    }


def run(quick: bool) -> dict:
    """Drain, then time empty cycles and 10-row cycles (spark-submit and in-process)."""
    repeat = 1 if quick else 3
    spark = s.spark()
    with s.replication_pair() as pair:
        s.load(pair, 300, prefix=b"w")
        s.drain(pair, spark)
        empty = [_steps(pair) for _ in range(repeat + 1)][1:]  # spark=None: would spark-submit if needed
        little_submit, little_inproc = [], []
        for i in range(repeat):
            s.load(pair, 10, threads=1, prefix=b"s%d" % i)
            little_submit.append(_steps(pair))
            s.load(pair, 10, threads=1, prefix=b"p%d" % i)
            little_inproc.append(_steps(pair, spark))

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    empty_total = med(empty, "total")
    submit_ship, submit_work = med(little_submit, "ship"), med(little_submit, "work")
    figures = {
        "nothing to ship: cycle (s, median)": empty_total,
        "nothing to ship: snapshot step (s)": med(empty, "snapshot"),
        "nothing to ship: commit step (s)": med(empty, "commit"),
        "nothing to ship: Spark jobs started": int(sum(r["spark_job"] for r in empty)),
        "10 rows, spark-submit: cycle (s, median)": med(little_submit, "total"),
        "10 rows, spark-submit: snapshot step (s)": med(little_submit, "snapshot"),
        "10 rows, spark-submit: ship step (s)": submit_ship,
        "10 rows, spark-submit: Spark start + teardown (s)": submit_ship - submit_work,
        "10 rows, spark-submit: ship work inside the job (s)": submit_work,
        "10 rows, spark-submit: commit step (s)": med(little_submit, "commit"),
        "10 rows, in-process session: cycle (s, median)": med(little_inproc, "total"),
        "10 rows, in-process session: ship work inside the job (s)": med(little_inproc, "work"),
        "10 rows: queues shipped per cycle": int(med(little_submit, "queues")),
        "cycles timed per case": repeat,
    }
    assert all(r["rows"] >= 10 for r in little_submit + little_inproc)
    ratios = {
        "nothing to ship: cycle / 2 s target (<= 1 passes)": empty_total / 2.0,
        "10 rows, spark-submit: Spark start share of the cycle": (submit_ship - submit_work)
        / med(little_submit, "total"),
        "10 rows: spark-submit cycle / in-process cycle": med(little_submit, "total") / med(little_inproc, "total"),
    }
    return {
        "title": TITLE,
        "command": "make bench (bench/cycle_cost.py)",
        "figures": figures,
        "ratios": ratios,
        "notes": [
            "Source A has 3 region servers (3 queues for peer 1), peer B 2. Nothing to ship = queues at "
            "the end of their WALs: the snapshot leaves every queue out (queue_has_work), ship_step writes "
            "an empty result and starts no Spark job, commit has nothing to write. Spark start = the "
            "spark-submit ship step minus the job's own started..finished time (JVM, SparkContext, "
            "executors and Python workers, then stop). " + s.load_average() + " at the end of the run.",
        ],
    }
