from __future__ import annotations

import json
import subprocess
import sys

from replication.net import free_port
from replication.processes import pid_alive


def hbrep(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", *args], capture_output=True, text=True, timeout=120)


def test_zk_start_status_stop(tmp_path):
    port, data = str(free_port()), str(tmp_path / "zk")
    started = hbrep("zk", "start", "--port", port, "--data", data)
    assert started.returncode == 0, started.stderr
    assert f"ZooKeeper serving on 127.0.0.1:{port}" in started.stdout
    status = hbrep("zk", "status", "--port", port, "--data", data, "--json")
    assert status.returncode == 0
    state = json.loads(status.stdout)
    assert state["running"] is True and state["mode"] == "standalone"
    stopped = hbrep("zk", "stop", "--port", port, "--data", data)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not pid_alive(state["pid"])
    after = hbrep("zk", "status", "--port", port, "--data", data)
    assert after.returncode == 1 and "not running" in after.stdout


def test_bad_conf_is_one_error_line(tmp_path):
    result = hbrep("--conf", str(tmp_path / "missing.xml"), "zk", "status")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"hbrep: error: configuration file not found: {tmp_path}/missing.xml"]


def test_zk_stop_then_start_at_once_twice(tmp_path):
    """Issue 28: `hbrep zk stop && hbrep zk start` on the same port succeeds at once, back to back, twice."""
    port, data = str(free_port()), str(tmp_path / "zk")
    for _ in range(3):
        started = hbrep("zk", "start", "--port", port, "--data", data)
        assert started.returncode == 0, started.stderr
        # a client session leaves connections behind once the server goes (TIME-WAIT on the server's port)
        assert hbrep("--cluster", f"127.0.0.1:{port}:/hbase", "list_peers").returncode == 0
        stopped = hbrep("zk", "stop", "--port", port, "--data", data)
        assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr
