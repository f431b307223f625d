"""The dev stack's PostgreSQL server: Airflow's metadata database for ``make up``, ``make demo`` and the tests.

One server per state folder, Debian's ``postgresql`` binaries (``make postgresql`` installs them)::

    <state>/data/           the database cluster, made by ``initdb`` once and kept across stop/start
    <state>/password        the superuser ``hbrep``'s password (mode 0600); connections need it (scram-sha-256)
    <state>/port            the port it listens on, kept so that a restarted server keeps its address
    <state>/postgres.pid    the postmaster's pid (and start time) while it runs
    <state>/postgres.log    its output

It listens on 127.0.0.1 only (no Unix socket). PostgreSQL refuses to run as root: run by root, the
server runs as ``nobody`` inside a user namespace (``unshare --user --map-user``) whose ``nobody`` is
the outer root, so it owns the files root made under any state folder and gains no privilege.
``start`` returns the server's URL once it accepts connections; ``ensure_database`` creates a database
(one per stack sharing the server) and returns its SQLAlchemy URL. ``stop`` is PostgreSQL's fast
shutdown (SIGINT), then SIGKILL; ``kill`` is the SIGKILL of failure tests.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port, port_in_use
from replication.processes import dies_with_parent, kill_recorded, read_pid_file, stop_recorded, write_pid_file

USER = "hbrep"
DEBIAN_BIN = Path("/usr/lib/postgresql")
# A database name as CREATE DATABASE gets it here, unquoted: lower-case letters, digits and underscores.
_DATABASE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# Server settings: loopback TCP only, a small footprint; commits stay durable (a SIGKILLed server loses
# nothing it acknowledged, which the failure tests rely on).
_SETTINGS = {
    "listen_addresses": LOOPBACK,
    "unix_socket_directories": "",
    "max_connections": "200",
    "shared_buffers": "32MB",
    "log_min_messages": "warning",
    # a lock wait longer than deadlock_timeout (1 s) is logged with who holds the lock: Airflow's API server
    # was seen to answer one PATCH .../run after 75 s on a machine at load 30
    "log_lock_waits": "on",
    "log_timezone": "UTC",
}


class PostgresError(HbrepError):
    """The PostgreSQL server could not be found, initialised, started or reached."""


def postgres_bin_dir() -> Path:
    """The folder of ``initdb`` and ``postgres``: ``$HBREP_POSTGRES_BIN``, else the newest Debian
    ``/usr/lib/postgresql/<version>/bin``; PostgresError saying how to install it when there is none."""
    configured = os.environ.get("HBREP_POSTGRES_BIN")
    if configured:
        found = [Path(configured)] if (Path(configured) / "initdb").exists() else []
    else:
        found = sorted(DEBIAN_BIN.glob("*/bin/initdb"), key=lambda p: _version(p.parent.parent.name))
        found = [p.parent for p in found[-1:]]
    if not found:
        where = f"HBREP_POSTGRES_BIN={configured}" if configured else f"{DEBIAN_BIN}/<version>/bin"
        raise PostgresError(f"PostgreSQL's initdb not found in {where}; run `make postgresql` "
                            "(apt-get install postgresql)")  # fmt: skip
    return found[0]


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def unprivileged(command: list[str]) -> list[str]:
    """``command`` as PostgreSQL accepts it: unchanged for a user other than root; for root, in a user
    namespace where it runs as ``nobody`` (the outer root, so it can read and write root's files)."""
    if os.geteuid() != 0:
        return command
    unshare = shutil.which("unshare")
    if unshare is None:
        raise PostgresError("PostgreSQL cannot run as root and `unshare` (util-linux) was not found")
    return [unshare, "--user", "--map-user=65534", "--map-group=65534", *command]


class PostgresServer:
    """A PostgreSQL server bound to 127.0.0.1, owned through a state folder (data, password, pid, log)."""

    def __init__(self, state_dir: str | os.PathLike[str], port: int | None = None):
        """``port``: where to listen; None keeps the port of the last start while it is free (else a free one)."""
        self.state_dir = Path(state_dir).resolve()
        self._port = port
        self._port_given = port is not None

    # -- files ----------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return self.state_dir / "data"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "postgres.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "postgres.log"

    @property
    def port(self) -> int:
        """The port the server listens on (chosen and recorded at the first start when not given)."""
        if self._port is None:
            recorded = self.state_dir / "port"
            self._port = int(recorded.read_text()) if recorded.exists() else free_port()
        return self._port

    def password(self) -> str:
        """The ``hbrep`` superuser's password (made by :meth:`initdb`)."""
        return (self.state_dir / "password").read_text().strip()

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL (psycopg2 driver) of ``database`` on this server, password included."""
        return f"postgresql+psycopg2://{USER}:{self.password()}@{LOOPBACK}:{self.port}/{database}"

    # -- lifecycle ------------------------------------------------------------------------------
    def initdb(self) -> bool:
        """Make the database cluster in ``data/`` unless it exists; True when it was made now."""
        if (self.data_dir / "PG_VERSION").exists():
            return False
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)  # an initdb that did not finish
        password = self.state_dir / "password"
        if not password.exists():
            password.touch(mode=0o600)
            password.write_text(secrets.token_urlsafe(24) + "\n")
        command = [str(postgres_bin_dir() / "initdb"), "-D", str(self.data_dir), "-U", USER, "-E", "UTF8",
                   "--locale=C", "--auth=scram-sha-256", f"--pwfile={password}"]  # fmt: skip
        done = subprocess.run(unprivileged(command), capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            raise PostgresError(f"initdb of {self.data_dir} failed: {last[0]}")
        return True

    def read_pid(self) -> int | None:
        """The postmaster's pid while that very process runs, else None."""
        return read_pid_file(self.pid_file)

    def running(self) -> bool:
        """True while the recorded postmaster is alive."""
        return self.read_pid() is not None

    def start(self, timeout: float = 60.0) -> str:
        """Initialise once, start the server and wait until it accepts connections; returns :meth:`url`.

        A server of this state folder that already runs is kept. PostgresError (one line, then the log
        tail) when the port is taken, or the server exits or is not ready within ``timeout``.
        """
        self.initdb()
        if self.running():
            return self.url()
        if port_in_use(self.port) and not self._port_given:
            self._port = free_port()  # the last start's port was taken meanwhile: the URL changes
        if port_in_use(self.port):
            raise PostgresError(f"port {self.port} on {LOOPBACK} is already in use (PostgreSQL of {self.state_dir})")
        (self.state_dir / "port").write_text(f"{self.port}\n")
        settings = {**_SETTINGS, "port": str(self.port)}
        options = [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
        command = unprivileged([str(postgres_bin_dir() / "postgres"), "-D", str(self.data_dir), *options])
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       cwd=self.state_dir, start_new_session=True,
                                       preexec_fn=dies_with_parent())  # fmt: skip
        write_pid_file(self.pid_file, process.pid)
        deadline = time.monotonic() + timeout
        while not self._accepts():
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise PostgresError(f"postgres exited with code {process.returncode} during start-up"
                                    f"{self._log_tail_suffix()}")  # fmt: skip
            if time.monotonic() > deadline:
                self.stop()
                raise PostgresError(f"postgres was not ready within {timeout:.0f}s{self._log_tail_suffix()}")
            time.sleep(0.1)
        return self.url()

    def connect(self, database: str = "postgres", timeout: int = 10) -> Any:
        """A new psycopg2 connection to ``database`` as ``hbrep`` (the caller closes it)."""
        import psycopg2

        return psycopg2.connect(host=LOOPBACK, port=self.port, user=USER, password=self.password(),
                                dbname=database, connect_timeout=timeout)  # fmt: skip

    def _accepts(self) -> bool:
        import psycopg2

        try:
            self.connect(timeout=2).close()
        except psycopg2.OperationalError:
            return False
        return True

    def ensure_database(self, name: str) -> str:
        """Create database ``name`` (lower-case letters, digits, ``_``) unless it exists; returns its URL."""
        if not _DATABASE_NAME.fullmatch(name):
            raise PostgresError(f"database name {name!r}: use lower-case letters, digits and _ (at most 63)")
        connection = self.connect()
        try:
            connection.autocommit = True  # CREATE DATABASE runs outside a transaction
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cursor.fetchone() is None:
                    cursor.execute(f"CREATE DATABASE {name}")
        finally:
            connection.close()
        return self.url(name)

    def stop(self, timeout: float = 30.0) -> bool:
        """Fast shutdown (SIGINT: sessions ended, data flushed), SIGKILL after ``timeout``; True if it ran."""
        return stop_recorded(self.pid_file, signal.SIGINT, timeout)

    def kill(self) -> None:
        """SIGKILL the postmaster and its backends at once (failure tests); the data stays."""
        kill_recorded(self.pid_file)

    def _log_tail_suffix(self, lines: int = 20) -> str:
        try:
            tail = "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""
        return f"; log tail ({self.log_file}):\n{tail}" if tail else ""

    def __enter__(self) -> PostgresServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
