"""Failover on ZooKeeper events through the real scheduler, beside HBase's own (issue 45).

hbrep: `make up`'s stack (replication.devstack.stack: Airflow's scheduler, triggerer, API server; clusters
a (2 region servers) -> b, peer 1, the ship DAG on the Spark Connect server), then the distributed stack
(`make up DIST=1`: CeleryExecutor with two workers on Redis, Spark Connect on a standalone Spark cluster,
cluster a's root on HDFS; ``BENCH_FAILOVER_STACKS`` picks), each with
``zookeeper.session.timeout`` = 10 s, ``replication.sleep.before.failover`` = 0 and ``HBREP_SHIP_ON_EDITS=true``.
Under a write load, a region server of a is SIGKILLed ``BENCH_FAILOVER_KILLS`` times (10; quick 2), one
at a time, a new server started after each. Read from ZooKeeper every 50 ms: kill -> its ``rs`` znode gone
(session expiry), -> its queue znodes moved under a live server (claimed), -> the recovered queue drained
(deleted: positions move and queues go only after the peer acknowledged, so its edits are on the peer).
Per kill, Airflow's own timestamps (metadata DB) split expiry -> claim: the asset event, the
asset-triggered run's queued and start times, its claim task's start.

HBase: a real HBase 2.6 (replication/devstack/hbase.py, 3 region servers, the same 10 s session timeout,
the dev stack's replication.sleep.before.failover of 1 s) with a peer, the same kills; the claim is its
ServerCrashProcedure's (ClaimReplicationQueuesProcedure) move of the dead server's queue znodes, read the
same way. Its peer is DISABLED (queues are kept and claimed all the same), so no drain time.

Then the lag of the first write after ``BENCH_FAILOVER_IDLE_MIN`` (5; quick 1) idle minutes: one put on
a, the time until a get on b finds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import _support as s

NAME = "failover_events"
TITLE = "Failover on ZooKeeper events through the real scheduler, beside HBase's ServerCrashProcedure"
SESSION_MS = 10_000
HBREP_SLEEP_MS = 0
HBASE_SLEEP_MS = 1_000  # replication/devstack/hbase.py's site value
PEER = "1"
POLL_S = 0.05
STACK_ENV = {
    "HBREP__zookeeper__session__timeout": str(SESSION_MS),
    "HBREP__replication__sleep__before__failover": str(HBREP_SLEEP_MS),
    "HBREP_SHIP_ON_EDITS": "true",
}


STACKS = {"connect": "hbrep", "connect-dist": "hbrep dist"}  # stack mode -> the label of its figures


def stacks() -> list[str]:
    """The stack modes to measure: ``BENCH_FAILOVER_STACKS`` (comma-separated) or both."""
    chosen = [m for m in os.environ.get("BENCH_FAILOVER_STACKS", ",".join(STACKS)).split(",") if m]
    unknown = [m for m in chosen if m not in STACKS]
    if unknown:
        raise ValueError(f"BENCH_FAILOVER_STACKS: unknown stack {unknown[0]!r} (known: {', '.join(STACKS)})")
    return chosen


def sizes(quick: bool) -> dict[str, float]:
    """Kills per side, idle minutes and the load's rows/s: ``BENCH_FAILOVER_*`` or the defaults."""
    return {
        "kills": int(os.environ.get("BENCH_FAILOVER_KILLS", 2 if quick else 10)),
        "idle_min": float(os.environ.get("BENCH_FAILOVER_IDLE_MIN", 1 if quick else 5)),
        "rate": float(os.environ.get("BENCH_FAILOVER_RATE", 200)),
    }


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class Load:
    """Puts ``rate`` rows/s (batches of 10) into a table of a cluster until stopped; errors while a server
    dies are retried through a fresh client."""

    def __init__(self, put_batch, rate: float) -> None:
        self.put_batch, self.rate = put_batch, rate
        self.stop = threading.Event()
        self.rows = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                self.put_batch([b"L%09d" % (i + k) for k in range(10)])
                i += 10
                self.rows = i
            except Exception:
                time.sleep(0.5)
            self.stop.wait(max(0.0, 10 / self.rate - (time.monotonic() - t0)))

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


def watch_kill(zk, rs_path: str, queues_path: str, victim: str, t_kill: float, drain: bool,
               timeout: float = 240) -> dict[str, float]:  # fmt: skip
    """Poll ZooKeeper every 50 ms after ``victim`` was killed at ``t_kill`` (epoch s): seconds to its rs znode
    gone (expiry), to its queues moved under a live server (claimed), and (``drain``) to its recovered queue
    gone (drained)."""
    out: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = time.time()
        live = set(zk.get_children(rs_path))
        if "expiry" not in out and victim not in live:
            out["expiry"] = now - t_kill
        replicators = set(zk.get_children(queues_path))
        recovered = [
            r for r in replicators if r != victim and any(victim in q for q in _children(zk, f"{queues_path}/{r}"))
        ]
        if "claimed" not in out and "expiry" in out and (victim not in replicators or recovered):
            out["claimed"] = now - t_kill
        if "claimed" in out and (not drain or not recovered):
            if drain:
                out["drained"] = now - t_kill
            return out
        time.sleep(POLL_S)
    raise RuntimeError(f"{victim}: not {'drained' if 'claimed' in out else 'claimed'} {timeout:.0f} s after SIGKILL")


def _children(zk, path: str) -> list[str]:
    from kazoo.exceptions import NoNodeError

    try:
        return zk.get_children(path)
    except NoNodeError:
        return []


def _summary(label: str, runs: list[dict[str, float]], keys: list[str]) -> dict[str, float]:
    f: dict[str, float] = {}
    for k in keys:
        values = [r[k] for r in runs if k in r]
        if values:
            f[f"{label}: {k} (s, median)"] = statistics.median(values)
            f[f"{label}: {k} (s, max)"] = max(values)
    return f


# -- hbrep through the scheduler ------------------------------------------------------------------------
def _airflow_split(state: Path, kills: list[dict[str, Any]]) -> None:
    """Per kill, Airflow's timestamps (epoch s) relative to the kill: the region servers' asset event that
    named the victim, the first failover run queued after it (its type, queued and start), its claim task's
    queued and start times; added to each kill's dict."""
    from bench.scheduler import _MetadataDb, _ts

    db = _MetadataDb(state)
    try:
        events = db.execute(
            "select e.timestamp, e.extra from asset_event e join asset a on a.id = e.asset_id "
            "where a.name = 'hbrep-region-servers' order by e.timestamp"
        ).fetchall()
        runs = db.execute(
            "select r.run_id, r.run_type, r.queued_at, r.start_date, r.end_date, t.queued_dttm, t.start_date, "
            "t.end_date from dag_run r left join task_instance t on t.dag_id = r.dag_id and t.run_id = r.run_id "
            "and t.task_id = 'claim' where r.dag_id = 'hbrep_failover' order by r.queued_at"
        ).fetchall()
    finally:
        db.close()
    for kill in kills:
        t0, victim = kill["t_kill"], kill["victim"]
        extra = [(_ts(ts), x if isinstance(x, dict) else json.loads(x or "{}")) for ts, x in events]
        named = [ts for ts, x in extra if victim in json.dumps(x) and ts >= t0]
        if not named:
            continue
        kill["asset event"] = named[0] - t0
        after = [r for r in runs if r[1] == "asset_triggered" and _ts(r[2]) and _ts(r[2]) >= named[0] - 1]
        if after:
            _run_id, _type, queued, started, _ended, ti_queued, ti_start, _ti_end = after[0]
            kill["event run queued"] = _ts(queued) - t0
            if started:
                kill["event run started"] = _ts(started) - t0
            if ti_queued:
                kill["event run's claim task queued"] = _ts(ti_queued) - t0
            if ti_start:
                kill["event run's claim task started"] = _ts(ti_start) - t0
        busy = [r for r in runs if r[1] != "asset_triggered" and _ts(r[3]) and _ts(r[3]) <= named[0]
                and (not r[4] or _ts(r[4]) > named[0])]  # fmt: skip
        kill["a scheduled run active at the event"] = float(bool(busy))


def _hbrep(mode: str, tmp: str, n: dict[str, float], f: dict[str, float], notes: list[str]) -> None:
    from bench.scheduler import _settle, stack
    from replication.cluster.client import ClusterClient
    from replication.cluster.embedded import EmbeddedCluster, server_pids
    from replication.config import Config
    from replication.wal.model import Cell, CellType
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey
    from replication.zk.layout import ZNodePaths

    label = STACKS[mode]
    with _env(STACK_ENV), stack(tmp, mode) as st:
        _settle(st)
        key = ClusterKey.parse(st.source_key)
        conf = Config.load()
        root = json.loads((st.state / "stack.json").read_text())["roots"][1]  # a's: on HDFS in the dist stack
        peer_key = st.source_key.replace("/hbase-a", "/hbase-b")
        with connected(key) as zk:
            paths = ZNodePaths(conf, parent=key.znode_parent)
            cluster = EmbeddedCluster(st.source_key, root, conf, "a", zk, paths)
            client = [ClusterClient(st.source_key, conf)]

            def put_batch(rows: list[bytes]) -> None:
                try:
                    client[0].batch(s.TABLE, [Cell(r, b"f", b"q", 2**63 - 1, CellType.PUT, b"v" * 100) for r in rows])
                except Exception:
                    with contextlib.suppress(Exception):
                        client[0].close()
                    client[0] = ClusterClient(st.source_key, conf)
                    raise

            kills: list[dict[str, Any]] = []
            with Load(put_batch, n["rate"]):
                for i in range(int(n["kills"])):
                    while len(cluster.live_servers()) < 2:
                        cluster.start_region_server()
                    time.sleep(15)  # the new server takes writes and queues WALs; the last claim's ship settles
                    victim = sorted(cluster.live_servers())[i % 2]
                    pid = server_pids(root)[victim]
                    # one row written to the victim itself just before the kill: in its WAL, not yet shipped
                    # (a ship pass reads about once a second), so it reaches the peer through the recovered queue
                    marker = b"M%02d-%d" % (i, time.time_ns())
                    with ClusterClient(st.source_key, conf) as one_client:
                        one_client.mutate_on(victim, s.TABLE, [Cell(marker, b"f", b"q", 2**63 - 1, CellType.PUT, b"m")])
                    t_kill = time.time()
                    os.kill(pid, signal.SIGKILL)
                    arrival = PeerArrival(peer_key, marker)
                    one = watch_kill(zk, paths.rs, paths.queues, victim, t_kill, drain=True)
                    found = arrival.wait(timeout=240)
                    one["first recovered edit on the peer"] = found - t_kill
                    one.update(t_kill=t_kill, victim=victim)
                    kills.append(one)
                    print(f"[failover_events] {label} kill {i + 1}: {one}", flush=True)
            with contextlib.suppress(Exception):
                client[0].close()
            _airflow_split(st.state, kills)
            keys = ["expiry", "claimed", "first recovered edit on the peer", "drained", "asset event",
                    "event run queued", "event run started", "event run's claim task queued",
                    "event run's claim task started"]  # fmt: skip
            f.update(_summary(label, kills, keys))
            f[f"{label}: claimed - expiry (s, median)"] = statistics.median(k["claimed"] - k["expiry"] for k in kills)
            f[f"{label}: claimed - expiry (s, max)"] = max(k["claimed"] - k["expiry"] for k in kills)
            f[f"{label}: kills with a scheduled failover run active at the event"] = sum(
                k.get("a scheduled run active at the event", 0) for k in kills
            )
            f[f"{label}: region servers SIGKILLed"] = len(kills)
            notes.append(f"{label} per kill (s after SIGKILL): " + "; ".join(
                ", ".join(f"{k}={v:.1f}" for k, v in kill.items() if k not in ("t_kill", "victim"))
                for kill in kills))  # fmt: skip

            # the first write after idle minutes (the load stopped above)
            idle_s = n["idle_min"] * 60
            time.sleep(idle_s)
            row = b"idle-first-write-%d" % time.time_ns()
            with ClusterClient(st.source_key, conf) as c:
                t_put = time.monotonic()
                c.put(s.TABLE, row, b"f", b"q", b"v")
            with ClusterClient(peer_key, Config.load(env={})) as peer:
                deadline = time.monotonic() + 300
                while not _has_row(peer, row):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the first write after the idle minutes never reached the peer")
                    time.sleep(0.1)
            f[f"{label}: first write after {n['idle_min']:g} idle min: put -> on the peer (s)"] = (
                time.monotonic() - t_put
            )


class PeerArrival:
    """Looks for one row on the peer every 100 ms from its creation, in a thread; ``wait`` gives the epoch
    second it was first found."""

    def __init__(self, peer_key: str, row: bytes) -> None:
        self.peer_key, self.row = peer_key, row
        self.found: float | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.stop = threading.Event()
        self.thread.start()

    def _run(self) -> None:
        from replication.cluster.client import ClusterClient
        from replication.config import Config

        with ClusterClient(self.peer_key, Config.load(env={})) as peer:
            while not self.stop.is_set():
                with contextlib.suppress(Exception):
                    if _has_row(peer, self.row):
                        self.found = time.time()
                        return
                self.stop.wait(0.1)

    def wait(self, timeout: float) -> float:
        """The time the row was found; RuntimeError after ``timeout`` s."""
        self.thread.join(timeout)
        self.stop.set()
        if self.found is None:
            raise RuntimeError(f"row {self.row!r} not on the peer {timeout:.0f} s after the kill")
        return self.found


def _has_row(client, row: bytes) -> bool:
    from replication.cluster.table_reader import ScanSpec, scan_rows

    spec = ScanSpec(start_row=row, stop_row=row + b"\0")
    return any(r == row for r, _ in scan_rows(client, s.TABLE, spec))


# -- HBase's own failover -----------------------------------------------------------------------------
def _hbase(quick: bool, tmp: str, n: dict[str, float], f: dict[str, float], notes: list[str]) -> None:
    from replication.devstack.hbase import RealHBase
    from replication.devstack.jvm import port_accepts
    from replication.devstack.maven import interop_tools_classpath
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.net import free_port
    from replication.zk.client import connected

    interop_tools_classpath()
    zk_server = ZooKeeperServer(Path(tmp) / "hzk", free_port())
    zk_server.start()
    hbase = RealHBase(Path(tmp) / "hbase")
    try:
        parent = "/bench-failover"
        hbase.start(f"127.0.0.1:{zk_server.port}:{parent}", regionservers=3,
                    extra_site={"zookeeper.session.timeout": str(SESSION_MS)})  # fmt: skip
        layout = hbase.layout()
        elsewhere = f"127.0.0.1:{zk_server.port}:/bench-elsewhere"
        hbase.admin("add-peer", json.dumps({"id": PEER, "enabled": False, "cluster_key": elsewhere}))
        hbase.admin("create-table", "t", "1", "f:1")
        conn = [hbase.happybase_connection()]

        def put_batch(rows: list[bytes]) -> None:
            try:
                with conn[0].table("t").batch() as b:
                    for r in rows:
                        b.put(r, {b"f:q": b"v" * 100})
            except Exception:
                with contextlib.suppress(Exception):
                    conn[0].close()
                conn[0] = hbase.happybase_connection()
                raise

        kills: list[dict[str, Any]] = []
        with connected(layout.cluster_key) as zk, Load(put_batch, n["rate"]):
            rs_path, queues_path = f"{parent}/rs", f"{parent}/replication/rs"
            for i in range(int(n["kills"])):
                index = 2 + i % 2  # rs2, rs3 in turn (rs1 keeps hbase:meta)
                jvm = hbase.regionserver(index)
                port = layout.regionserver_ports[index - 1]
                if not jvm.running():
                    jvm.start(lambda p=port: port_accepts(p), timeout=180)
                deadline = time.monotonic() + 180
                while not (victims := [v for v in zk.get_children(rs_path) if v.split(",")[1] == str(port)]):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"HBase region server {index} did not come back")
                    time.sleep(0.5)
                time.sleep(15)  # regions assigned back, WALs queued, writes on it
                victim = victims[0]
                t_kill = time.time()
                jvm.kill()
                one = watch_kill(zk, rs_path, queues_path, victim, t_kill, drain=False)
                one.update(t_kill=t_kill, victim=victim)
                kills.append(one)
                print(f"[failover_events] HBase kill {i + 1}: {one}", flush=True)
        with contextlib.suppress(Exception):
            conn[0].close()
        f.update(_summary("HBase", kills, ["expiry", "claimed"]))
        f["HBase: claimed - expiry (s, median)"] = statistics.median(k["claimed"] - k["expiry"] for k in kills)
        f["HBase: claimed - expiry (s, max)"] = max(k["claimed"] - k["expiry"] for k in kills)
        f["HBase: region servers SIGKILLed"] = len(kills)
        notes.append("HBase per kill (s after SIGKILL): " + "; ".join(
            f"expiry={k['expiry']:.1f}, claimed={k['claimed']:.1f}" for k in kills))  # fmt: skip
    finally:
        hbase.stop()
        zk_server.stop()


def run(quick: bool) -> dict:
    """hbrep under the scheduler (each stack), then HBase, then the ratios (see the module doc)."""
    from bench.registry import head_commit

    commit = head_commit()
    n = sizes(quick)
    f: dict[str, float] = {"zookeeper.session.timeout (ms)": SESSION_MS}
    notes: list[str] = []
    modes = stacks()
    loads = [f"start: {s.load_average()}"]
    with tempfile.TemporaryDirectory(prefix="hbrep-fo-events-") as tmp:
        for mode in modes:
            _hbrep(mode, tmp, n, f, notes)
            loads.append(f"after {STACKS[mode]}: {s.load_average()}")
        _hbase(quick, tmp, n, f, notes)
        loads.append(f"after HBase: {s.load_average()}")
    ratios = {}
    for mode in modes:
        label = STACKS[mode]
        for stat in ("median", "max"):
            after_expiry = f[f"{label}: claimed - expiry (s, {stat})"]
            ratios[f"{label}: claim after the session's expiry (s, {stat}) (target <= 5)"] = after_expiry
        ratios[f"{label} / HBase: claim after expiry, median"] = f[f"{label}: claimed - expiry (s, median)"] / max(
            f["HBase: claimed - expiry (s, median)"], 1e-9
        )
    return {
        "title": TITLE,
        "command": "make bench ONLY=failover_events" + (" QUICK=1" if quick else ""),
        "figures": f,
        "ratios": ratios,
        "commit": commit,
        "notes": [
            f"Measured at commit {commit}; sizes: {int(n['kills'])} SIGKILLs per side, a load of "
            f"{n['rate']:g} rows/s (100-byte values), {n['idle_min']:g} idle minutes before the first write "
            "(BENCH_FAILOVER_KILLS, BENCH_FAILOVER_RATE, BENCH_FAILOVER_IDLE_MIN). Machine load: "
            + "; ".join(loads)
            + ".",
            f"hbrep: make up's stack (scheduler, triggerer, API server, ship window {120} s, Spark Connect); "
            "hbrep dist: make up DIST=1's (CeleryExecutor with two workers on Redis, Spark Connect on a standalone "
            "Spark cluster of two workers, cluster a's root and the work dir on HDFS); both with "
            f"zookeeper.session.timeout {SESSION_MS} ms, replication.sleep.before.failover {HBREP_SLEEP_MS} ms, "
            "HBREP_SHIP_ON_EDITS=true. Times are from the SIGKILL, read from ZooKeeper every 50 ms: expiry = the "
            "server's rs znode gone; claimed = its queues moved under a live server (its replicator znode gone or "
            "a recovered queue of it seen); first recovered edit on the peer = a row written to the killed server "
            "itself (ClusterClient.mutate_on) just before its SIGKILL, found by a get on the peer (every 100 ms); "
            "drained = that recovered queue deleted after shipping (the peer had "
            "acknowledged its edits). The asset event, run and task times are Airflow's own (metadata DB).",
            f"HBase: a real HBase 2.6 (3 region servers, rs2 and rs3 killed in turn and started again) with "
            f"zookeeper.session.timeout {SESSION_MS} ms and replication.sleep.before.failover {HBASE_SLEEP_MS} ms, "
            "one DISABLED peer (its queues are kept and claimed by ServerCrashProcedure's "
            "ClaimReplicationQueuesProcedure all the same; nothing drains).",
            *notes,
        ],
    }
