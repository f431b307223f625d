"""Airflow for the embedded stack (``make demo``, ``make up``, the scheduler tests): its environment, and
the components of ``airflow standalone`` (scheduler, DAG processor, triggerer, API server) started and
stopped as one session.

Nothing here imports Airflow: it runs Airflow's command line. Airflow's home is a folder of the stack, its
metadata database one of its own on the stack's PostgreSQL server (:func:`metadata_database`; SQLite only
when asked for, ``HBREP_AIRFLOW_DB=sqlite``), the DAGs and the plugin are this repository's, the source
cluster is the ``hbrep_source`` connection (type ``zookeeper``), Spark runs on ``local[2]``, and everything
listens on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from replication.devstack.postgres import PostgresServer
from replication.processes import dies_with_parent

if TYPE_CHECKING:
    from replication.devstack.airflow_api import AirflowApi

REPO = Path(__file__).resolve().parents[2]
# Airflow's [scheduler] scheduler_idle_sleep_time for the embedded stack, in seconds (see airflow_environment)
SCHEDULER_IDLE_SLEEP_S = "0.2"
# Airflow's [workers] min_heartbeat_interval for the embedded stack, in seconds (see airflow_environment)
MIN_HEARTBEAT_INTERVAL_S = "1"
SIMPLE_AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
# The LocalExecutor, with the Spark Connect client imported before it forks its workers: a ship task's
# process inherits it instead of importing it (1.2-1.3 s of CPU) at each window's start.
PRELOADING_LOCAL_EXECUTOR = "hbrep_airflow.executors.preloading.PreloadingLocalExecutor"
# Which metadata database the stacks use: "postgres" (the default) or "sqlite" (one file in AIRFLOW_HOME).
DATABASE_ENV = "HBREP_AIRFLOW_DB"
DATABASE_KINDS = ("postgres", "sqlite")


class MetadataDatabaseError(ValueError):
    """``HBREP_AIRFLOW_DB`` names no database kind the stacks know."""


def metadata_database(state_dir: Path, home: Path, database: str = "airflow") -> tuple[str, PostgresServer | None]:
    """Airflow's metadata database for a stack: ``(SQLAlchemy URL, server)``.

    By default the PostgreSQL server of ``state_dir`` (started unless it runs; the caller stops it) and
    its database ``database`` (created unless it exists). With ``HBREP_AIRFLOW_DB=sqlite`` the file
    ``<home>/airflow.db`` and no server: SQLite serves one writer at a time, which Airflow documents as
    for development only (its backfills refuse it). MetadataDatabaseError for any other value.
    """
    kind = os.environ.get(DATABASE_ENV) or "postgres"
    if kind not in DATABASE_KINDS:
        raise MetadataDatabaseError(f"{DATABASE_ENV}={kind!r}: expected one of {', '.join(DATABASE_KINDS)}")
    if kind == "sqlite":
        home.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{home}/airflow.db", None
    server = PostgresServer(state_dir)
    server.start()
    return server.ensure_database(database), server


def airflow_environment(
    home: Path,
    source_key: str,
    *,
    database: str,
    api_port: int | None = None,
    spark_connect_port: int | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """This process's environment plus what every Airflow process of the embedded stack needs.

    ``database``: the metadata database's SQLAlchemy URL (see :func:`metadata_database`); ``api_port``
    adds the API server's address (``airflow standalone``); ``spark_connect_port`` makes
    the ship DAG run on that Spark Connect server (``hbrep.spark.mode=connect``, the
    ``hbrep_spark_connect`` connection of type ``spark_connect``); ``extra`` is applied last.
    """
    quorum, zk_port, parent = source_key.rsplit(":", 2)
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            # its own database, whatever this process's environment points at
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database,
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
            "AIRFLOW_CONN_HBREP_SOURCE": json.dumps(
                {"conn_type": "zookeeper", "host": quorum, "port": int(zk_port), "schema": parent}
            ),
            "HBREP_CLUSTER": source_key,
            "PATH": bin_dir + os.pathsep + env.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "plugins"), env.get("PYTHONPATH")) if p),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "GX_ANALYTICS_ENABLED": "false",
        }
    )
    # The scheduler sleeps this long in a loop where nothing was queued or finished (Airflow's default 1 s),
    # so each task-to-task hand-over of a short ship run waited ~0.5 s on average; measured in
    # bench/scheduler.py ("gaps between tasks"). A value already in the environment is kept.
    env.setdefault("AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME", SCHEDULER_IDLE_SLEEP_S)
    # A task's supervisor (airflow.sdk.execution_time.supervisor) may read the task process's last socket
    # EOF before the process can be reaped; it then sleeps on an empty selector until its next heartbeat
    # tick, min_heartbeat_interval (Airflow's default 5 s), before it reports the task's end. Seen in one
    # task of 35 in an idle stack here, and in both idle runs of the scheduler bench: a skipped
    # peer.snapshot logged its last line 5.0 s before its end_date, which made the submit-mode run with
    # nothing to ship take 7.5 s instead of 2. At 1 s the wait is at most
    # 1 s, for one heartbeat call per running task per second (loopback). A value already set is kept.
    env.setdefault("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", MIN_HEARTBEAT_INTERVAL_S)
    if api_port is not None:
        env.update(
            {
                "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                "AIRFLOW__API__HOST": "127.0.0.1",
                "AIRFLOW__API__PORT": str(api_port),
                "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{api_port}",
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{api_port}/execution/",
                # Airflow's default (5 s) was seen to time out the first tasks' calls while the API server
                # warmed up on a loaded 2-core machine (the tasks then failed and were retried).
                "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "30",
            }
        )
    if spark_connect_port is not None:
        env.update(
            {
                "HBREP__hbrep__spark__mode": "connect",
                "AIRFLOW_CONN_HBREP_SPARK_CONNECT": json.dumps(
                    {"conn_type": "spark_connect", "host": "127.0.0.1", "port": spark_connect_port}
                ),
            }
        )
    env.update(extra or {})
    return env


def airflow_bin() -> str:
    """The ``airflow`` executable of this Python environment."""
    return str(Path(sys.executable).parent / "airflow")


@dataclass
class AirflowStandalone:
    """A running ``airflow standalone``: its home, API port and session leader (all its processes share
    the session, so :meth:`stop` reaches the scheduler, API server, triggerer and task workers)."""

    home: Path
    port: int
    proc: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        """The API server and UI, ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def admin_password(self) -> str:
        """The ``admin`` user's password the simple auth manager generated into the home."""
        return admin_password(self.home)

    def wait_ready(self, timeout: float = 300.0) -> None:
        """Return once ``/api/v2/monitor/health`` answers and the admin password exists. RuntimeError
        (everything it started stopped, the log's last lines quoted) when not within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(httpx.HTTPError, OSError, KeyError, ValueError):
                if httpx.get(f"{self.url}/api/v2/monitor/health", timeout=5).status_code == 200:
                    self.admin_password()
                    return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-25:])
                raise RuntimeError(f"airflow standalone did not come up on port {self.port} in {timeout:.0f}s; "
                                   f"{self.log}:\n{tail}")  # fmt: skip
            time.sleep(2)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM every process of the session, SIGKILL what is left after ``timeout``."""
        stop_session(self.proc.pid, timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)


def admin_password(home: Path) -> str:
    """The ``admin`` password in ``<home>/simple_auth_manager_passwords.json.generated``."""
    return str(json.loads((home / "simple_auth_manager_passwords.json.generated").read_text())["admin"])


# What ``airflow standalone`` runs, started here one by one: standalone gives no way to pass options, and
# its scheduler and triggerer would each start Airflow's log server, which binds every interface (host "",
# not configurable in Airflow 3). With ``--skip-serve-logs`` nothing listens but the API server on
# 127.0.0.1; it reads task logs from the shared log folder of this one machine, as the local executor
# writes them. Each component runs under ``supervise``, which starts it again when it exits, as a service
# manager would (systemd's Restart= with a start limit): a scheduler that lost its database connection
# (PostgreSQL restarted: tests/devstack/test_dist_stack.py) comes back, and the ZooKeeper event triggers
# the triggerer runs re-read what they watch at start, so a death while it was down still starts a failover
# run. A component that exits 5 times in a row within 30 s of its start is broken, not unlucky: its
# supervisor gives up, ``wait -n`` returns and ``kill 0`` stops the whole session, so a broken stack is seen
# at once rather than half running. SIGHUP is the shell's parent-death signal (a test or the demo launched
# it, see launch_standalone): it stops the whole session, SIGTERM then SIGKILL; the migration runs in the
# background so that the trap runs at once, not when it ends.
# With ``AIRFLOW__CORE__SECURITY=kerberos`` in the environment, Airflow's own ticket renewer (``airflow
# kerberos``: kinit from ``[kerberos] keytab`` as ``[kerberos] principal`` into ``[kerberos] ccache`` every
# ``reinit_frequency`` seconds) runs once before them (a failed login stops the session there), then beside
# them. Every Airflow process of that configuration sets ``KRB5CCNAME`` to that cache (airflow/__main__.py),
# so hbrep's tasks and triggers with ``hbase.security.authentication=kerberos`` and no keytab of their own use
# the renewed tickets.
_COMPONENTS = """set -e
trap 'trap "" TERM HUP; kill -TERM 0; sleep 10; kill -KILL 0' HUP
supervise() {
  local quick=0 started code
  while :; do
    started=$SECONDS
    "$AIRFLOW" "$@"
    code=$?
    if (( SECONDS - started < 30 )); then quick=$((quick + 1)); else quick=0; fi
    if (( quick >= 5 )); then
      echo "airflow $1 exited ($code) 5 times within 30 s of its start; giving up" >&2
      return "$code"
    fi
    echo "airflow $1 exited ($code); restarting in $quick s" >&2
    sleep "$quick"
  done
}
"$AIRFLOW" db migrate &
wait $!
if [ "${AIRFLOW__CORE__SECURITY:-}" = kerberos ]; then
  "$AIRFLOW" kerberos --one-time &
  wait $!
fi
set +e
if [ "${AIRFLOW__CORE__SECURITY:-}" = kerberos ]; then supervise kerberos & fi
supervise scheduler --skip-serve-logs &
supervise triggerer --skip-serve-logs &
supervise dag-processor &
supervise api-server --host 127.0.0.1 --port "$AIRFLOW__API__PORT" &
wait -n
echo "an Airflow component gave up with $?; stopping the others" >&2
kill 0
"""


def launch_standalone(env: Mapping[str, str], log: Path) -> AirflowStandalone:
    """Start what ``airflow standalone`` runs (database migration, then scheduler, DAG processor,
    triggerer and API server with the local executor and the simple auth manager, none of them serving
    logs on a port of its own) in a new session under ``env`` (see :func:`airflow_environment` with
    ``api_port``), output appended to ``log``; returns at once (see :meth:`AirflowStandalone.wait_ready`).
    The session stops when this process dies, unless it runs under :func:`replication.processes.detached`
    (``make up``).
    """
    env = {
        **env,
        "AIRFLOW": airflow_bin(),
        # the distributed stack names the CeleryExecutor in ``env``; the one-host stack runs the local one
        "AIRFLOW__CORE__EXECUTOR": env.get("AIRFLOW__CORE__EXECUTOR") or PRELOADING_LOCAL_EXECUTOR,
        "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH_MANAGER,
    }
    with open(log, "ab") as out:
        proc = subprocess.Popen(["bash", "-c", _COMPONENTS], env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=dies_with_parent(signal.SIGHUP))  # fmt: skip
    return AirflowStandalone(Path(env["AIRFLOW_HOME"]), int(env["AIRFLOW__API__PORT"]), proc, log)


def start_standalone(env: Mapping[str, str], log: Path, *, timeout: float = 300.0) -> AirflowStandalone:
    """:func:`launch_standalone`, then :meth:`AirflowStandalone.wait_ready`."""
    stack = launch_standalone(env, log)
    stack.wait_ready(timeout)
    return stack


def _stat_fields(pid: int) -> list[str]:
    # /proc/<pid>/stat after the command name: state, ppid, pgrp, session, ...
    return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()


def session_pids(sid: int) -> list[int]:
    """Pids of the live processes in session ``sid`` (this process excluded)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = _stat_fields(int(entry.name))
            if int(fields[3]) == sid and fields[0] != "Z":
                pids.append(int(entry.name))
    return pids


def _session_processes(sid: int) -> dict[int, tuple[int, list[bytes]]]:
    """pid → (parent pid, argv) of each live process of session ``sid`` that could be read."""
    found: dict[int, tuple[int, list[bytes]]] = {}
    for pid in session_pids(sid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            found[pid] = (int(_stat_fields(pid)[1]), (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0"))
    return found


def _api_server_pids(sid: int) -> set[int]:
    """The processes of session ``sid`` that are Airflow's API server or descend from it (the session's
    leader, the shell whose script names every component, is not one)."""
    processes = _session_processes(sid)
    parent = {pid: ppid for pid, (ppid, _argv) in processes.items()}
    # ``airflow api-server`` (argv) or, once it has set its title, ``airflow api_server -- host:...``
    found = {
        pid
        for pid, (_ppid, argv) in processes.items()
        if pid != sid and (b"api-server" in argv or argv[0].startswith(b"airflow api_server"))
    }
    grew = True
    while grew:
        children = {pid for pid, ppid in parent.items() if ppid in found} - found
        found |= children
        grew = bool(children)
    return found


TASK_STOP_S = 15.0  # how long stop_session lets the running tasks end before it stops the rest
WORKER_GRACE_S = 3.0  # how long stop_session lets the executor's workers report their tasks' ends (see there)


EXECUTOR_WORKER_TITLE = b"airflow worker -- LocalExecutor"  # LocalExecutor's worker; "...: <idle>" when idle


def _task_pids(sid: int) -> tuple[list[int], list[int]]:
    """The processes of session ``sid`` running a task instance, and the executor workers that are busy.

    A task process titles itself ``airflow worker -- <task id>`` once its supervisor (the executor worker,
    ``airflow worker -- LocalExecutor: <task>``; ``...: <idle>`` when idle) has sent it its start. Before that,
    the task instance is already ``running`` in the database (the supervisor reported the start) while the
    process still bears its worker's title: a busy worker's children are task processes too.
    """
    processes = _session_processes(sid)
    titled_busy = {
        pid
        for pid, (_ppid, argv) in processes.items()
        if argv[0].startswith(EXECUTOR_WORKER_TITLE) and not argv[0].rstrip().endswith(b"<idle>")
    }
    busy = [pid for pid in titled_busy if processes[pid][0] not in titled_busy]  # a task forked keeps the title
    tasks = [
        pid
        for pid, (ppid, argv) in processes.items()
        if ppid in busy or (argv[0].startswith(b"airflow worker -- ") and not argv[0].startswith(EXECUTOR_WORKER_TITLE))
    ]
    return tasks, busy


def _scheduler_pids(sid: int) -> list[int]:
    """The scheduler of session ``sid``: the process whose command line names it and whose parent is a shell
    of the session (its leader or a ``supervise`` subshell). A process forked from the scheduler that kept
    its command line (an executor worker's child) is not one: SIGSTOP must not reach a task."""
    processes = _session_processes(sid)
    return [
        pid
        for pid, (ppid, argv) in processes.items()
        if (b"scheduler" in argv or argv[0].startswith(b"airflow scheduler"))
        and Path(processes.get(ppid, (0, [b""]))[1][0].decode(errors="replace")).name == "bash"
    ]


def _children(sid: int, parents: list[int]) -> list[int]:
    """The processes of session ``sid`` whose parent is one of ``parents``."""
    return [pid for pid, (ppid, _argv) in _session_processes(sid).items() if ppid in parents]


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        with contextlib.suppress(OSError, IndexError):
            if _stat_fields(pid)[0] != "Z":
                alive.append(pid)
    return alive


TASKS_SETTLED_S = 1.0  # how long no task may run, and no executor worker be busy, before the tasks count as ended


def _end_tasks(sid: int, until: float) -> None:
    """SIGTERM every running task of session ``sid``, and each one an executor worker starts meanwhile (one it
    had taken off its queue), until, for ``TASKS_SETTLED_S``, no task has run and no worker has been busy (each
    has reported the end of the task it supervised), or ``until``.

    The settle time covers a worker that has just taken a task off its queue and not yet retitled itself
    (tests/devstack/test_stack_restart.py failed in CI at 124ffe4 with a task instance left ``running``: a
    task that started as the third ``make down`` began, which the check of titled task processes alone missed).
    """
    signalled: set[int] = set()
    settled_since: float | None = None
    while (now := time.monotonic()) < until:
        tasks, busy = _task_pids(sid)
        fresh = [p for p in tasks if p not in signalled]
        _signal_all(fresh, signal.SIGTERM)
        signalled.update(fresh)
        if tasks or busy or _alive(list(signalled)):
            settled_since = None
        elif settled_since is None:
            settled_since = now
        elif now - settled_since >= TASKS_SETTLED_S:
            return
        time.sleep(0.1)


def _signal_all(pids: list[int] | set[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _wait_gone(sid: int, keep: set[int], until: float) -> list[int]:
    """Wait until no process of the session but ``keep`` is alive, or ``until``; those still alive."""
    while (alive := [p for p in session_pids(sid) if p not in keep]) and time.monotonic() < until:
        time.sleep(0.25)
    return alive


def stop_session(sid: int, timeout: float = 30.0, before_api_stops: Callable[[], None] | None = None) -> None:
    """End session ``sid``: its running tasks first (SIGTERM) while the scheduler is stopped, then the scheduler
    (SIGKILL) and every other process (SIGTERM), the API server last; SIGKILL what is alive after ``timeout``.

    The API server stays up until the rest has exited (within ``timeout``): a task stopped by the SIGTERM
    (its operator's ``on_kill``) reports its end through the Execution API, and with the server gone its
    supervisor would retry for about 20 s and leave the task instance ``running`` in the database.
    ``before_api_stops`` runs then, with only the API server left (see :func:`fail_orphaned_task_instances`);
    what it raises is printed as one line to stderr and the stop goes on.
    """
    deadline = time.monotonic() + timeout
    # The running tasks first, alone: each ends its work (on_kill) and reports its end through its supervisor
    # while the scheduler and its executor still run. Signalled together with the scheduler, a task could
    # lose that race to the executor's shutdown and stay "running" (tests/devstack/test_stack_restart.py
    # failed that way in 2 of 3 fresh-clone runs at bd7c666, where the components start and stop faster).
    # The scheduler is stopped (SIGSTOP) meanwhile, so that it starts no new task, such as the next ship run's
    # window once this one has ended (test_stack_restart failed that way in CI at 0b23c5e: a task of the next
    # run started in those seconds and, signalled with the scheduler, stayed "running"). Once the tasks have
    # ended, the stopped scheduler is killed (SIGKILL), not continued with a SIGTERM: Airflow's scheduler
    # handles SIGTERM by raising SystemExit wherever it is, and one raised inside a garbage-collection callback
    # is ignored ("Exception ignored in: _collection_gced ... SystemExit: 0", seen in a fresh-clone run at
    # 070fe0b): that scheduler went on scheduling, started the next run's ship task, and was killed with it
    # 30 s later, leaving it "running". What it has in the database is committed or rolled back by PostgreSQL;
    # the next start's scheduler adopts or resets what a dead scheduler had queued. Its supervising shell is
    # signalled first, so that nothing starts it again.
    # Its executor's workers (the local executor's, each the supervisor of the task it runs) would then wait for
    # a stop message that only a scheduler ending gracefully sends, and ignore SIGTERM (their task supervisor's
    # handler forwards it to a task that has ended): they are killed after WORKER_GRACE_S, in which each one
    # reports the end of the task it supervised.
    schedulers, api = _scheduler_pids(sid), _api_server_pids(sid)
    _signal_all(schedulers, signal.SIGSTOP)
    workers: list[int] = []
    try:
        _end_tasks(sid, min(deadline, time.monotonic() + TASK_STOP_S))
        workers = _children(sid, schedulers)
        _signal_all([p for p in session_pids(sid) if p not in api and p not in schedulers], signal.SIGTERM)
        _signal_all(schedulers, signal.SIGKILL)
    finally:
        _signal_all(schedulers, signal.SIGCONT)  # only when ending the tasks failed: let it handle its SIGTERM
    grace = min(deadline, time.monotonic() + WORKER_GRACE_S)
    while _alive(workers) and time.monotonic() < grace:
        time.sleep(0.1)
    _signal_all(_alive(workers), signal.SIGKILL)
    _wait_gone(sid, api, deadline)
    if before_api_stops is not None:
        try:
            before_api_stops()
        except Exception as exc:  # the stop must go on: the processes are what it promises
            print(f"stopping Airflow: {exc}".splitlines()[0], file=sys.stderr)
    _signal_all(session_pids(sid), signal.SIGTERM)
    _signal_all(_wait_gone(sid, set(), deadline), signal.SIGKILL)


ORPHAN_NOTE = "stopped with the stack (make down): its process ended before it could record its end"


def fail_orphaned_task_instances(api: AirflowApi) -> list[str]:
    """Mark ``failed`` (with :data:`ORPHAN_NOTE`) each task instance the API still shows ``running`` once every
    process of the session but the API server has exited; the ``dag/run/task`` of each one marked.

    Called by ``make down`` between its stop of the tasks and that of the API server. A task stopped there
    records its own end (``up_for_retry``, through its supervisor); one whose worker was killed before its report
    reached the API server (a loaded machine: tests/devstack/test_stack_restart.py failed in CI at abf3d43 with
    one left ``running``) would otherwise stay ``running`` until the next start's scheduler found it a zombie,
    minutes later. Nothing runs it any more: the state says so, as an operator's "Mark as failed" would.
    """
    marked = []
    for ti in api.task_instances_in_state("running"):
        api.set_task_instance_state(ti["dag_id"], ti["dag_run_id"], ti["task_id"], "failed",
                                    map_index=ti.get("map_index", -1), note=ORPHAN_NOTE)  # fmt: skip
        marked.append(f"{ti['dag_id']}/{ti['dag_run_id']}/{ti['task_id']}")
    return marked
