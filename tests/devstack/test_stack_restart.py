"""Issue 28: `make down && make up` on the same ports succeeds at once, back to back, twice.

Runs the same module `make up` / `make down` run (replication.devstack.stack), on free ports and a state
folder of its own, and keeps the clusters' state between the starts; `--clean` removes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from replication.devstack.airflow_api import AirflowApi
from replication.devstack.airflow_stack import ORPHAN_NOTE, _task_pids, admin_password
from replication.devstack.postgres import PostgresServer
from replication.net import free_port, port_in_use

pytestmark = pytest.mark.slow

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def devstack(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    return subprocess.run([sys.executable, "-m", "replication.devstack.stack", *args], capture_output=True, text=True,
                          timeout=600, env=env, cwd=REPO)  # fmt: skip


def airflow_db(state: str, *statements: str) -> list[tuple]:
    """Run ``statements`` on the stack's Airflow database (its PostgreSQL server started for them, and
    stopped again, when the stack is down); the rows the first one returned."""
    server = PostgresServer(Path(state) / "postgres")
    started_here = not server.running()
    if started_here:
        server.start()
    try:
        connection = server.connect("airflow")
        try:
            results = []
            with connection.cursor() as cursor:
                for statement in statements:
                    cursor.execute(statement)
                    results.append(cursor.fetchall() if cursor.description else [])
            connection.commit()
            return results[0]
        finally:
            connection.close()
    finally:
        if started_here:
            server.stop()


SHIP_STATES = "SELECT state FROM task_instance WHERE dag_id = 'hbrep_ship' AND task_id = 'peer.ship'"


def ship_task_states(state: str, *then: str) -> list[str]:
    """The states of the ship DAG's task instances (see ``airflow_db``); then the statements ``then``."""
    return [row[0] for row in airflow_db(state, SHIP_STATES, *then)]


def running_task_processes(state: str) -> list[int]:
    """The stack's task processes and the busy executor workers supervising them (what ``make down`` finds to
    stop first: airflow_stack._task_pids of the stack's Airflow session)."""
    tasks, busy = _task_pids(json.loads((Path(state) / "stack.json").read_text())["airflow_sid"])
    return tasks + busy


def api_health(port: int, within_s: float = 60.0) -> int:
    """The status of the API server's health endpoint, asked until it answers or ``within_s`` passed.

    ``up`` returns once the endpoint answered; its one API server worker may then be busy for several seconds
    with the scheduler's first execution-API calls on a loaded machine (a single 10 s read timed out in CI).
    """
    deadline = time.monotonic() + within_s
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/monitor/health", timeout=10) as reply:
                return reply.status
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def test_down_then_up_at_once_twice_keeps_state(tmp_path):
    state, zk_port, port, spark_port = str(tmp_path / "stack"), free_port(), free_port(), free_port()
    ports = ["--state", state, "--zk-port", str(zk_port), "--port", str(port), "--spark-port", str(spark_port)]
    try:
        for round_ in range(3):
            up = devstack("up", *ports)
            assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
            assert api_health(port) == 200
            zk = KazooClient(hosts=f"127.0.0.1:{zk_port}", timeout=10)
            zk.start(timeout=15)
            try:
                if round_ == 0:
                    zk.create("/hbase-a/restart-marker", b"kept")
                assert zk.get("/hbase-a/restart-marker")[0] == b"kept"  # the clusters' state survived
                assert zk.get_children("/hbase-a/replication/peers") == ["1"]
                assert port_in_use(spark_port)  # the ship DAG's Spark Connect server
                if round_ > 0:  # Airflow's metadata database (PostgreSQL) kept the earlier rounds' runs
                    assert ship_task_states(state), "the ship DAG's task instances of round 0 are gone"
                    paused = airflow_db(state, "SELECT is_paused FROM dag WHERE dag_id = 'hbrep_verify'")
                    assert paused == [(False,)], paused
            finally:
                zk.stop()
                zk.close()
            if round_ < 2:  # stopped while a ship window runs (one is open almost always: see stack.py)
                # a run now, not at the next minute (a scheduled one may hold the lease: either one runs)
                password = admin_password(Path(state) / "airflow")
                with AirflowApi(f"http://127.0.0.1:{port}", "admin", password) as api:
                    api.trigger("hbrep_ship")
                deadline = time.monotonic() + 180
                while "running" not in ship_task_states(state) or (round_ == 1 and not running_task_processes(state)):
                    assert time.monotonic() < deadline, f"no ship task ran: {ship_task_states(state)}"
                    time.sleep(1)
            if round_ == 1:  # a task and its supervisor die at once (the OOM killer): nothing records its end
                killed = running_task_processes(state)
                for pid in killed:
                    os.kill(pid, signal.SIGKILL)
            down = devstack("down", "--state", state)
            assert down.returncode == 0, down.stderr
            if round_ == 1:  # down marks it failed, and says so, rather than leave it running for the next start
                assert "marked failed (still running when its process was stopped): hbrep_ship/" in down.stdout, (
                    killed,
                    down.stdout,
                )
                notes = airflow_db(
                    state,
                    "SELECT n.content FROM task_instance ti JOIN task_instance_note n "
                    "ON n.ti_id = ti.id WHERE ti.dag_id = 'hbrep_ship' AND ti.state = 'failed'",
                )
                assert ORPHAN_NOTE in [row[0] for row in notes], notes
            # the window ended at the stop (on_kill) and its end was recorded (the API server stops last):
            # no task instance is left "running" for the next up to find as a zombie. And a DAG paused while
            # the stack is down runs again after the next up (up unpauses the stack's DAGs)
            states = ship_task_states(state, "UPDATE dag SET is_paused = true WHERE dag_id = 'hbrep_verify'")
            # (one whose end was not recorded, its worker killed first on a loaded machine, is marked failed by
            # down with the API server still up: down says so on stdout)
            assert "running" not in states, (states, down.stdout)
            assert not port_in_use(zk_port) and not port_in_use(port) and not port_in_use(spark_port)
            assert not PostgresServer(Path(state) / "postgres").running()  # make down stopped it too
        assert (tmp_path / "stack" / "zk").is_dir()  # kept: the next up finds the clusters' state
        cleaned = devstack("down", "--state", state, "--clean")
        assert cleaned.returncode == 0 and not (tmp_path / "stack").exists()
    finally:
        devstack("down", "--state", state)
