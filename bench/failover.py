"""Failover and log cleaner: time from a region server's SIGKILL to its queues claimed (less the
configured ``replication.sleep.before.failover``), and ``clean_once`` time vs files in oldWALs/."""

from __future__ import annotations

import os
import time

from bench import _support as s

NAME = "failover"
TITLE = "Failover (SIGKILL to queues claimed) and log cleaner time vs files"
SLEEP_BEFORE_FAILOVER_MS = 1000


def _kill_and_claim(pair) -> dict[str, float]:
    """SIGKILL one source region server, then run failover passes every 100 ms until it is claimed."""
    from replication.failover import failover_once
    from replication.zk.client import connected

    victim = pair.source.live_servers()[-1]
    s.load(pair, 200, threads=2, prefix=b"k")  # every server has edits in its current WAL
    t_kill = time.monotonic()
    pair.source.kill(victim)
    t_gone = None
    with connected(pair.source_key) as zk:
        while True:
            now = time.monotonic()
            if t_gone is None and victim not in pair.source.live_servers():
                t_gone = now
            t_pass = time.monotonic()
            report = failover_once(zk, pair.source_key, pair.conf)
            pass_s = time.monotonic() - t_pass
            mine = [o for o in report.servers if o.server == victim]
            if mine and mine[0].action in ("claimed", "nothing-to-claim"):
                t_claimed = time.monotonic()
                wals = mine[0].wals_moved
                break
            if mine and mine[0].action == "error":
                raise RuntimeError(f"failover of {victim}: {mine[0].error}")
            if now - t_kill > 120:
                raise RuntimeError(f"{victim} not claimed 120 s after SIGKILL")
            time.sleep(0.1)
    t_gone = t_gone or t_claimed
    total = t_claimed - t_kill
    return {
        "kill_to_claimed": total,
        "kill_to_claimed_less_sleep": total - SLEEP_BEFORE_FAILOVER_MS / 1000.0,
        "kill_to_znode_gone": t_gone - t_kill,
        "znode_gone_to_claimed_less_sleep": t_claimed - t_gone - SLEEP_BEFORE_FAILOVER_MS / 1000.0,
        "wals_moved": wals,
        "claiming_pass": pass_s,
    }


def _cleaner(pair, files: int, repeat: int) -> dict[str, float]:
    """Best of ``repeat`` runs: ``files`` expired WAL-named files in oldWALs/ (none in a queue), one
    clean_once that deletes them all."""
    runs = [_clean_one(pair, files) for _ in range(repeat)]
    return min(runs, key=lambda r: r["seconds"])


def _clean_one(pair, files: int) -> dict[str, float]:
    from replication.cleaner import clean_once
    from replication.zk.client import connected

    old = os.path.join(pair.source.root, "oldWALs")
    os.makedirs(old, exist_ok=True)
    past = time.time() - 3600 * 24
    for i in range(files):
        path = os.path.join(old, f"127.0.0.1%2C1%2C1.{1_600_000_000_000 + i}")
        with open(path, "wb"):
            pass
        os.utime(path, (past, past))
    with connected(pair.source_key) as zk:
        t0 = time.monotonic()
        report = clean_once(zk, pair.source_key, pair.conf)
        elapsed = time.monotonic() - t0
    deleted = sum(1 for p in report.deleted if "%2C1%2C1." in p)
    if deleted != files:
        raise RuntimeError(f"cleaner deleted {deleted} of {files} expired files ({report.error})")
    return {"seconds": elapsed, "deleted": deleted}


def _server_session_timeout_ms(conf) -> int:
    """The session timeout the embedded region servers get (see replication.cluster.embedded)."""
    from replication.cluster.embedded import EMBEDDED_SESSION_TIMEOUT_MS

    if conf.source_of("zookeeper.session.timeout") == "defaults":
        return EMBEDDED_SESSION_TIMEOUT_MS
    return conf.get_int("zookeeper.session.timeout")


def run(quick: bool) -> dict:
    """Kill a region server (1, or 2 in the full pass) and claim its queues; then the cleaner series."""
    kills = 1 if quick else 2
    sizes = [100, 1000, 10000]
    overrides = {"replication.sleep.before.failover": str(SLEEP_BEFORE_FAILOVER_MS)}
    with s.replication_pair(source_rs=3, peer_rs=1, overrides=overrides) as pair:
        s.load(pair, 300, prefix=b"w")
        runs = [_kill_and_claim(pair) for _ in range(kills)]
        session_ms = _server_session_timeout_ms(pair.source.conf)
        clean = {n: _cleaner(pair, n, 3 if quick else 5) for n in sizes}
    worst = max(runs, key=lambda r: r["kill_to_claimed"])
    figures: dict[str, float | int] = {
        "region servers SIGKILLed": kills,
        "replication.sleep.before.failover (ms)": SLEEP_BEFORE_FAILOVER_MS,
        "SIGKILL to claimed, less the sleep (s, worst)": worst["kill_to_claimed_less_sleep"],
        "SIGKILL to live znode gone (s, worst)": max(r["kill_to_znode_gone"] for r in runs),
        "znode gone to claimed, less the sleep (s, worst)": max(r["znode_gone_to_claimed_less_sleep"] for r in runs),
        "the failover pass that claimed: log split + claim (s, worst)": max(r["claiming_pass"] for r in runs),
        "WALs moved per claim": int(worst["wals_moved"]),
    }
    for n, c in clean.items():
        figures[f"cleaner: {n:,} expired files deleted (s)"] = c["seconds"]
    plot = s.plot_series(
        "cleaner_vs_files.png",
        "Log cleaner: one clean_once over N expired files in oldWALs/",
        "files in oldWALs/",
        "seconds",
        {"clean_once": ([float(n) for n in sizes], [clean[n]["seconds"] for n in sizes])},
        logx=True,
        logy=True,
    )
    ratios = {
        "SIGKILL to claimed less sleep / region servers' ZooKeeper session timeout": worst["kill_to_claimed_less_sleep"]
        / (session_ms / 1000.0),
        "cleaner: ms per 1,000 files at 10,000": clean[10000]["seconds"] / 10,
        "cleaner: time(10,000) / time(1,000)": clean[10000]["seconds"] / clean[1000]["seconds"],
    }
    return {
        "title": TITLE,
        "command": "make bench (bench/failover.py)",
        "figures": figures,
        "ratios": ratios,
        "plots": [{"path": plot, "caption": "clean_once time vs files in oldWALs/ (log-log)"}],
        "notes": [
            "SIGKILL to claimed = a region server of A (3 servers) is SIGKILLed; failover_once runs every "
            "100 ms; the time ends when its queues are claimed by a live server, after the log split "
            "(recover_dead_server). Its live znode disappears only when its ZooKeeper session expires "
            f"({session_ms} ms for these region servers: the embedded cluster's value when "
            "zookeeper.session.timeout keeps HBase's 90 s default), so detection, not the claim, bounds "
            "this figure. The ZooKeeper claim itself vs WAL count is in the ZooKeeper section "
            "(bench/zk_claim.py).",
            "Cleaner = best of 3 (quick) or 5 runs of one clean_once: get_all_wals() snapshot of the "
            "queues, list oldWALs/, TTL and queue "
            "checks, one unlink per file; all files are expired and in no queue, so all are deleted. "
            + s.load_average()
            + ".",
        ],
    }
