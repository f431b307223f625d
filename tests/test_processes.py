"""Pid files that never name another process: the start time is recorded beside the pid."""

from __future__ import annotations

import os
import subprocess
import sys

from replication.processes import pid_alive, read_pid_file, start_time, write_pid_file


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
