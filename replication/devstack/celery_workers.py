"""The distributed stack's Celery workers: ``airflow celery worker`` processes, each as on a host of its own.

Worker ``N`` of a state folder lives in ``<state>/worker-N/``::

    home/        its HOME                    tmp/   its TMPDIR (TMP, TEMP)
    work/        its working directory (hbrep's ``.hbrep`` state dir of the tasks it runs)
    airflow/     its AIRFLOW_HOME (task logs, its generated airflow.cfg)
    worker.log   the worker's output         worker.pid  its pid (the leader of its own session)

The workers share only what separate hosts share: the metadata database, the broker, ZooKeeper, HDFS
and the Spark cluster (all named in the environment given). Each reports its own host name for the task
instances it runs (``[core] hostname_callable`` = :func:`worker_hostname`, reading ``HBREP_WORKER_HOSTNAME``),
so the REST API shows which worker ran what, as it would show separate hosts. The workers serve no
logs on a port (``--skip-serve-logs``: Airflow's log server binds every interface); a task's log stays
in its worker's ``airflow/logs``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from replication.devstack.airflow_stack import session_pids
from replication.errors import HbrepError
from replication.processes import dies_with_parent, pid_alive, read_pid_file, reap, signal_group, write_pid_file

HOSTNAME_ENV = "HBREP_WORKER_HOSTNAME"
HOSTNAME_CALLABLE = "replication.devstack.celery_workers.worker_hostname"
CELERY_EXECUTOR = "CeleryExecutor"


class CeleryWorkerError(HbrepError):
    """A Celery worker could not be started, or did not come up."""


def worker_hostname() -> str:
    """The host name a task instance records: ``HBREP_WORKER_HOSTNAME`` when set, else the FQDN."""
    import socket

    return os.environ.get(HOSTNAME_ENV) or socket.getfqdn()


def celery_environment(broker_url: str) -> dict[str, str]:
    """What every Airflow process of the distributed stack adds: the CeleryExecutor on ``broker_url``
    (results in the metadata database, Airflow's default), and the host-name callable above."""
    return {
        "AIRFLOW__CORE__EXECUTOR": CELERY_EXECUTOR,
        "AIRFLOW__CELERY__BROKER_URL": broker_url,
        "AIRFLOW__CORE__HOSTNAME_CALLABLE": HOSTNAME_CALLABLE,
        # a task a killed worker had taken is given to another worker after this long (Redis transport)
        "AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT": "60",
    }


class CeleryWorker:
    """Worker ``index`` of ``state_dir`` (see module doc), named ``dist-worker-<index>``."""

    def __init__(self, state_dir: str | Path, index: int, *, concurrency: int = 2):
        self.index = index
        self.folder = Path(state_dir).resolve() / f"worker-{index}"
        self.concurrency = concurrency

    @property
    def name(self) -> str:
        """The worker's host name: ``dist-worker-<index>`` (Celery's node name is ``celery@<name>``)."""
        return f"dist-worker-{self.index}"

    @property
    def pid_file(self) -> Path:
        return self.folder / "worker.pid"

    @property
    def log_file(self) -> Path:
        return self.folder / "worker.log"

    def environment(self, shared: Mapping[str, str]) -> dict[str, str]:
        """``shared`` (the stack's Airflow environment) with this worker's own HOME, temp dir, Airflow
        home and host name."""
        dirs = {name: self.folder / name for name in ("home", "tmp", "work", "airflow")}
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        tmp = str(dirs["tmp"])
        return {
            **shared,
            "HOME": str(dirs["home"]),
            "TMPDIR": tmp,
            "TMP": tmp,
            "TEMP": tmp,
            "AIRFLOW_HOME": str(dirs["airflow"]),
            HOSTNAME_ENV: self.name,
        }

    def read_pid(self) -> int | None:
        """The worker's pid while it runs, else None."""
        return read_pid_file(self.pid_file)

    def start(self, shared: Mapping[str, str]) -> int:
        """Start ``airflow celery worker`` in its own session; returns its pid at once (it registers with
        the broker on its own). CeleryWorkerError when one already runs from this folder."""
        if self.read_pid() is not None:
            raise CeleryWorkerError(f"Celery worker {self.name} already runs (pid {self.read_pid()})")
        env = self.environment(shared)
        airflow = str(Path(sys.executable).parent / "airflow")
        command = [airflow, "celery", "worker", "--celery-hostname", f"celery@{self.name}",
                   "--concurrency", str(self.concurrency), "--skip-serve-logs", "--without-mingle"]  # fmt: skip
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(command, env=env, cwd=self.folder / "work", stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       preexec_fn=dies_with_parent())  # fmt: skip
        write_pid_file(self.pid_file, process.pid)
        return process.pid

    def wait_ready(self, timeout: float = 180.0) -> None:
        """Return once the worker's log says it is ready (``celery@<name> ready``); CeleryWorkerError
        with the log tail when it exits or is not ready within ``timeout``."""
        deadline = time.monotonic() + timeout
        marker = f"celery@{self.name} ready"
        while True:
            text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
            if marker in text:
                return
            if self.read_pid() is None or time.monotonic() > deadline:
                tail = "\n".join(text.splitlines()[-20:])
                raise CeleryWorkerError(f"Celery worker {self.name} did not come up; {self.log_file}:\n{tail}")
            time.sleep(0.5)

    def kill(self) -> None:
        """SIGKILL the worker and every process of its session at once (its task supervisors and tasks,
        each in a process group of its own), as when its host dies."""
        pid = self.read_pid()
        if pid is not None:
            pids = [pid, *session_pids(pid)]
            for one in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(one, signal.SIGKILL)
            for one in pids:
                while pid_alive(one):
                    reap(one)
                    time.sleep(0.02)
        self.pid_file.unlink(missing_ok=True)

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM (Celery's warm shutdown: running tasks finish), then SIGKILL of whatever of its session
        is left after ``timeout``; True if it ran."""
        pid = self.read_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            reap(pid)
            time.sleep(0.1)
        left = session_pids(pid)
        self.kill()
        for one in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(one, signal.SIGKILL)
        return True
