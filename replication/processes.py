"""Processes hbrep starts and stops by pid: alive or not, signals to a process group, no zombies left.

Shared by every launcher (ZooKeeper, the dev stack's JVMs, region servers, Airflow's session).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# Set (to 1) in the environment of a process whose servers must outlive it: `make up` starts a stack and exits.
DETACHED_ENV = "HBREP_DETACHED"
_PR_SET_PDEATHSIG = 1


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


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` and return once ``pid`` is gone (reaped if it is our child)."""
    signal_group(pid, signal.SIGKILL)
    while pid_alive(pid):
        reap(pid)
        time.sleep(0.02)


def stop_group(pid: int, sig: int, timeout: float) -> None:
    """Send ``sig`` to the process group led by ``pid``; if ``pid`` still lives after ``timeout`` seconds,
    SIGKILL the group (:func:`kill_group`). Returns once ``pid`` is gone, reaped if it is our child."""
    signal_group(pid, sig)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        reap(pid)
        time.sleep(0.05)
    if pid_alive(pid):
        kill_group(pid)
    reap(pid)


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot, /proc/<pid>/stat field 22); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(") ", 1)[1].split()[19])
    except (FileNotFoundError, IndexError, ValueError, ProcessLookupError):
        return None


def write_pid_file(path: Path, pid: int) -> None:
    """Record ``pid`` with its start time, so that :func:`read_pid_file` never names another process.

    Pids are reused (pid_max is 32768 on many Linux machines, and a busy test run goes round it in
    minutes): a pid alone in a file left by a process that died could make a later stop signal a
    stranger, and its whole process group.
    """
    path.write_text(f"{pid} {start_time(pid) or 0}\n")


def read_pid_file(path: Path) -> int | None:
    """The pid recorded by :func:`write_pid_file` if that very process is still running, else None.

    A file holding only a pid (as written before start times were recorded) is taken at its word.
    """
    try:
        fields = path.read_text().split()
        pid = int(fields[0])
        started = int(fields[1]) if len(fields) > 1 else None
    except (OSError, ValueError, IndexError):
        return None
    if not pid_alive(pid):
        return None
    if started is not None and started != 0 and start_time(pid) != started:
        return None  # the recorded process is gone; this pid now belongs to another one
    return pid


def stop_recorded(pid_file: Path, sig: int, timeout: float) -> bool:
    """Stop the process recorded in ``pid_file`` (:func:`read_pid_file`) and its group: ``sig``, then SIGKILL
    after ``timeout`` (:func:`stop_group`). The pid file goes; True if that process was running."""
    pid = read_pid_file(pid_file)
    if pid is not None:
        stop_group(pid, sig, timeout)
    pid_file.unlink(missing_ok=True)
    return pid is not None


def kill_recorded(pid_file: Path) -> None:
    """SIGKILL the process recorded in ``pid_file`` and its group at once (failure tests); the pid file goes."""
    pid = read_pid_file(pid_file)
    if pid is not None:
        kill_group(pid)
    pid_file.unlink(missing_ok=True)


@contextlib.contextmanager
def detached() -> Iterator[None]:
    """Within the block, what this process starts outlives it (no parent-death signal): for commands that
    start a server or a stack and exit (``make up``, ``hbrep zk|spark|hdfs|hbase|cluster start``)."""
    before = os.environ.get(DETACHED_ENV)
    os.environ[DETACHED_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(DETACHED_ENV, None)
        else:
            os.environ[DETACHED_ENV] = before


def dies_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that gives the child ``sig`` when this process dies
    (Linux's parent-death signal), so that servers a test or the demo starts never outlive a killed run.

    None (start the child as it is) when servers are meant to outlive this process (``HBREP_DETACHED=1``,
    set by ``make up``) or off the main thread: the signal fires when the *thread* that forked the child
    ends, which for the main thread is the process's end.
    """
    if os.environ.get(DETACHED_ENV) == "1" or threading.current_thread() is not threading.main_thread():
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def set_parent_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os.kill(os.getpid(), sig)

    return set_parent_death_signal
