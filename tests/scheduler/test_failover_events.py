"""Failover and shipping on ZooKeeper events under the real scheduler and triggerer: the ``hbrep-region-servers``
asset's watcher (RegionServerRemovedTrigger, in the triggerer) sees region servers die and ``hbrep_failover``
runs at once; the minute stays the fallback. Region servers are real processes SIGKILLed; the triggerer is a
real process SIGKILLed (its supervisor loop starts it again) or SIGSTOPped past its ZooKeeper session.

The ship DAG's cron is set a year away here: every ship run of this module is started by the
``hbrep-queued-edits`` asset's watcher (EditsQueuedTrigger), for the recovered queues of the dead servers as
for an idle cluster's first write."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SchedulerStack, scheduler_stack

from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow

FAILOVER, SHIP = "hbrep_failover", "hbrep_ship"
SESSION_S = 6  # zookeeper.session.timeout of the region servers and of the triggerer's watch
SHIP_CRON = "0 0 1 1 *"  # far away: a ship run here comes from the queued edits' asset


@pytest.fixture(scope="module")
def stack(tmp_path_factory, spark_connect) -> Iterator[SchedulerStack]:
    """The stack with failover's sleep at 0 and 6 s sessions; the ship DAG on the session's warm Spark
    Connect server (no spark-submit JVM per run), its cron a year away."""
    env = {
        "HBREP_SHIP_SCHEDULE": SHIP_CRON,
        "HBREP_SHIP_ON_EDITS": "true",
        "HBREP__replication__sleep__before__failover": "0",
        "HBREP__zookeeper__session__timeout": str(SESSION_S * 1000),
    }
    with scheduler_stack(tmp_path_factory.mktemp("events"), tables={"t": {"f": 1}}, peers={"1": {}},
                         env_extra=env, spark_connect_port=spark_connect.port) as stack:  # fmt: skip
        stack.api.set_paused(FAILOVER, False)
        yield stack


def _claims(stack: SchedulerStack) -> dict[str, list[dict]]:
    """Dead server → the failover records (claimer, queues moved) hbrep kept for it."""
    from replication.cluster.source_cluster import open_source
    from replication.monitoring.metrics import MetricsStore
    from replication.zk.cluster_key import ClusterKey

    source = open_source(stack.source.zk, ClusterKey.parse(stack.source_key), stack.source.conf)
    out: dict[str, list[dict]] = {}
    for record in MetricsStore(source.fs, source.root).load().failovers:
        out.setdefault(record["dead_server"], []).append(record)
    return out


def _wait_claimed(stack: SchedulerStack, servers: list[str], timeout: float) -> dict[str, list[dict]]:
    deadline = time.monotonic() + timeout
    while True:
        claims = _claims(stack)
        if all(s in claims for s in servers):
            return claims
        assert time.monotonic() < deadline, f"not claimed in {timeout:.0f}s: {sorted(set(servers) - set(claims))}"
        time.sleep(1)


def _triggerer_pids(stack: SchedulerStack) -> list[int]:
    """The triggerer's processes (its supervisor and trigger runner), not the bash loop that restarts it."""
    from replication.devstack.airflow_stack import session_pids

    pids = []
    for pid in session_pids(stack.airflow.proc.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"triggerer" in argv and not os.path.basename(argv[0]).startswith(b"bash"):
            pids.append(pid)
    assert pids, "no triggerer process in the stack's session"
    return pids


def _watchers_started(stack: SchedulerStack) -> int:
    """How many times a triggerer started watching the region servers (its log line)."""
    return stack.airflow.log.read_text(errors="replace").count("watching the region servers of")


def _trigger_payloads(stack: SchedulerStack) -> list[dict]:
    """Payloads of the asset events the region servers' watcher fired."""
    events = stack.api.call("GET", "/assets/events", params={"limit": 100, "order_by": "timestamp"})
    return [
        e["extra"]["payload"]
        for e in events["asset_events"]
        if e["uri"].endswith("/rs") and e["extra"].get("from_trigger")
    ]


def _asset_runs_claimed(stack: SchedulerStack) -> set[str]:
    """Servers an asset-triggered failover run claimed (its XCom report)."""
    claimed = set()
    for run in stack.api.runs(FAILOVER, run_type="asset_triggered"):
        if run["state"] == "success":
            report = stack.api.xcom(FAILOVER, run["dag_run_id"], "claim")
            claimed |= {s["server"] for s in report["servers"] if s["action"] == "claimed"}
    return claimed


def _wait_second_in_minute(low: int, high: int) -> None:
    """Sleep until the clock's second is in [low, high], so the minute's fallback run is far away."""
    while not low <= time.gmtime().tm_sec <= high:
        time.sleep(0.5)


def test_a_storm_of_ten_deaths_makes_one_claim_each_and_every_row_reaches_the_peer(stack):
    from replication.cluster.table_reader import ScanSpec, scan_rows

    # started whenever: a failover run meeting a server between its first WAL and its rs znode leaves it alone
    # (its starting mark; tests/failover/test_failover.py), where a fresh-clone run at 1b57534 lost 31 rows
    dying = [stack.source.start_region_server() for _ in range(10)]
    written = {b"s%05d" % i for i in range(300)}
    with stack.source.client() as client:
        for start in range(0, 300, 30):
            client.batch(
                "t", [Cell(b"s%05d" % i, b"f", b"q", 2**63 - 1, CellType.PUT, b"v") for i in range(start, start + 30)]
            )
    _wait_second_in_minute(0, 35)  # the deaths are seen ~SESSION_S later, well before the minute's run
    killed_at = time.time()
    for server in dying:
        stack.source.kill(server)
    claims = _wait_claimed(stack, dying, timeout=150)
    first_claim_s = min(r["at_ms"] for s in dying for r in claims[s]) / 1000 - killed_at
    assert {s: len(claims[s]) for s in dying} == dict.fromkeys(dying, 1), "one claim per dead server"
    # the event, not the minute: the claims came seconds after the sessions expired, from asset-triggered runs
    assert first_claim_s < SESSION_S + 45, first_claim_s
    deadline = time.monotonic() + 90  # the claims are recorded before the run that made them has ended
    while not _asset_runs_claimed(stack) & set(dying):
        assert time.monotonic() < deadline, "no asset-triggered failover run claimed a queue"
        time.sleep(2)

    stack.api.set_paused(SHIP, False)  # the queued edits' watcher starts a run for the recovered queues
    try:
        stack.wait_drained(timeout=600)
        deadline = time.monotonic() + 300
        while not [r for r in stack.api.runs(SHIP) if r["state"] == "success"]:
            assert time.monotonic() < deadline, stack.api.runs(SHIP)
            time.sleep(3)
    finally:
        stack.api.set_paused(SHIP, True)
    with stack.peer.client() as client:
        on_peer = {row for row, _ in scan_rows(client, "t", ScanSpec()) if row.startswith(b"s")}
    with stack.source.client() as client:
        on_source = {row for row, _ in scan_rows(client, "t", ScanSpec()) if row.startswith(b"s")}
    assert on_source == written, sorted(written ^ on_source)[:5]
    assert on_peer == on_source, sorted(on_peer ^ on_source)[:5]
    # each dead server's one queue moved once, to one claimer, and was deleted once drained: no second copy
    # of a queue was left for a second ship. A claimer may itself be one of the ten, still alive when the
    # first death was seen (its session not yet expired): the recovered queue it took then moves on with its
    # own queue, under the nested id HBase gives it (``1-<first>-<second>``), as HBase's claims do.
    for s in dying:
        moved = claims[s][0]["moved"]
        assert moved["1"] == f"1-{s}", claims[s][0]
        taken_on = {old: new for old, new in moved.items() if old != "1"}
        assert all(old.split("-", 1)[1] in dying and new == f"{old}-{s}" for old, new in taken_on.items()), moved
    from replication.zk.queue_storage import ReplicationQueueStorage

    queues = ReplicationQueueStorage(stack.source.zk, stack.source.paths)
    left = [q for r in queues.get_list_of_replicators() for q in queues.get_all_queues(r) if q != "1"]
    assert left == [], left


def _catch_task_runner(stack: SchedulerStack, run_id: str, timeout: float = 120) -> int | None:
    """The pid of the claim task's runner in failover run ``run_id`` (its title ``airflow worker -- <ti id>``),
    looked for while the task starts; None when the task ended before it was seen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tis = [t for t in stack.api.task_instances(FAILOVER, run_id) if t["task_id"] == "claim"]
        ti = tis[0] if tis else {}  # none until the scheduler has looked at the new run
        if ti.get("state") in ("success", "failed", "skipped", "upstream_failed"):
            return None
        if ti.get("id"):
            title = f"airflow worker -- {ti['id']}".encode()
            for _ in range(50):
                for entry in Path("/proc").iterdir():
                    try:
                        if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(title):
                            return int(entry.name)
                    except OSError:
                        continue
                time.sleep(0.005)
        else:
            time.sleep(0.05)
    raise AssertionError(f"the claim task of {run_id} did not start within {timeout:.0f}s")


def test_a_death_while_another_failover_run_is_active_is_claimed_by_its_event_run_at_once(stack):
    """A failover run held active (its claim task SIGSTOPped, as a minute's run slowed by a busy machine) does
    not queue the event's run behind it: the asset-triggered run claims seconds after the session expired."""
    server = stack.source.start_region_server()
    _wait_second_in_minute(0, 35)  # the minute's own run is far off: only the event's run can claim in time
    for _attempt in range(3):  # the task may end before its process is seen: trigger another
        held_run = stack.api.trigger(FAILOVER)
        held = _catch_task_runner(stack, held_run)
        if held is not None:
            break
    assert held is not None, "never caught a failover run's claim task running"
    os.kill(held, signal.SIGSTOP)
    try:
        killed_at = time.time()
        stack.source.kill(server)
        claims = _wait_claimed(stack, [server], timeout=SESSION_S + 30)
        assert len(claims[server]) == 1, claims[server]
        assert claims[server][0]["claimed_ms"] / 1000 - killed_at < SESSION_S + 30
        assert stack.api.run(FAILOVER, held_run)["state"] == "running", "the held run was still active"
        deadline = time.monotonic() + 60  # the claim is recorded before its run ends
        while server not in _asset_runs_claimed(stack):
            assert time.monotonic() < deadline, "no asset-triggered run claimed the server"
            time.sleep(1)
    finally:
        os.kill(held, signal.SIGCONT)
        with contextlib.suppress(Exception):
            stack.api.wait_for_run(FAILOVER, held_run, timeout=120)
    assert len(_claims(stack)[server]) == 1, "the held run, let go, claimed nothing more"


def test_a_server_dying_while_the_triggerer_is_down_is_claimed_after_its_restart(stack):
    server = stack.source.start_region_server()
    watching = _watchers_started(stack)
    assert watching >= 1, "the triggerer runs the region servers' watcher"
    old = _triggerer_pids(stack)
    for pid in old:
        os.kill(pid, signal.SIGKILL)
    stack.source.kill(server)
    stack.source.wait_until_dead(server, timeout=30)
    claims = _wait_claimed(stack, [server], timeout=150)
    assert len(claims[server]) == 1
    assert not set(old) & set(_triggerer_pids(stack)), "the triggerer was started again"
    deadline = time.monotonic() + 120
    while _watchers_started(stack) < watching + 1:  # the restarted triggerer runs the watcher again
        assert time.monotonic() < deadline, "the restarted triggerer never watched the region servers"
        time.sleep(1)
    # the restarted watcher reported the server (it still held queues) or the minute's run claimed it first
    reported = [p for p in _trigger_payloads(stack) if server in p["servers"]]
    assert reported or server not in _asset_runs_claimed(stack), reported


def test_a_death_while_the_triggerers_session_expired_is_reported_on_its_new_session(stack):
    server = stack.source.start_region_server()
    pids = _triggerer_pids(stack)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(SESSION_S + 5)  # ZooKeeper expires the silent triggerer's session (and drops its watch)
        stack.source.kill(server)
        stack.source.wait_until_dead(server, timeout=30)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    claims = _wait_claimed(stack, [server], timeout=150)
    assert len(claims[server]) == 1
    deadline = time.monotonic() + 60
    while not [p for p in _trigger_payloads(stack) if server in p["servers"]]:
        assert time.monotonic() < deadline, _trigger_payloads(stack)
        time.sleep(2)
    (payload,) = [p for p in _trigger_payloads(stack) if server in p["servers"]]
    assert payload["reason"] == "session", payload


def _start_on_port(stack: SchedulerStack, port: str, state: Path) -> str:
    """A region server process of the source on ``port`` (its site file with ``hbase.regionserver.port``)."""
    import subprocess
    import sys

    from replication.cluster.embedded import site_file
    from replication.config import read_site_xml, write_site_xml

    site = state / "hbase-site.xml"
    write_site_xml(site, {**read_site_xml(site_file(stack.source.root)), "hbase.regionserver.port": port})
    ready = state / "ready"
    with open(state / "rs.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "replication.cluster.regionserver", "--cluster",
                                 stack.source_key, "--conf", str(site), "--ready-file", str(ready)],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, (state / "rs.log").read_text()[-2000:]
        time.sleep(0.05)
    name = ready.read_text().strip()
    stack.source.processes[name] = proc  # stopped with the cluster
    return name


def test_a_server_back_on_its_host_and_port_with_a_new_start_code_has_its_old_queues_claimed(stack, tmp_path):
    """HBase names a restarted server anew (its start code): the old name's queues are a dead server's, and
    the new one, on the same host and port, is live and keeps its own."""
    from replication.zk.queue_storage import ReplicationQueueStorage

    old = stack.source.start_region_server()
    host, port, _code = old.split(",")
    stack.source.kill(old)
    new = _start_on_port(stack, port, tmp_path)
    assert new.split(",")[:2] == [host, port] and new != old
    claims = _wait_claimed(stack, [old], timeout=150)
    assert len(claims[old]) == 1 and claims[old][0]["claimer"] != old
    queues = ReplicationQueueStorage(stack.source.zk, stack.source.paths)
    assert old not in queues.get_list_of_replicators()
    assert new in stack.source.live_servers()
    assert "1" in queues.get_all_queues(new), "the new server keeps its own queue"
    assert new not in _claims(stack), "the new start code is not a death"


def _active_runs(stack: SchedulerStack, dag_id: str) -> list[dict]:
    return [r for r in stack.api.runs(dag_id) if r["state"] in ("queued", "running")]


def _edits_payloads(stack: SchedulerStack) -> list[dict]:
    """Payloads of the asset events the queued edits' watcher fired, oldest first."""
    events = stack.api.call("GET", "/assets/events", params={"limit": 100, "order_by": "timestamp"})
    return [
        e["extra"]["payload"]
        for e in events["asset_events"]
        if e["uri"].endswith("/queued-edits") and e["extra"].get("from_trigger")
    ]


def test_one_write_on_an_idle_cluster_starts_a_ship_run_and_the_row_reaches_the_peer(stack):
    """The ship DAG idle (no run active, its cron a year away): one put on the source is seen by the queued
    edits' watcher in the triggerer, whose asset event starts a ship run that ships the row; the watcher
    reports that backlog once."""
    from replication.cluster.table_reader import ScanSpec, scan_rows
    from replication.zk.lease import holder

    stack.api.set_paused(SHIP, False)
    try:
        # what earlier tests left queued (claimed queues, a fresh WAL's header) ships first, by events too
        # (and the run of the cron's last tick that the scheduler starts on unpausing); the watcher starts.
        # The recovered queues must be gone too, not only drained (they hold 0 bytes): the watcher's event for
        # them comes a moment before the run it starts, and a write in between was shipped by that run, so no
        # new run started after it (the failure of 070fe0b's fresh-clone run and of f0bf744's).
        stack.wait_drained(timeout=600)
        deadline = time.monotonic() + 300
        while (
            _active_runs(stack, SHIP)
            or holder(stack.source.zk, stack.source.paths, "1") is not None
            or "watching the queued edits of" not in stack.airflow.log.read_text(errors="replace")
            or any(q.recovered for q in stack.status().queues)
        ):
            assert time.monotonic() < deadline, _active_runs(stack, SHIP)
            time.sleep(2)
        stack.wait_drained(timeout=120)
        time.sleep(3)  # idle: the watcher has looked at the drained queues since
        before = {r["dag_run_id"] for r in stack.api.runs(SHIP)}
        events_before = len(_edits_payloads(stack))
        with stack.source.client() as client:
            client.put("t", b"idle-first-write", b"f", b"q", b"v")

        deadline = time.monotonic() + 240
        while not (new := [r for r in stack.api.runs(SHIP) if r["dag_run_id"] not in before]):
            assert time.monotonic() < deadline, "no ship run started after the write"
            time.sleep(1)
        run = stack.api.wait_for_run(SHIP, new[0]["dag_run_id"], timeout=300)
        assert run["run_type"] == "asset_triggered" and run["state"] == "success", run
        deadline = time.monotonic() + 120
        while True:
            with stack.peer.client() as client:
                if b"idle-first-write" in {row for row, _ in scan_rows(client, "t", ScanSpec())}:
                    break
            assert time.monotonic() < deadline, "the row never reached the peer"
            time.sleep(2)
        stack.wait_drained(timeout=120)
        time.sleep(5)  # the watcher looks again after the commit: nothing new, so no second event or run
        payloads = _edits_payloads(stack)[events_before:]
        assert [p["peer_id"] for p in payloads] == ["1"], payloads
        assert payloads[0]["pending_bytes"] > 0 and payloads[0]["queues"], payloads
        assert [r["dag_run_id"] for r in stack.api.runs(SHIP) if r["dag_run_id"] not in before] == [run["dag_run_id"]]
    finally:
        stack.api.set_paused(SHIP, True)
    with stack.peer.client() as client:
        on_peer = {row for row, _ in scan_rows(client, "t", ScanSpec())}
    with stack.source.client() as client:
        on_source = {row for row, _ in scan_rows(client, "t", ScanSpec())}
    assert b"idle-first-write" in on_source
    assert on_peer == on_source, sorted(on_peer ^ on_source)[:5]
