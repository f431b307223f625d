"""Pid files that never name another process: the start time is recorded beside the pid. Servers started by
a test run die with it, SIGKILLed or not; those of a stack meant to outlive its command (``detached``) do not."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from replication.processes import (
    DETACHED_ENV,
    detached,
    dies_with_parent,
    pid_alive,
    read_pid_file,
    start_time,
    write_pid_file,
)


def test_a_pid_file_names_its_own_running_process(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = tmp_path / "child.pid"
        write_pid_file(path, child.pid)
        pid, started = path.read_text().split()
        assert int(pid) == child.pid and int(started) == start_time(child.pid) > 0
        assert read_pid_file(path) == child.pid
    finally:
        child.kill()
        child.wait()
    assert not pid_alive(child.pid)
    assert read_pid_file(path) is None


def test_a_reused_pid_is_not_taken_for_the_recorded_process(tmp_path):
    # This very process stands for "another process that got the recorded pid": its start time differs.
    path = tmp_path / "stale.pid"
    path.write_text(f"{os.getpid()} {start_time(os.getpid()) + 1}\n")
    assert read_pid_file(path) is None


def test_missing_garbled_and_old_style_files(tmp_path):
    assert read_pid_file(tmp_path / "absent.pid") is None
    (tmp_path / "garbled.pid").write_text("not a pid\n")
    assert read_pid_file(tmp_path / "garbled.pid") is None
    (tmp_path / "old.pid").write_text(f"{os.getpid()}\n")  # a pid alone: taken at its word
    assert read_pid_file(tmp_path / "old.pid") == os.getpid()


# A test run of its own: it starts real servers (ZooKeeper's JVM, PostgreSQL, a region server, Airflow's
# session), says so, and hangs until it is SIGKILLed.
_HANGING_TEST = """
import os
import time
from pathlib import Path

from replication.cluster.embedded import start_cluster
from replication.devstack.airflow_stack import airflow_environment, launch_standalone
from replication.devstack.postgres import PostgresServer
from replication.devstack.zookeeper import ZooKeeperServer
from replication.net import free_port


def test_start_servers_then_hang():
    state = Path(os.environ["HBREP_KILLED_RUN_STATE"])
    zk = ZooKeeperServer(state / "zk", free_port())
    zk.start()
    postgres = PostgresServer(state / "postgres")
    postgres.start()
    start_cluster(f"{zk.hosts}:/hbase-k", str(state / "k"), 1, name="k")
    env = airflow_environment(state / "airflow", f"{zk.hosts}:/hbase-k", database=postgres.ensure_database("k"),
                              api_port=free_port())
    launch_standalone(env, state / "airflow.log")
    (state / "started").write_text("started")
    time.sleep(600)
"""


def _processes_with(marker: bytes) -> dict[int, str]:
    """Live processes whose environment holds ``marker``: pid -> command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        proc = Path("/proc") / entry
        try:
            if marker in (proc / "environ").read_bytes() and pid_alive(int(entry)):
                found[int(entry)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
        except OSError:
            continue
    return found


@pytest.mark.slow
def test_a_sigkilled_test_run_leaves_no_process_behind(tmp_path):
    marker = f"HBREP_KILLED_RUN={uuid.uuid4().hex}"
    (tmp_path / "test_hanging.py").write_text(_HANGING_TEST)
    name, value = marker.split("=")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW") and k != DETACHED_ENV}
    env.update({name: value, "HBREP_KILLED_RUN_STATE": str(tmp_path / "state")})
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                            "--rootdir", str(tmp_path), str(tmp_path / "test_hanging.py")],
                           env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "state" / "started").exists():
            assert run.poll() is None, f"the inner test run ended with {run.returncode} before it started its servers"
            assert time.monotonic() < deadline, "the inner test run did not start its servers in time"
            time.sleep(0.5)
        started = _processes_with(marker.encode())
        commands = " ".join(started.values())
        for server in ("zookeeper", "postgres", "replication.cluster.regionserver", "bash -c"):
            assert server in commands, f"{server} is not running: {started}"
        run.kill()  # SIGKILL: no fixture, no finally, no atexit runs
        run.wait()
        deadline = time.monotonic() + 60
        while (left := _processes_with(marker.encode())) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not left, f"left behind by the killed test run: {left}"
    finally:
        run.kill()
        run.wait()
        for pid in _processes_with(marker.encode()):  # nothing of this test's outlives it, even on failure
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


_SPAWN_THEN_EXIT = """
import subprocess, sys
from replication.processes import dies_with_parent
child = subprocess.Popen(["sleep", "60"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, preexec_fn=dies_with_parent())
print(child.pid, flush=True)
"""


def _orphan_of_an_exited_parent(env: dict[str, str]) -> int:
    """Start a process that starts ``sleep 60`` with :func:`dies_with_parent` and exits; the sleep's pid."""
    done = subprocess.run([sys.executable, "-c", _SPAWN_THEN_EXIT], env=env, capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return int(done.stdout)


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not pid_alive(pid)


def test_a_child_dies_with_the_process_that_started_it():
    env = {k: v for k, v in os.environ.items() if k != DETACHED_ENV}
    assert _gone_within(_orphan_of_an_exited_parent(env), 10)


def test_a_detached_child_outlives_the_process_that_started_it():
    orphan = _orphan_of_an_exited_parent({**os.environ, DETACHED_ENV: "1"})
    try:
        assert not _gone_within(orphan, 1.0)
    finally:
        os.kill(orphan, signal.SIGKILL)


def test_detached_applies_within_its_block_only_and_threads_never_arm_the_signal():
    import threading

    os.environ.pop(DETACHED_ENV, None)
    assert dies_with_parent() is not None
    with detached():
        assert os.environ[DETACHED_ENV] == "1" and dies_with_parent() is None
    assert DETACHED_ENV not in os.environ and dies_with_parent() is not None
    off_main: list[object] = []
    thread = threading.Thread(target=lambda: off_main.append(dies_with_parent()))
    thread.start()
    thread.join()
    assert off_main == [None]  # the signal would fire when that thread ends, not when the process does
