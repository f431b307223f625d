"""``hbrep spark start|stop|status``: the real Spark Connect server, started, crashed, started again, stopped."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import psutil
import pytest

from replication.net import free_port
from replication.processes import pid_alive

pytestmark = pytest.mark.slow


def hbrep(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replication.cli", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})},
    )  # fmt: skip


def _session_members(sid: int) -> list[int]:
    members = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getsid(proc.pid) == sid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
        except (ProcessLookupError, PermissionError):
            continue
    return members


def test_start_status_crash_restart_stop(tmp_path):
    port, state = str(free_port()), str(tmp_path / "state" / "spark")
    # no flags: the configuration keys pick the port, the state folder (<hbrep.state.dir>/spark) and the heap
    keys = {
        "HBREP__hbrep__state__dir": str(tmp_path / "state"),
        "HBREP__hbrep__spark__connect__port": port,
        "HBREP__hbrep__spark__connect__driver__memory__mb": "640",
    }
    started = hbrep("spark", "start", env=keys)
    assert started.returncode == 0, started.stderr
    assert f"Spark Connect serving on sc://127.0.0.1:{port}" in started.stdout  # not 15002, the default
    try:
        assert (tmp_path / "state" / "spark" / "spark-connect.pid").is_file()  # not .hbrep/spark
        jvm = psutil.Process(int((tmp_path / "state" / "spark" / "spark-connect.pid").read_text().split()[0]))
        assert "-Xmx640m" in jvm.cmdline() and "spark.driver.memory=640m" in jvm.cmdline()  # not 1024m
        # hbrep.spark.connect.url empty: the client finds the server this state folder records
        from replication.config import Config
        from replication.jobs.connect import connect_url

        assert connect_url(Config.load(env={}, overrides={"hbrep.state.dir": str(tmp_path / "state")})) == (
            f"sc://127.0.0.1:{port}"
        )
        again = hbrep("spark", "start", "--port", port, "--state", state)
        assert again.returncode == 1
        assert len(again.stderr.strip().splitlines()) == 1 and "already runs from" in again.stderr

        status = hbrep("spark", "status", "--state", state, "--json")
        assert status.returncode == 0, status.stdout
        first = json.loads(status.stdout)
        assert first["serving"] and first["url"] == f"sc://127.0.0.1:{port}"

        # a crash: SIGKILL to the server's whole process group; the pid file is left behind
        os.killpg(first["pid"], signal.SIGKILL)
        while pid_alive(first["pid"]):
            pass
        down = hbrep("spark", "status", "--state", state)
        assert down.returncode == 1 and "not running" in down.stdout

        # `hbrep spark start` brings it back on the recorded port, no --port needed
        restarted = hbrep("spark", "start", "--state", state)
        assert restarted.returncode == 0, restarted.stderr
        assert f"sc://127.0.0.1:{port}" in restarted.stdout
        second = json.loads(hbrep("spark", "status", "--state", state, "--json").stdout)
        assert second["serving"] and second["pid"] != first["pid"]
    finally:
        stopped = hbrep("spark", "stop", "--state", state)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
    assert not pid_alive(second["pid"])
    assert _session_members(second["pid"]) == []  # no JVM thread or Python worker of its session is left
    assert hbrep("spark", "stop", "--state", state).stdout.startswith("Spark Connect was not running")


def test_a_taken_port_is_one_clear_error_and_leaves_nothing_running(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = hbrep("spark", "start", "--port", str(port), "--state", str(tmp_path / "s"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"hbrep: error: port {port} on 127.0.0.1 is already in use (Spark Connect's gRPC port)"
    ]
    assert not (tmp_path / "s" / "spark-connect.pid").exists()
