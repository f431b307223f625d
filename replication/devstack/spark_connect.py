"""The long-lived Spark Connect server of the dev stack: Spark's own, from the jars pyspark ships.

``org.apache.spark.sql.connect.service.SparkConnectServer`` started the way Spark's
``sbin/start-connect-server.sh`` starts it (``spark-submit --class ... spark-internal``), with the
java command line built by Spark's own launcher (``org.apache.spark.launcher.Main``: classpath and the
``--add-opens`` Java 17 needs), then run as a :class:`JvmProcess` owned through a state folder::

    <state>/spark-connect.pid    the JVM's pid while it runs
    <state>/spark-connect.port   the gRPC port it serves on (kept after stop, so status can name it)
    <state>/spark-connect.log    the driver's log
    <state>/local/               spark.local.dir (shuffle files, session artifacts)

The server binds to 127.0.0.1 only, runs ``local[2]`` and starts Python workers with this interpreter,
so the worker processes can import what this environment has installed. Clients connect to
:attr:`SparkConnectServer.url` (``sc://127.0.0.1:<port>``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from replication.devstack.jvm import JvmProcess, JvmProcessError, port_accepts
from replication.errors import HbrepError
from replication.jobs.connect_port import port_file, read_port
from replication.net import LOOPBACK, port_in_use
from replication.processes import pid_alive
from replication.spark_daemon import DAEMON_CONF

CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
SPARK_SUBMIT_CLASS = "org.apache.spark.deploy.SparkSubmit"
LAUNCHER_CLASS = "org.apache.spark.launcher.Main"
DEFAULT_PORT = 15002  # Spark Connect's own default (spark.connect.grpc.binding.port)
NAME = "spark-connect"


class SparkConnectError(HbrepError):
    """The Spark Connect server could not be started, or is not where it was expected."""


def spark_home() -> Path:
    """The Spark distribution pyspark installs (its ``jars/`` and ``bin/``), used as SPARK_HOME."""
    try:
        import pyspark  # imported (slow) only to find its jars, when a server starts
    except ImportError:  # pragma: no cover - the package depends on pyspark
        raise SparkConnectError("pyspark is not installed, so Spark's jars cannot be found") from None
    return Path(pyspark.__file__).resolve().parent


def scala_version(jars: Path) -> str:
    """The Scala binary version of the jars (``2.13`` from ``spark-core_2.13-4.1.3.jar``)."""
    for jar in jars.glob("spark-core_*.jar"):
        found = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if found:
            return found.group(1)
    raise SparkConnectError(f"no spark-core jar in {jars}")


def connect_jar(jars: Path) -> Path:
    """The Spark Connect server jar pyspark ships; SparkConnectError when it is missing."""
    found = sorted(jars.glob("spark-connect_*.jar"))
    if not found:
        raise SparkConnectError(f"no spark-connect jar in {jars}: this pyspark cannot run a Spark Connect server")
    return found[0]


def launcher_command(spark_conf: dict[str, str], home: Path | None = None) -> list[str]:
    """The java command Spark's launcher builds for ``spark-submit --class SparkConnectServer``.

    The same command ``bin/spark-class`` would exec: java, classpath, the JVM options Spark needs on
    Java 17, then ``SparkSubmit --conf k=v ... --class SparkConnectServer spark-internal``.
    """
    home = home or spark_home()
    jars = home / "jars"
    connect_jar(jars)
    java = shutil.which("java")
    if java is None:
        raise SparkConnectError("java not found on PATH (the Spark Connect server needs Java 17)")
    args = [SPARK_SUBMIT_CLASS]
    for key, value in spark_conf.items():
        args += ["--conf", f"{key}={value}"]
    args += ["--class", CONNECT_SERVER_CLASS, "--name", "hbrep Spark Connect server", "spark-internal"]
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_SCALA_VERSION": scala_version(jars)}
    done = subprocess.run(
        [java, "-Xmx128m", "-cp", f"{jars}/*", LAUNCHER_CLASS, *args],
        capture_output=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        raise SparkConnectError(f"Spark's launcher failed (exit {done.returncode}): {' / '.join(tail)}")
    command = [part for part in done.stdout.decode("utf-8").split("\0") if part.strip()]
    if SPARK_SUBMIT_CLASS not in command or "-cp" not in command:
        raise SparkConnectError(f"Spark's launcher printed an unexpected command: {command[:4]}")
    return command


@dataclass
class ConnectStatus:
    """What ``status`` reports: whether the JVM runs and whether its gRPC port accepts connections."""

    running: bool
    serving: bool
    pid: int | None
    port: int | None
    url: str | None
    detail: str

    def as_dict(self) -> dict[str, object]:
        return {
            "running": self.running,
            "serving": self.serving,
            "pid": self.pid,
            "port": self.port,
            "url": self.url,
            "detail": self.detail,
        }


class SparkConnectServer:
    """A Spark Connect server on 127.0.0.1, owned through a state folder (pid, port and log files)."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        port: int | None = None,
        *,
        driver_memory_mb: int = 1024,
        master: str = "local[2]",
        python: str | None = None,
        extra_conf: dict[str, str] | None = None,
    ):
        self.state_dir = Path(state_dir).resolve()
        self._port = port
        self.driver_memory_mb = driver_memory_mb
        self.master = master
        self.python = python or sys.executable
        self.extra_conf = dict(extra_conf or {})

    # -- files ----------------------------------------------------------------------------------
    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{NAME}.pid"

    @property
    def port_file(self) -> Path:
        return port_file(self.state_dir)

    @property
    def log_file(self) -> Path:
        return self.state_dir / f"{NAME}.log"

    @property
    def port(self) -> int:
        """The port given, else the one the last start recorded, else Spark's default 15002."""
        if self._port is not None:
            return self._port
        recorded = read_port(self.state_dir)
        return recorded if recorded is not None else DEFAULT_PORT

    @property
    def url(self) -> str:
        """The client URL ``sc://127.0.0.1:<port>``."""
        return f"sc://{LOOPBACK}:{self.port}"

    def spark_conf(self) -> dict[str, str]:
        """The server's Spark settings: loopback only, local master, this Python for the workers."""
        return {
            "spark.master": self.master,
            "spark.driver.memory": f"{self.driver_memory_mb}m",
            "spark.connect.grpc.binding.address": LOOPBACK,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            "spark.ui.enabled": "false",
            "spark.local.dir": str(self.state_dir / "local"),
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.warehouse.dir": str(self.state_dir / "warehouse"),
            "spark.sql.shuffle.partitions": "4",
            "spark.sql.session.timeZone": "UTC",
            "spark.python.worker.reuse": "true",
            "spark.pyspark.python": self.python,
            "spark.pyspark.driver.python": self.python,
            # the workers run hbrep's daemon when they run this interpreter (which has hbrep installed)
            **(DAEMON_CONF if self.python == sys.executable else {}),
            **self.extra_conf,
        }

    def jvm(self) -> JvmProcess:
        """The JvmProcess of this server (the command built by Spark's launcher)."""
        command = launcher_command(self.spark_conf())
        classpath = command[command.index("-cp") + 1]
        main_at = command.index(SPARK_SUBMIT_CLASS)
        options = [opt for opt in command[command.index("-cp") + 2 : main_at] if not opt.startswith("-Xmx")]
        return JvmProcess(
            name=NAME,
            state_dir=self.state_dir,
            main_class=SPARK_SUBMIT_CLASS,
            classpath=classpath,
            args=command[main_at + 1 :],
            jvm_options=options,
            heap_mb=self.driver_memory_mb,
            env={
                "SPARK_HOME": str(spark_home()),
                "SPARK_LOCAL_IP": LOOPBACK,
                "PYSPARK_PYTHON": self.python,
                "PYSPARK_DRIVER_PYTHON": self.python,
            },
        )

    def _process(self) -> JvmProcess:
        """A JvmProcess for pid-file work only (stop, kill, running): no launcher call."""
        return JvmProcess(NAME, self.state_dir, SPARK_SUBMIT_CLASS, "")

    # -- lifecycle ------------------------------------------------------------------------------
    def read_pid(self) -> int | None:
        return self._process().read_pid()

    def running(self) -> bool:
        return self._process().running()

    def start(self, timeout: float = 180.0) -> int:
        """Start the server and return its pid once its gRPC port accepts connections.

        Raises SparkConnectError (one line, plus the log tail) when a server already runs from this
        folder, the port is taken, or the server exits or is not serving within ``timeout`` seconds.
        """
        pid = self.read_pid()
        if pid is not None and pid_alive(pid):
            raise SparkConnectError(f"a Spark Connect server already runs from {self.state_dir} (pid {pid})")
        port = self.port
        if port_in_use(port):
            raise SparkConnectError(f"port {port} on {LOOPBACK} is already in use (Spark Connect's gRPC port)")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.port_file.write_text(f"{port}\n")
        self._port = port
        try:
            return self.jvm().start(lambda: port_accepts(port), timeout=timeout)
        except JvmProcessError as exc:
            raise SparkConnectError(str(exc).replace(NAME, "the Spark Connect server", 1)) from None

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM, then SIGKILL; True if a server was running. No process is left behind."""
        return self._process().stop(timeout)

    def kill(self) -> None:
        """SIGKILL the server's whole process group (JVM and Python workers) at once: failure tests."""
        self._process().kill()

    def status(self) -> ConnectStatus:
        """Whether the recorded JVM runs and its port accepts connections."""
        pid = self.read_pid()
        port = self.port
        if pid is None or not pid_alive(pid):
            return ConnectStatus(False, False, None, port, None, f"not running (state folder {self.state_dir})")
        if not port_accepts(port):
            return ConnectStatus(True, False, pid, port, None, f"process runs but {LOOPBACK}:{port} refuses")
        return ConnectStatus(True, True, pid, port, self.url, f"serving on {self.url}")

    def log_tail(self, lines: int = 20) -> str:
        return self._process().log_tail(lines)
