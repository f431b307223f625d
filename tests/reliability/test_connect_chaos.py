"""Reliability of the Spark Connect engine: the server, the task process and a sink SIGKILLed mid-pass.

Same shape as test_chaos.py (own table on a drained A (3 RS) → B (2 RS) world, VerifyReplication and the
sets of row keys on both sides at the end); passes run through ``run_window`` on the session's real
Spark Connect server, as the ship DAG's connect mode runs them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from replication.cluster.recovery import recover_dead_server
from replication.fs import get_filesystem
from replication.jobs.connect import ConnectShipRunner, SparkConnectUnavailable
from replication.jobs.ship_window import run_window
from replication.zk import lease
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from tests.reliability.harness import ROWS, ensure_servers, key_of, peer_writes, queue_state, throttled, wait_for
from tests.reliability.harness import write_rows as write
from tests.reliability.test_chaos import finish, start

pytestmark = [pytest.mark.slow, pytest.mark.chaos]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _connect(conf, server):
    return conf.with_overrides({"hbrep.spark.connect.url": server.url})


def _positions(state: dict) -> dict[str, int]:
    out = {}
    for rs, queues in state.items():
        for queue, wals in queues.items():
            out.update({f"{rs}/{queue}/{wal}": pos for wal, pos in wals.items()})
    return out


def _unchanged(before: dict, after: dict) -> bool:
    """Every WAL recorded before is still recorded at the same position (new WALs may have been added)."""
    old, new = _positions(before), _positions(after)
    return all(new.get(name) == pos for name, pos in old.items())


def _window(world, conf, owner: str, work) -> object:
    with connected(key_of(world.a)) as zk, ConnectShipRunner(conf, work, owner=owner) as runner:
        return run_window(zk, key_of(world.a), conf, runner, owner=owner, work_dir=work / "cycles", window_ms=0)


def _lease_holder(world):
    with connected(key_of(world.a)) as zk:
        return lease.holder(zk, ZNodePaths(world.a.conf, parent=key_of(world.a).znode_parent), "1")


def test_connect_server_sigkill_mid_pass(world, spark, spark_connect, scenario, tmp_path):
    """The Spark Connect server is SIGKILLed mid-pass; the pass fails clearly, `hbrep spark start` brings it
    back on its port, and the next run resumes from the recorded positions."""
    a, b = world.a, world.b
    table = start(world, spark, "connectkill")
    written = write(a, table, 0, ROWS)
    conf = _connect(throttled(a.conf, 8.0, ROWS), spark_connect)
    before, writes_before = queue_state(a), peer_writes(b)
    outcome: dict = {}

    def ship() -> None:
        try:
            outcome["report"] = _window(world, conf, "chaos-connect-kill", tmp_path)
        except Exception as exc:
            outcome["error"], outcome["at"] = exc, time.monotonic()

    shipper = threading.Thread(target=ship)
    shipper.start()
    wait_for(lambda: peer_writes(b) > writes_before or not shipper.is_alive(), 240, "the pass's first batch")
    running = shipper.is_alive()
    killed_at = time.monotonic()
    spark_connect.kill()
    try:
        shipper.join(180)
        assert running, "the server was killed while the pass was shipping"
        scenario.check(
            "Spark Connect server (JVM and Python workers) SIGKILLed after the peer applied part of the pass"
        )
        error = outcome.get("error")
        assert isinstance(error, SparkConnectUnavailable), outcome
        assert "\n" not in str(error) and spark_connect.url in str(error)
        waited = outcome["at"] - killed_at
        assert waited < 90
        scenario.check(f"the pass failed within {waited:.0f}s with one clear line: {str(error)[:160]!r}")
        assert _unchanged(before, queue_state(a)) and _lease_holder(world) is None
        scenario.check("every recorded position is unchanged and the run's lease was released")
        restarted = subprocess.run(
            [sys.executable, "-m", "replication.cli", "spark", "start", "--state", str(spark_connect.state_dir)],
            capture_output=True, text=True, timeout=300, cwd=REPO,
        )  # fmt: skip
        assert restarted.returncode == 0, restarted.stderr
        assert spark_connect.url in restarted.stdout
        scenario.check(f"`hbrep spark start` started the server again on its recorded port ({spark_connect.url})")
    finally:  # the session's server serves the tests after this one: never leave it dead
        if not spark_connect.running():
            spark_connect.start()
    report = _window(world, _connect(a.conf, spark_connect), "chaos-connect-next", tmp_path)
    assert not report.failures and report.rows == written
    scenario.check(f"the next run shipped all {written} rows (partly again) from the recorded positions")
    finish(world, spark, scenario, table, written, report.rows)


def test_task_process_sigkill_mid_pass(world, spark, spark_connect, scenario, tmp_path):
    """The Airflow task process running a pass (ReplicationHook.ship_window) is SIGKILLed mid-pass; the
    task's retry interrupts what it left on the server and ships everything."""
    a, b = world.a, world.b
    table = start(world, spark, "taskkill")
    written = write(a, table, 0, ROWS)
    conf = throttled(a.conf, 8.0, ROWS)
    owner = "airflow:hbrep_ship:chaos-run:1"
    env = dict(os.environ)
    env.update({"HBREP__" + k.replace(".", "__"): v for k, v in conf.as_dict().items() if k != "hbrep.state.dir"})
    quorum, port, parent = str(key_of(a)).rsplit(":", 2)
    env["AIRFLOW_CONN_HBREP_SOURCE"] = json.dumps(
        {"conn_type": "zookeeper", "host": quorum, "port": int(port), "schema": parent}
    )
    env["HBREP__hbrep__work__dir"] = str(tmp_path / "cycles")
    env["PYTHONPATH"] = os.path.join(REPO, "plugins")
    code = (
        "import sys; from hbrep_airflow.hooks.replication import ReplicationHook; "
        "ReplicationHook('hbrep_source').ship_window('1', owner=sys.argv[1], cycle_prefix='chaos-task', "
        "connect_url=sys.argv[2])"
    )
    before, writes_before = queue_state(a), peer_writes(b)
    task = subprocess.Popen(
        [sys.executable, "-c", code, owner, spark_connect.url], cwd=REPO, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: peer_writes(b) > writes_before or task.poll() is not None, 240, "the pass's first batch")
    finally:
        running = task.poll() is None
        with contextlib.suppress(ProcessLookupError):  # it ended first: `running` says so below
            os.killpg(task.pid, signal.SIGKILL)
        task.wait(30)
    assert running, "the task process was killed while its pass was running"
    scenario.check("the task process SIGKILLed after the peer had applied part of its pass")
    assert _unchanged(before, queue_state(a))
    assert (_lease_holder(world) or {}).get("owner") == owner
    scenario.check("no position moved; the killed run's lease still holds the peer")
    busy = _window(world, _connect(a.conf, spark_connect), "another-run", tmp_path)
    assert busy.rows == 0 and "1" in busy.busy_peers
    scenario.check("another run meanwhile skips the peer")
    with connected(key_of(a)) as zk, ConnectShipRunner(_connect(a.conf, spark_connect), tmp_path, owner=owner) as r:
        retry = run_window(zk, key_of(a), r.conf, r, owner=owner, work_dir=tmp_path / "retry", window_ms=0)
    assert not retry.failures and retry.rows == written and _lease_holder(world) is None
    scenario.check(f"the retry (same owner) shipped all {written} rows (partly again) and released the lease")
    finish(world, spark, scenario, table, written, retry.rows)


def test_sink_sigkill_mid_pass_on_connect(world, spark, spark_connect, scenario, tmp_path):
    """A peer region server (sink) is SIGKILLed while a pass on the Spark Connect server ships to it."""
    a, b = world.a, world.b
    table = start(world, spark, "connectsink")
    written = write(a, table, 0, ROWS)
    conf = _connect(throttled(a.conf, 6.0, ROWS), spark_connect)
    writes_before = peer_writes(b)
    outcome: dict = {}

    def ship() -> None:
        try:
            outcome["report"] = _window(world, conf, "chaos-connect-sink", tmp_path)
        except Exception as exc:
            outcome["error"] = exc

    shipper = threading.Thread(target=ship)
    shipper.start()
    wait_for(lambda: peer_writes(b) > writes_before or not shipper.is_alive(), 240, "the pass's first batch")
    victim = b.servers[0]
    b.kill(victim)
    during = shipper.is_alive()
    shipper.join(240)
    assert during, "the sink was killed while the pass was shipping"
    scenario.check(f"sink {victim} SIGKILLed while the pass was still shipping")
    assert "error" not in outcome, f"the pass must end cleanly, not raise: {outcome.get('error')}"
    report = outcome["report"]
    for failure in report.failures:
        assert failure.status == "failed" and failure.error, failure
    scenario.check(
        "the pass ended cleanly: "
        + (f"{len(report.failures)} queue(s) failed, {report.failures[0].error[:120]!r}" if report.failures else
           "every queue went to the other sink")
    )  # fmt: skip
    b.wait_until_dead(victim)
    fs, root = get_filesystem(b.root)
    recover_dead_server(fs, root, victim)
    ensure_servers(b, 2)
    finish(world, spark, scenario, table, written, report.rows)
