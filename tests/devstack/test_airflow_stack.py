"""The embedded stack's Airflow environment: the settings it adds are ones Airflow itself reads; its metadata
database is PostgreSQL unless SQLite is asked for."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from replication.devstack.airflow_stack import (
    DATABASE_ENV,
    MIN_HEARTBEAT_INTERVAL_S,
    SCHEDULER_IDLE_SLEEP_S,
    MetadataDatabaseError,
    airflow_bin,
    airflow_environment,
    metadata_database,
)

REPO = Path(__file__).resolve().parents[2]
SOURCE_KEY = "127.0.0.1:2181:/hbase"
# Where the metadata database would be: `airflow config get-value` reads settings and connects to none.
DATABASE = "postgresql+psycopg2://hbrep:secret@127.0.0.1:1/airflow"


def _airflow_reads(env: dict[str, str], section: str, key: str) -> str:
    done = subprocess.run(
        [airflow_bin(), "config", "get-value", section, key], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_airflow_reads_the_stacks_heartbeat_interval_and_idle_sleep(tmp_path, monkeypatch):
    monkeypatch.delenv("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", raising=False)
    monkeypatch.delenv("AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME", raising=False)
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY, database=DATABASE)
    assert _airflow_reads(env, "workers", "min_heartbeat_interval") == MIN_HEARTBEAT_INTERVAL_S == "1"
    assert _airflow_reads(env, "scheduler", "scheduler_idle_sleep_time") == SCHEDULER_IDLE_SLEEP_S


def test_a_heartbeat_interval_already_in_the_environment_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", "3")
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY, database=DATABASE)
    assert env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == "3"


def test_docker_compose_sets_what_the_embedded_stack_sets():
    compose = yaml.safe_load((REPO / "docker" / "docker-compose.yml").read_text())
    airflow_env = compose["x-airflow-env"]  # every Airflow service's environment
    assert airflow_env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == MIN_HEARTBEAT_INTERVAL_S
    assert airflow_env["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"] == SCHEDULER_IDLE_SLEEP_S


def test_airflow_reads_the_metadata_database_it_is_given(tmp_path):
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY, database=DATABASE)
    assert _airflow_reads(env, "database", "sql_alchemy_conn") == DATABASE


def test_sqlite_only_when_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, "sqlite")
    url, server = metadata_database(tmp_path / "postgres", tmp_path / "airflow")
    assert (url, server) == (f"sqlite:///{tmp_path / 'airflow'}/airflow.db", None)
    assert not (tmp_path / "postgres").exists()  # no PostgreSQL server was made


def test_an_unknown_database_kind_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, "mysql")
    with pytest.raises(MetadataDatabaseError, match="HBREP_AIRFLOW_DB='mysql': expected one of postgres, sqlite"):
        metadata_database(tmp_path / "postgres", tmp_path / "airflow")
    assert not (tmp_path / "postgres").exists()


def test_by_default_a_database_on_the_stacks_postgresql_server(tmp_path, monkeypatch):
    monkeypatch.delenv(DATABASE_ENV, raising=False)
    url, server = metadata_database(tmp_path / "postgres", tmp_path / "airflow", "stack_one")
    try:
        assert server is not None and server.running()
        assert url == server.url("stack_one")
        connection = server.connect("stack_one")  # the database exists
        connection.close()
    finally:
        assert server is not None and server.stop()


# A LocalExecutor worker as Airflow titles it while it supervises a task, whose task process was forked and
# has not titled itself yet (its task instance is already "running": the supervisor reported the start).
_BUSY_WORKER = """
import os, signal, sys, time
from setproctitle import setproctitle
setproctitle("airflow worker -- LocalExecutor: hbrep_ship/peer.ship" if sys.argv[1] == "busy" else
             "airflow worker -- LocalExecutor: <idle>")
child = os.fork() if sys.argv[1] == "busy" else 0
if child:  # the worker: back to idle once its task has ended, as LocalExecutor's _run_worker does
    os.waitpid(child, 0)
    setproctitle("airflow worker -- LocalExecutor: <idle>")
    print("reported", flush=True)
time.sleep(60)
"""


def _titled(sid: int) -> list[int]:
    from replication.devstack.airflow_stack import session_pids

    return [p for p in session_pids(sid) if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"airflow worker")]


@pytest.mark.parametrize("kind", ["busy", "idle"])
def test_end_tasks_stops_a_task_whose_process_has_not_titled_itself_yet(kind):
    import sys
    import time

    from replication.devstack.airflow_stack import _end_tasks, _task_pids

    worker = subprocess.Popen([sys.executable, "-c", _BUSY_WORKER, kind], start_new_session=True,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        wanted = 2 if kind == "busy" else 1  # the worker titled (and its task forked)
        while len(titled := _titled(worker.pid)) < wanted and time.monotonic() < deadline:
            time.sleep(0.05)
        tasks, busy = _task_pids(worker.pid)
        if kind == "idle":  # an idle worker runs no task: nothing to stop
            assert (tasks, busy) == ([], []), titled
            return
        assert busy == [worker.pid] and len(tasks) == 1 and tasks[0] != worker.pid, titled
        _end_tasks(worker.pid, time.monotonic() + 10)
        assert _task_pids(worker.pid) == ([], [])  # the task was stopped and the worker went idle
        assert worker.stdout.readline().strip() == "reported"
    finally:
        worker.kill()
        worker.wait()


# A stand-in for the ``airflow`` executable in the components' script (the script is under test here, not
# Airflow: tests/secure/test_ticket_lifetimes.py runs Airflow's real renewer): it records each command line,
# lets ``db migrate`` and ``kerberos --one-time`` end with KERBEROS_LOGIN_CODE (default 0) for the latter, and
# runs the long-lived components until the session is stopped.
_STAND_IN = """#!/bin/bash
echo "$*" >> "$CALLS"
case "$*" in
  "db migrate") exit 0 ;;
  "kerberos --one-time") exit "${KERBEROS_LOGIN_CODE:-0}" ;;
  *) exec sleep 60 ;;
esac
"""


def _run_components(tmp_path: Path, expected_calls: int | None, **env: str) -> tuple[int | None, list[str]]:
    """Run the stack's components script with the stand-in until it has made ``expected_calls`` calls (None:
    until it ends), 10 s at most, and a moment more; (its exit code if it ended, the command lines it ran)."""
    import contextlib
    import os
    import signal
    import time

    from replication.devstack.airflow_stack import _COMPONENTS

    stand_in = tmp_path / "airflow"
    stand_in.write_text(_STAND_IN)
    stand_in.chmod(0o755)
    calls = tmp_path / "calls"
    full_env = {"PATH": os.environ["PATH"], "AIRFLOW": str(stand_in), "CALLS": str(calls),
                "AIRFLOW__API__PORT": "1", **env}  # fmt: skip
    script = subprocess.Popen(["bash", "-c", _COMPONENTS], env=full_env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while script.poll() is None and time.monotonic() < deadline:
            if expected_calls and calls.exists() and len(calls.read_text().splitlines()) >= expected_calls:
                break
            time.sleep(0.05)
        time.sleep(0.3)  # nothing else starts after those
        return script.poll(), calls.read_text().splitlines() if calls.exists() else []
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone when the script ended by itself
            os.killpg(script.pid, signal.SIGKILL)
        script.wait()


def test_with_kerberos_security_airflows_renewer_logs_in_first_then_runs_beside_the_components(tmp_path):
    code, calls = _run_components(tmp_path, 7, AIRFLOW__CORE__SECURITY="kerberos")
    assert code is None  # still running
    assert calls[:2] == ["db migrate", "kerberos --one-time"]
    assert sorted(calls[2:]) == sorted(["kerberos", "scheduler --skip-serve-logs", "triggerer --skip-serve-logs",
                                        "dag-processor", "api-server --host 127.0.0.1 --port 1"])  # fmt: skip


def test_a_failed_kerberos_login_stops_the_stack_before_any_component_starts(tmp_path):
    code, calls = _run_components(tmp_path, None, AIRFLOW__CORE__SECURITY="kerberos", KERBEROS_LOGIN_CODE="3")
    assert code == 3 and calls == ["db migrate", "kerberos --one-time"]


def test_without_kerberos_security_no_renewer_runs(tmp_path):
    code, calls = _run_components(tmp_path, 5)
    assert code is None and calls[0] == "db migrate" and not [c for c in calls if c.startswith("kerberos")]
    assert len(calls) == 5
