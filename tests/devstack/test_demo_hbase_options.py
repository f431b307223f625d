"""The options of ``make demo-hbase`` that need the secure story: each wrong use is refused with one line and a
non-zero exit before anything is started (no state folder is made)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def demo(*args: str, state) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "replication.devstack.demo_hbase", "--state", str(state), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--secure", "--ticket-lifetime", "30"], "at least 60 seconds, not 30"),
        (["--secure", "--ticket-lifetime", "2m"], "not a whole number of seconds: '2m'"),
        (["--secure", "--soak-lifetimes", "0"], "at least 1, not 0"),
        (["--ticket-lifetime", "120"], "--ticket-lifetime needs --secure"),
        (["--soak-lifetimes", "3"], "--soak-lifetimes needs --secure"),
    ],
)
def test_options_of_the_secure_story_are_refused_in_one_line_before_anything_starts(args, said, tmp_path):
    state = tmp_path / "demo"
    done = demo(*args, state=state)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert said in lines[-1], done.stderr
    assert not any("Traceback" in line for line in lines), done.stderr
    assert not state.exists()
