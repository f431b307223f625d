"""A standalone ZooKeeper server started with ``java`` from the jars pyspark already ships.

One server (or one member of a loopback ensemble) per state folder::

    <data>/zoo.cfg          the server's configuration (bound to 127.0.0.1)
    <data>/data/            ZooKeeper's dataDir (snapshots, txn logs, myid)
    <data>/zookeeper.log    stdout + stderr of the JVM
    <data>/zookeeper.pid    the JVM's pid while it runs

``start`` returns only once the server answers the ``srvr`` four-letter word with a ``Mode:`` line,
and fails with one clear line (plus the log tail) otherwise. ``stop`` leaves no process behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port, port_in_use
from replication.processes import pid_alive, reap, signal_group

ZK_MAIN_STANDALONE = "org.apache.zookeeper.server.ZooKeeperServerMain"
ZK_MAIN_QUORUM = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


class ZooKeeperServerError(HbrepError):
    """The ZooKeeper server could not be started, stopped or reached."""


def zookeeper_classpath() -> str:
    """The ``-cp`` value for ZooKeeper: every jar pyspark ships (stack-notes §2: prefer jars/*)."""
    try:
        import pyspark
    except ImportError:  # pragma: no cover - the package depends on pyspark
        raise ZooKeeperServerError("pyspark is not installed, so its ZooKeeper jars cannot be found") from None
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("zookeeper-[0-9]*.jar")):
        raise ZooKeeperServerError(f"no zookeeper jar in {jars}")
    return f"{jars}/*"


def four_letter_word(host: str, port: int, word: str = "srvr", timeout: float = 2.0) -> str:
    """Send a ZooKeeper four-letter word and return the reply ('' if the server closed silently)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(word.encode("ascii"))
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


@dataclass(frozen=True)
class EnsembleMember:
    """One server of a loopback ensemble: its id and its client, quorum and election ports."""

    server_id: int
    client_port: int
    quorum_port: int
    election_port: int


@dataclass(frozen=True)
class ZooKeeperTls:
    """ZooKeeper's secure client port (Netty connection factory) with PEM key and trust stores.

    ``keystore``: the server's key followed by its certificate chain; ``truststore``: the CA(s) that
    clients' certificates must chain to; ``client_auth``: ``need`` (mutual TLS), ``want`` or ``none``.
    """

    secure_port: int
    keystore: Path
    truststore: Path
    client_auth: str = "need"

    def config_lines(self) -> list[str]:
        """The zoo.cfg lines (ZooKeeper passes the ``ssl.*`` keys on as ``zookeeper.ssl.*`` properties)."""
        return [
            f"secureClientPort={self.secure_port}",
            f"secureClientPortAddress={LOOPBACK}",
            "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
            f"ssl.keyStore.location={self.keystore}",
            "ssl.keyStore.type=PEM",
            f"ssl.trustStore.location={self.truststore}",
            "ssl.trustStore.type=PEM",
            f"ssl.clientAuth={self.client_auth}",
        ]


@dataclass
class ServerStatus:
    """What ``status`` reports: whether the process runs and what ``srvr`` said."""

    running: bool
    pid: int | None
    port: int
    mode: str | None
    detail: str

    def as_dict(self) -> dict[str, object]:
        return {"running": self.running, "pid": self.pid, "port": self.port, "mode": self.mode, "detail": self.detail}


class ZooKeeperServer:
    """A ZooKeeper JVM bound to 127.0.0.1, owned through a state folder (config, pid, log)."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        port: int = 2181,
        *,
        ensemble: Sequence[EnsembleMember] = (),
        server_id: int | None = None,
        heap_mb: int = 256,
        tick_time_ms: int = 2000,
        tls: ZooKeeperTls | None = None,
    ):
        """``tls`` adds a secure client port (``tls.secure_port``) next to the plain ``port``, which the
        start-up check (``srvr``) uses."""
        self.tls = tls
        self.data_dir = Path(data_dir).resolve()
        self.port = port
        self.ensemble = tuple(ensemble)
        self.server_id = server_id
        self.heap_mb = heap_mb
        self.tick_time_ms = tick_time_ms

    # -- files ----------------------------------------------------------------------------------
    @property
    def config_file(self) -> Path:
        return self.data_dir / "zoo.cfg"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "zookeeper.pid"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "zookeeper.log"

    @property
    def hosts(self) -> str:
        """The kazoo connection string of this server."""
        return f"{LOOPBACK}:{self.port}"

    def write_config(self) -> None:
        """Write zoo.cfg (and myid for an ensemble member) into the state folder."""
        (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        lines = [
            f"tickTime={self.tick_time_ms}",
            f"dataDir={self.data_dir / 'data'}",
            f"clientPort={self.port}",
            f"clientPortAddress={LOOPBACK}",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,srvr,stat,envi,mntr,conf,cons",
            "maxClientCnxns=200",
        ]
        if self.tls is not None:
            lines += self.tls.config_lines()
        if self.ensemble:
            if self.server_id is None:
                raise ZooKeeperServerError("an ensemble member needs a server id")
            lines += ["initLimit=10", "syncLimit=5", "quorumListenOnAllIPs=false"]
            for member in self.ensemble:
                lines.append(f"server.{member.server_id}={LOOPBACK}:{member.quorum_port}:{member.election_port}")
            (self.data_dir / "data" / "myid").write_text(f"{self.server_id}\n")
        self.config_file.write_text("\n".join(lines) + "\n")

    # -- lifecycle ------------------------------------------------------------------------------
    def read_pid(self) -> int | None:
        """The pid recorded in the pid file, if the file exists and holds a number."""
        try:
            return int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def start(self, timeout: float = 60.0) -> int:
        """Start the JVM and wait until it serves; return its pid.

        Raises ZooKeeperServerError (one line, plus the log tail where there is one) if Java is
        missing, the port is taken, a server already runs from this folder, or it does not serve
        within ``timeout`` seconds.
        """
        java = shutil.which("java")
        if java is None:
            raise ZooKeeperServerError("java not found on PATH (ZooKeeper needs Java 17)")
        pid = self.read_pid()
        if pid is not None and pid_alive(pid):
            raise ZooKeeperServerError(f"a ZooKeeper server already runs from {self.data_dir} (pid {pid})")
        if port_in_use(self.port):
            raise ZooKeeperServerError(f"port {self.port} on {LOOPBACK} is already in use")
        process = self.spawn()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise ZooKeeperServerError(
                    f"ZooKeeper exited with code {process.returncode} during start-up{self._log_tail_suffix()}"
                )
            if self._serving():
                return process.pid
            time.sleep(0.1)
        self.stop()
        raise ZooKeeperServerError(
            f"ZooKeeper did not serve on {self.hosts} within {timeout:.0f}s{self._log_tail_suffix()}"
        )

    def spawn(self) -> subprocess.Popen:
        """Write the config and launch the JVM in its own session (pid file written); do not wait."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.write_config()
        main_class = ZK_MAIN_QUORUM if self.ensemble else ZK_MAIN_STANDALONE
        command = [
            shutil.which("java") or "java",
            f"-Xmx{self.heap_mb}m",
            "-XX:+UseSerialGC",
            "-Dzookeeper.admin.enableServer=false",
            "-cp",
            zookeeper_classpath(),
            main_class,
            str(self.config_file),
        ]
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.data_dir,
                start_new_session=True,
            )
        self.pid_file.write_text(f"{process.pid}\n")
        return process

    def _serving(self) -> bool:
        try:
            reply = four_letter_word(LOOPBACK, self.port, "srvr", timeout=1.0)
        except OSError:
            return False
        return "Mode:" in reply

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL); True if a process was running.

        Waits until the process is gone, and removes the pid file.
        """
        pid = self.read_pid()
        if pid is None or not pid_alive(pid):
            self.pid_file.unlink(missing_ok=True)
            return False
        signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            reap(pid)
            time.sleep(0.05)
        if pid_alive(pid):
            signal_group(pid, signal.SIGKILL)
            while pid_alive(pid):
                reap(pid)
                time.sleep(0.05)
        reap(pid)
        self.pid_file.unlink(missing_ok=True)
        return True

    def kill(self) -> None:
        """SIGKILL the server at once (for failure tests); the pid file is removed."""
        pid = self.read_pid()
        if pid is not None and pid_alive(pid):
            signal_group(pid, signal.SIGKILL)
            while pid_alive(pid):
                reap(pid)
                time.sleep(0.02)
        self.pid_file.unlink(missing_ok=True)

    def status(self) -> ServerStatus:
        """Whether the recorded process runs, and the ``Mode:`` line of its ``srvr`` reply."""
        pid = self.read_pid()
        running = pid is not None and pid_alive(pid)
        if not running:
            return ServerStatus(False, None, self.port, None, f"not running (state folder {self.data_dir})")
        try:
            reply = four_letter_word(LOOPBACK, self.port, "srvr", timeout=2.0)
        except OSError as exc:
            return ServerStatus(True, pid, self.port, None, f"process runs but {self.hosts} refuses: {exc}")
        mode = next((line.split(":", 1)[1].strip() for line in reply.splitlines() if line.startswith("Mode:")), None)
        version = next(
            (line.split(":", 1)[1].strip() for line in reply.splitlines() if line.startswith("Zookeeper version:")), ""
        )
        return ServerStatus(True, pid, self.port, mode, f"serving on {self.hosts} ({version.split(',')[0]})")

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the server log ('' when there is none)."""
        try:
            text = self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _log_tail_suffix(self) -> str:
        tail = self.log_tail()
        return f"; log tail ({self.log_file}):\n{tail}" if tail else ""


class LoopbackEnsemble:
    """N ZooKeeper servers on loopback forming one quorum (for ensemble connection strings)."""

    def __init__(self, base_dir: str | os.PathLike[str], size: int = 3):
        base = Path(base_dir)
        self.members = [EnsembleMember(i + 1, free_port(), free_port(), free_port()) for i in range(size)]
        self.servers = [
            ZooKeeperServer(base / f"zk{m.server_id}", m.client_port, ensemble=self.members, server_id=m.server_id)
            for m in self.members
        ]

    @property
    def quorum(self) -> str:
        """Comma-separated ``host:port`` list, as used inside a cluster key."""
        return ",".join(server.hosts for server in self.servers)

    def start(self, timeout: float = 90.0) -> None:
        """Start every member; returns once each serves (a quorum has formed)."""
        java = shutil.which("java")
        if java is None:
            raise ZooKeeperServerError("java not found on PATH (ZooKeeper needs Java 17)")
        for server in self.servers:
            server.spawn()
        deadline = time.monotonic() + timeout
        for server in self.servers:
            while not server._serving():
                if time.monotonic() > deadline:
                    self.stop()
                    raise ZooKeeperServerError(f"ensemble member {server.hosts} did not serve in time")
                time.sleep(0.2)

    def stop(self) -> None:
        """Stop every member."""
        for server in self.servers:
            server.stop()

    def restart(self, server: ZooKeeperServer, timeout: float = 60.0) -> None:
        """Start one (stopped) member again; returns once it serves, i.e. has rejoined the quorum."""
        if server not in self.servers:
            raise ZooKeeperServerError(f"{server.hosts} is not a member of this ensemble")
        pid = server.read_pid()
        if pid is not None and pid_alive(pid):
            raise ZooKeeperServerError(f"ensemble member {server.hosts} already runs (pid {pid})")
        server.spawn()
        deadline = time.monotonic() + timeout
        while not server._serving():
            if time.monotonic() > deadline:
                raise ZooKeeperServerError(f"ensemble member {server.hosts} did not rejoin within {timeout:.0f}s")
            time.sleep(0.2)
