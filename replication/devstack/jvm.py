"""One JVM of the dev stack, owned through a state folder: ``<name>.pid`` while it runs, ``<name>.log``.

The shape ZooKeeper's launcher has had from the start, for every other Java component (HMaster,
HRegionServer, HBase's Thrift server, NameNode, DataNode, the Spark Connect server): ``start`` returns
once the caller's readiness check passes and fails with one clear line plus the log tail otherwise;
``stop`` sends SIGTERM to the process group, then SIGKILL, and leaves no process behind; ``kill`` is
the SIGKILL of failure tests. A JVM dies with the process that started it (parent-death signal), unless
that process starts a stack meant to outlive it (``make up``: ``HBREP_DETACHED``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from replication.errors import HbrepError
from replication.net import LOOPBACK
from replication.processes import (
    dies_with_parent,
    kill_recorded,
    pid_alive,
    read_pid_file,
    stop_recorded,
    write_pid_file,
)

# The dev stack's own servers (ZooKeeper, NameNode, DataNode, HBase) and short Hadoop tools compile with C1 only
# and collect with the serial GC: small heaps and dev-sized loads, where the C2 compiler's and the
# parallel GC's threads cost more CPU than they win. Measured here on one server started and given the same small
# load (3,000 creates and reads; an HDFS start with 40 files written and read back): ZooKeeper took 3-4 CPU-seconds
# against 6, NameNode and DataNode 9 against 15-16. Spark's JVMs keep Spark's defaults (the warm Connect engine of
# make up works for hours); the test suite sets the same flags for them (tests/conftest.py).
DEV_SERVER_JIT_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


class JvmProcessError(HbrepError):
    """A JVM of the dev stack could not be started or did not become ready."""


def port_accepts(port: int, host: str = LOOPBACK, timeout: float = 1.0) -> bool:
    """True when a TCP connection to host:port is accepted right now (a readiness check)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass
class JvmProcess:
    """``java [options] -cp CLASSPATH MAIN [args]`` in its own session, logging to ``<state>/<name>.log``."""

    name: str
    state_dir: Path
    main_class: str
    classpath: str
    args: Sequence[str] = ()
    jvm_options: Sequence[str] = ()
    heap_mb: int = 512
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state_dir = Path(self.state_dir).resolve()

    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / f"{self.name}.log"

    def read_pid(self) -> int | None:
        """The pid in the pid file while that very process runs (start time checked: a dead JVM's pid
        taken by another process is not ours to signal), else None."""
        return read_pid_file(self.pid_file)

    def running(self) -> bool:
        """True while the recorded process is alive."""
        pid = self.read_pid()
        return pid is not None and pid_alive(pid)

    def java(self) -> str:
        """The ``java`` executable on PATH; JvmProcessError naming this JVM when there is none."""
        java = shutil.which("java")
        if java is None:
            raise JvmProcessError(f"java not found on PATH ({self.name} needs Java 17)")
        return java

    def spawn(self) -> subprocess.Popen:
        """Launch the JVM (pid file written) and return at once."""
        java = self.java()
        if self.running():
            raise JvmProcessError(f"{self.name} already runs from {self.state_dir} (pid {self.read_pid()})")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        command = [java, f"-Xmx{self.heap_mb}m", *self.jvm_options, "-cp", self.classpath, self.main_class, *self.args]
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.state_dir,
                env={**os.environ, **self.env},
                start_new_session=True,
                preexec_fn=dies_with_parent(),  # a killed test run leaves no JVM behind (not under make up)
            )
        write_pid_file(self.pid_file, process.pid)
        return process

    def start(self, ready: Callable[[], bool], timeout: float = 120.0) -> int:
        """Spawn and wait until ``ready()`` is true; return the pid.

        Raises JvmProcessError (one line, then the log tail) if the JVM exits or is not ready in time;
        a JVM that is not ready in time is stopped.
        """
        process = self.spawn()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise JvmProcessError(
                    f"{self.name} exited with code {process.returncode} during start-up{self.log_tail_suffix()}"
                )
            if ready():
                return process.pid
            time.sleep(0.2)
        self.stop()
        raise JvmProcessError(f"{self.name} was not ready within {timeout:.0f}s{self.log_tail_suffix()}")

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM, then SIGKILL after ``timeout``; True if a process was running. The pid file goes."""
        return stop_recorded(self.pid_file, signal.SIGTERM, timeout)

    def kill(self) -> None:
        """SIGKILL the JVM's whole process group at once (failure tests); the pid file goes."""
        kill_recorded(self.pid_file)

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the log ('' when there is none)."""
        try:
            text = self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def log_tail_suffix(self) -> str:
        """``; log tail (PATH):\\n...`` for an error message, or '' when the log is empty."""
        tail = self.log_tail()
        return f"; log tail ({self.log_file}):\n{tail}" if tail else ""
