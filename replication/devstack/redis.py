"""The distributed stack's Celery broker: a real Redis server (Debian's ``redis-server``) on 127.0.0.1.

One server per state folder::

    <state>/redis.conf     bound to 127.0.0.1 only, append-only file on (queued tasks survive a restart)
    <state>/data/          its working dir (appendonly file, dump.rdb)
    <state>/redis.log      its log
    <state>/redis.pid      its pid while it runs (with its start time)
    <state>/redis.port     the port it serves on (kept after stop, so a restart takes the same one)

``make redis`` installs ``redis-server`` when it is missing. ``start`` returns once the server answers
``PING``; it fails with one clear line and the log tail otherwise. ``stop`` leaves no process behind.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port, port_in_use
from replication.processes import dies_with_parent, kill_recorded, read_pid_file, stop_recorded, write_pid_file

NAME = "redis"


class RedisServerError(HbrepError):
    """The Redis server could not be started, or did not answer."""


def redis_binary() -> str:
    """The ``redis-server`` executable; RedisServerError saying how to install it when it is missing."""
    found = shutil.which("redis-server")
    if found is None:
        raise RedisServerError("redis-server not found on PATH (run `make redis`, or apt-get install redis-server)")
    return found


def ping(port: int, host: str = LOOPBACK, timeout: float = 1.0) -> bool:
    """True when a Redis server on host:port answers ``PING`` with ``+PONG`` right now."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """A Redis server on 127.0.0.1 owned through a state folder (see module doc)."""

    def __init__(self, state_dir: str | Path, port: int | None = None):
        self.state_dir = Path(state_dir).resolve()
        self._port = port

    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{NAME}.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / f"{NAME}.log"

    @property
    def port(self) -> int:
        """The port given, else the one recorded by the first start, else a free one (then recorded)."""
        if self._port is None:
            recorded = self.state_dir / f"{NAME}.port"
            if recorded.exists():
                self._port = int(recorded.read_text())
            else:
                self._port = free_port()
        return self._port

    @property
    def url(self) -> str:
        """The broker URL Celery takes: ``redis://127.0.0.1:<port>/0``."""
        return f"redis://{LOOPBACK}:{self.port}/0"

    def config(self) -> str:
        """``redis.conf``: loopback, this port, persistence in ``data/`` (append-only, fsync each second)."""
        return "\n".join(
            [
                f"bind {LOOPBACK}",
                "protected-mode yes",
                f"port {self.port}",
                f"dir {self.state_dir / 'data'}",
                "appendonly yes",
                "appendfsync everysec",
                "daemonize no",
                "save 60 1",
                f"logfile {self.log_file}",
                "",
            ]
        )

    def read_pid(self) -> int | None:
        """The server's pid while that very process runs, else None."""
        return read_pid_file(self.pid_file)

    def running(self) -> bool:
        """True while the recorded server process is alive."""
        return self.read_pid() is not None

    def start(self, timeout: float = 30.0) -> int:
        """Start the server; its pid once it answers PING. RedisServerError when one already runs from
        this folder, the port is taken, or it does not answer within ``timeout``."""
        binary = redis_binary()
        if self.running():
            raise RedisServerError(f"a Redis server already runs from {self.state_dir} (pid {self.read_pid()})")
        if port_in_use(self.port):
            raise RedisServerError(f"port {self.port} on {LOOPBACK} is already in use (the Redis broker's port)")
        (self.state_dir / "data").mkdir(parents=True, exist_ok=True)
        (self.state_dir / f"{NAME}.port").write_text(f"{self.port}\n")
        conf = self.state_dir / "redis.conf"
        conf.write_text(self.config())
        process = subprocess.Popen([binary, str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, cwd=self.state_dir, start_new_session=True,
                                   preexec_fn=dies_with_parent())  # fmt: skip
        write_pid_file(self.pid_file, process.pid)
        deadline = time.monotonic() + timeout
        while not ping(self.port):
            if process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RedisServerError(f"redis-server did not answer PING on port {self.port}{self._tail()}")
            time.sleep(0.1)
        return process.pid

    def stop(self, timeout: float = 15.0) -> bool:
        """SIGTERM (Redis writes its files and exits), SIGKILL after ``timeout``; True if one was running."""
        return stop_recorded(self.pid_file, signal.SIGTERM, timeout)

    def kill(self) -> None:
        """SIGKILL the server (failure tests); the pid file goes."""
        kill_recorded(self.pid_file)

    def _tail(self, lines: int = 10) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return f"; log tail ({self.log_file}):\n" + "\n".join(text.splitlines()[-lines:])
