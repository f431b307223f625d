"""The dev stack's ZooKeeper: a standalone server (or a loopback ensemble) from the jars pyspark ships.

One server (or one member of a loopback ensemble) per state folder, run as a
:class:`~replication.devstack.jvm.JvmProcess` named ``zookeeper``::

    <data>/zoo.cfg          the server's configuration (bound to 127.0.0.1)
    <data>/data/            ZooKeeper's dataDir (snapshots, txn logs, myid)
    <data>/zookeeper.log    stdout + stderr of the JVM
    <data>/zookeeper.pid    the JVM's pid while it runs

``start`` returns only once the server answers the ``srvr`` four-letter word with a ``Mode:`` line,
and fails with one clear line (plus the log tail) otherwise. ``stop`` leaves no process behind.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from replication.devstack.jvm import DEV_SERVER_JIT_OPTIONS, JvmProcess, JvmProcessError
from replication.devstack.kdc import jaas_keytab_login
from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port, port_in_use

ZK_MAIN_STANDALONE = "org.apache.zookeeper.server.ZooKeeperServerMain"
ZK_MAIN_QUORUM = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

T = TypeVar("T")


class ZooKeeperServerError(HbrepError):
    """The ZooKeeper server could not be started, stopped or reached."""


def zookeeper_classpath() -> str:
    """The ``-cp`` value for ZooKeeper: every jar pyspark ships (stack-notes §2: prefer jars/*)."""
    spec = importlib.util.find_spec("pyspark")  # found, not imported: pyspark's import is slow
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - the package depends on pyspark
        raise ZooKeeperServerError("pyspark is not installed, so its ZooKeeper jars cannot be found")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
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


def _as_zookeeper_error(action: Callable[[], T], what: str) -> T:
    """Run ``action``; a JvmProcessError becomes a ZooKeeperServerError prefixed with ``what``."""
    try:
        return action()
    except JvmProcessError as exc:
        raise ZooKeeperServerError(f"{what}: {exc}") from None


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


@dataclass(frozen=True)
class ZooKeeperSasl:
    """Kerberos (SASL GSSAPI) for every client session, as a secure ZooKeeper is set up.

    ``principal`` (``zookeeper/127.0.0.1@REALM``) and its ``keytab`` are the server's identity (the JAAS
    ``Server`` section); ``krb5_conf`` the realm's krb5.conf. Clients that do not authenticate with SASL
    get no session (``sessionRequireClientSASLAuth``); ACL ids are short names (``hbrep``, not
    ``hbrep/host@REALM``), as HBase's documentation sets ZooKeeper up.
    """

    principal: str
    keytab: Path
    krb5_conf: Path

    def config_lines(self) -> list[str]:
        """The zoo.cfg lines (ZooKeeper passes unknown keys on as ``zookeeper.*`` system properties)."""
        return [
            "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
            "sessionRequireClientSASLAuth=true",
            "kerberos.removeHostFromPrincipal=true",
            "kerberos.removeRealmFromPrincipal=true",
        ]

    def jaas(self) -> str:
        """The JAAS file of the server: its Kerberos login from the keytab."""
        return jaas_keytab_login("Server", self.keytab, self.principal)

    def jvm_options(self, jaas_file: Path) -> list[str]:
        """The JVM's options: the JAAS file and the realm's krb5.conf (never /etc/krb5.conf)."""
        return [f"-Djava.security.auth.login.config={jaas_file}", f"-Djava.security.krb5.conf={self.krb5_conf}"]


@dataclass
class ServerStatus:
    """What ``status`` reports: whether the process runs and what ``srvr`` said."""

    running: bool
    pid: int | None
    port: int
    mode: str | None
    detail: str

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` form of ``hbrep zk status``."""
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
        sasl: ZooKeeperSasl | None = None,
    ):
        """``tls`` adds a secure client port (``tls.secure_port``) next to the plain ``port``, which the
        start-up check (``srvr``) uses; ``sasl`` demands Kerberos of every client session."""
        self.tls = tls
        self.sasl = sasl
        self.data_dir = Path(data_dir).resolve()
        self.port = port
        self.ensemble = tuple(ensemble)
        self.server_id = server_id
        self.tick_time_ms = tick_time_ms
        # the classpath is looked up when the JVM is launched (spawn), so stop and status need no jars
        self.jvm = JvmProcess(
            "zookeeper",
            self.data_dir,
            ZK_MAIN_QUORUM if self.ensemble else ZK_MAIN_STANDALONE,
            classpath="",
            args=[str(self.config_file)],
            jvm_options=[
                *DEV_SERVER_JIT_OPTIONS,
                "-Dzookeeper.admin.enableServer=false",
                *(sasl.jvm_options(self.jaas_file) if sasl is not None else []),
            ],
            heap_mb=heap_mb,
        )

    # -- files ----------------------------------------------------------------------------------
    @property
    def config_file(self) -> Path:
        return self.data_dir / "zoo.cfg"

    @property
    def jaas_file(self) -> Path:
        return self.data_dir / "jaas.conf"

    @property
    def pid_file(self) -> Path:
        return self.jvm.pid_file

    @property
    def log_file(self) -> Path:
        return self.jvm.log_file

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
        if self.sasl is not None:
            lines += self.sasl.config_lines()
            self.jaas_file.write_text(self.sasl.jaas())
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
        return self.jvm.read_pid()

    def start(self, timeout: float = 60.0) -> int:
        """Start the JVM and wait until it serves; return its pid.

        Raises ZooKeeperServerError (one line, plus the log tail where there is one) if Java is
        missing, a server already runs from this folder, the port is taken, or it does not serve
        within ``timeout`` seconds (it is stopped then).
        """
        _as_zookeeper_error(self.jvm.java, "ZooKeeper")
        if self.jvm.running():
            raise ZooKeeperServerError(f"a ZooKeeper server already runs from {self.data_dir} (pid {self.read_pid()})")
        if port_in_use(self.port):
            raise ZooKeeperServerError(f"port {self.port} on {LOOPBACK} is already in use")
        self._prepare()
        return _as_zookeeper_error(lambda: self.jvm.start(self.serving, timeout), f"ZooKeeper on {self.hosts}")

    def spawn(self) -> subprocess.Popen:
        """Write the config and launch the JVM in its own session (pid file written); do not wait."""
        self._prepare()
        return _as_zookeeper_error(self.jvm.spawn, f"ZooKeeper on {self.hosts}")

    def _prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.write_config()
        self.jvm.classpath = zookeeper_classpath()

    def serving(self) -> bool:
        """True when the server answers ``srvr`` with a ``Mode:`` line (it serves, in a quorum if any)."""
        try:
            reply = four_letter_word(LOOPBACK, self.port, "srvr", timeout=1.0)
        except OSError:
            return False
        return "Mode:" in reply

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``); True if a process was running.

        Waits until the process is gone, and removes the pid file.
        """
        return self.jvm.stop(timeout)

    def kill(self) -> None:
        """SIGKILL the server at once (for failure tests); the pid file is removed."""
        self.jvm.kill()

    def status(self) -> ServerStatus:
        """Whether the recorded process runs, and the ``Mode:`` line of its ``srvr`` reply."""
        pid = self.read_pid()
        if pid is None or not self.jvm.running():
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
        return self.jvm.log_tail(lines)


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
        """Start every member; returns once each serves (a quorum has formed). On failure every member
        is stopped again."""
        try:
            for server in self.servers:
                server.spawn()
        except ZooKeeperServerError:
            self.stop()
            raise
        deadline = time.monotonic() + timeout
        for server in self.servers:
            while not server.serving():
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
        if server.jvm.running():
            raise ZooKeeperServerError(f"ensemble member {server.hosts} already runs (pid {server.read_pid()})")
        server.spawn()
        deadline = time.monotonic() + timeout
        while not server.serving():
            if time.monotonic() > deadline:
                raise ZooKeeperServerError(f"ensemble member {server.hosts} did not rejoin within {timeout:.0f}s")
            time.sleep(0.2)
