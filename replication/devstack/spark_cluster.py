"""A Spark standalone cluster on 127.0.0.1: Spark's own Master and Workers, from the jars pyspark ships.

Each daemon is started as ``bin/spark-class org.apache.spark.deploy.master.Master`` (or ``...worker.Worker``)
starts it: the java command is built by Spark's launcher (``org.apache.spark.launcher.Main``), then run as
a :class:`JvmProcess` owned through a state folder::

    <state>/ports.json              the master's RPC and web UI ports (kept for later starts)
    <state>/master/master.pid|log   the Master
    <state>/worker-N/worker.pid|log the N-th Worker; its ``work/`` (executors' dirs) and ``local/``
                                    (SPARK_LOCAL_DIRS) are its own, as on a host of its own

Every daemon binds 127.0.0.1 (``--host``, ``SPARK_LOCAL_IP`` for the web UIs and the executors it
launches). A Worker's executors are its children, in its process group: :meth:`SparkCluster.kill_worker`
SIGKILLs a Worker with its executors, as when a host dies. Clients use :attr:`SparkCluster.master_url`
(``spark://127.0.0.1:<port>``): the Spark Connect server (``--master``) and ``spark-submit`` alike.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from replication.devstack.jvm import JvmProcess, JvmProcessError, port_accepts
from replication.devstack.spark_connect import LAUNCHER_CLASS, SparkConnectError, scala_version, spark_home
from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class SparkClusterError(HbrepError):
    """The Spark standalone cluster could not be started, or a daemon of it is not where expected."""


def spark_class_command(main_class: str, args: list[str]) -> list[str]:
    """The java command ``bin/spark-class MAIN ARGS`` would exec (built by Spark's own launcher)."""
    home = spark_home()
    jars = home / "jars"
    java = shutil.which("java")
    if java is None:
        raise SparkClusterError("java not found on PATH (Spark's Master and Workers need Java 17)")
    env = {"SPARK_HOME": str(home), "SPARK_SCALA_VERSION": scala_version(jars), "PATH": str(Path(java).parent)}
    done = subprocess.run([java, "-Xmx128m", "-cp", f"{jars}/*", LAUNCHER_CLASS, main_class, *args],
                          capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        raise SparkClusterError(f"Spark's launcher failed for {main_class} (exit {done.returncode}): "
                                f"{' / '.join(tail)}")  # fmt: skip
    command = [part for part in done.stdout.decode("utf-8").split("\0") if part.strip()]
    if main_class not in command or "-cp" not in command:
        raise SparkClusterError(f"Spark's launcher printed an unexpected command: {command[:4]}")
    return command


def _daemon(name: str, state: Path, main_class: str, args: list[str], heap_mb: int, env: dict[str, str]) -> JvmProcess:
    command = spark_class_command(main_class, args)
    classpath = command[command.index("-cp") + 1]
    main_at = command.index(main_class)
    options = [opt for opt in command[command.index("-cp") + 2 : main_at] if not opt.startswith("-Xm")]
    return JvmProcess(name, state, main_class, classpath, args=command[main_at + 1 :], jvm_options=options,
                      heap_mb=heap_mb, env={"SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": LOOPBACK,
                      "SPARK_SCALA_VERSION": scala_version(spark_home() / "jars"), **env})  # fmt: skip


class SparkCluster:
    """A Master and ``workers`` Workers (``cores`` cores and ``memory_mb`` MB each) from one state folder."""

    def __init__(self, state_dir: str | Path, workers: int = 2, *, cores: int = 1, memory_mb: int = 1024):
        self.state_dir = Path(state_dir).resolve()
        self.workers = workers
        self.cores = cores
        self.memory_mb = memory_mb

    # -- ports and addresses ---------------------------------------------------------------------
    @property
    def ports(self) -> dict[str, int]:
        """The master's ``rpc`` and ``ui`` ports: chosen free on first use, then kept in ``ports.json``."""
        path = self.state_dir / "ports.json"
        if path.exists():
            return {k: int(v) for k, v in json.loads(path.read_text()).items()}
        self.state_dir.mkdir(parents=True, exist_ok=True)
        ports = {"rpc": free_port(), "ui": free_port()}
        path.write_text(json.dumps(ports))
        return ports

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:<rpc port>``: what ``--master`` takes."""
        return f"spark://{LOOPBACK}:{self.ports['rpc']}"

    def worker_dir(self, index: int) -> Path:
        """The state folder of the ``index``-th Worker (1-based)."""
        return self.state_dir / f"worker-{index}"

    # -- daemons ---------------------------------------------------------------------------------
    def master(self) -> JvmProcess:
        """The Master's JvmProcess (Spark's launcher is called: use :meth:`_pidfile_only` to signal)."""
        ports = self.ports
        args = ["--host", LOOPBACK, "--port", str(ports["rpc"]), "--webui-port", str(ports["ui"])]
        return _daemon("master", self.state_dir / "master", MASTER_CLASS, args, 512, {})

    def worker(self, index: int) -> JvmProcess:
        """The ``index``-th Worker's JvmProcess: its own work dir, local dirs and web UI port."""
        folder = self.worker_dir(index)
        args = ["--host", LOOPBACK, "--webui-port", str(free_port()), "--cores", str(self.cores),
                "--memory", f"{self.memory_mb}m", "--work-dir", str(folder / "work"), self.master_url]  # fmt: skip
        env = {"SPARK_LOCAL_DIRS": str(folder / "local"), "SPARK_WORKER_DIR": str(folder / "work")}
        return _daemon("worker", folder, WORKER_CLASS, args, 512, env)

    def _pidfile_only(self, name: str, folder: Path) -> JvmProcess:
        return JvmProcess(name, folder, "", "")

    def master_state(self) -> dict[str, Any]:
        """The Master's ``/json`` document (workers, their state, applications); {} when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://{LOOPBACK}:{self.ports['ui']}/json", timeout=3) as answer:
                return dict(json.loads(answer.read()))
        except (OSError, ValueError):
            return {}

    def alive_workers(self) -> int:
        """How many Workers the Master lists as ALIVE."""
        return sum(1 for w in self.master_state().get("workers", []) if w.get("state") == "ALIVE")

    def start(self, timeout: float = 120.0) -> None:
        """Start the Master, then every Worker; return once the Master lists them all ALIVE.

        SparkClusterError (one line and the log tail) when a daemon exits or is not ready in time;
        what was started is stopped then.
        """
        try:
            self.master().start(lambda: port_accepts(self.ports["rpc"]) and bool(self.master_state()), timeout)
            for index in range(1, self.workers + 1):  # together: each registers with the Master on its own
                self.worker(index).spawn()
            self.wait_alive_workers(self.workers, timeout)
        except (JvmProcessError, SparkConnectError, SparkClusterError) as exc:
            self.stop()
            raise SparkClusterError(str(exc)) from None

    def start_worker(self, index: int, timeout: float = 120.0) -> int:
        """Start the ``index``-th Worker (again, after a kill); its pid once the Master lists it ALIVE."""
        before = self.alive_workers()
        return self.worker(index).start(lambda: self.alive_workers() > before, timeout)

    def worker_pid(self, index: int) -> int | None:
        """The ``index``-th Worker's pid while it runs."""
        return self._pidfile_only("worker", self.worker_dir(index)).read_pid()

    def kill_worker(self, index: int) -> None:
        """SIGKILL the ``index``-th Worker with its executors (its process group): a host lost."""
        self._pidfile_only("worker", self.worker_dir(index)).kill()

    def wait_alive_workers(self, count: int, timeout: float = 120.0) -> None:
        """Wait until the Master lists exactly ``count`` ALIVE Workers; SparkClusterError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while self.alive_workers() != count:
            if time.monotonic() > deadline:
                raise SparkClusterError(f"the Spark master lists {self.alive_workers()} live workers, not {count}")
            time.sleep(0.5)

    def running(self) -> bool:
        """True while the Master runs."""
        return self._pidfile_only("master", self.state_dir / "master").running()

    def stop(self) -> None:
        """Stop every Worker (and its executors), then the Master; nothing is left behind."""
        for folder in sorted(self.state_dir.glob("worker-*")):
            self._pidfile_only("worker", folder).stop()
        self._pidfile_only("master", self.state_dir / "master").stop()
