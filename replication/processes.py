"""Processes hbrep starts and stops by pid: alive or not, signals to a process group, no zombies left.

Shared by every launcher (ZooKeeper, the dev stack's JVMs, region servers, Airflow's session).
"""

from __future__ import annotations

import contextlib
import os


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def signal_group(pid: int, sig: int) -> None:
    """Send ``sig`` to the process group led by ``pid`` and to ``pid`` itself; gone processes are fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def reap(pid: int) -> None:
    """Collect ``pid`` if it is a child of ours that has exited (no zombie left behind)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
