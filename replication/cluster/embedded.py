"""The embedded cluster as a library: start region-server processes, kill them, stop them.

``start_cluster(key, root, n)`` records the cluster in ZooKeeper (``<parent>/hbrep-cluster``), creates
the cluster id (``<parent>/hbaseid``) once and the token file once, writes the servers' configuration to
``<root>/.hbrep/hbase-site.xml`` and starts ``n`` processes (``python -m replication.cluster.regionserver``),
each returning once it is live. Logs go to ``<root>/.hbrep/logs/``, pid files to ``<root>/.hbrep/rs/``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kazoo.client import KazooClient

from replication.cluster.client import ClusterClient
from replication.cluster.errors import ClusterError
from replication.cluster.info import (
    ClusterInfo,
    create_token_if_absent,
    local_state_dir,
    read_cluster_info,
    write_cluster_info,
)
from replication.cluster.regionserver import check_region_server_settings, pid_file
from replication.config import Config, write_site_xml
from replication.fs import LocalFileSystem, get_filesystem
from replication.processes import dies_with_parent, pid_alive, read_pid_file
from replication.zk.client import connect, zk_options
from replication.zk.cluster_id import create_cluster_id_if_absent
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.layout import ZNodePaths

START_TIMEOUT_S = 30.0
# The embedded servers' ZooKeeper session timeout when the configuration keeps HBase's 90 s default:
# a SIGKILLed server should drop out of <parent>/rs within seconds on one machine.
EMBEDDED_SESSION_TIMEOUT_MS = 6000


def site_file(root: str) -> str:
    """``<local state>/hbase-site.xml`` (``<root>/.hbrep`` for a local root): what every region server loads."""
    return os.path.join(local_state_dir(root), "hbase-site.xml")


def _server_conf(conf: Config) -> dict[str, str]:
    values = conf.as_dict()
    if conf.source_of("zookeeper.session.timeout") == "defaults":
        values["zookeeper.session.timeout"] = str(EMBEDDED_SESSION_TIMEOUT_MS)
    return values


def server_pids(root: str) -> dict[str, int]:
    """Server name → pid of every region server under ``<root>/.hbrep/rs/`` whose recorded process still
    runs (a stale file, of a server that died, names no pid: its pid may be another process's now)."""
    out = {}
    for path in glob.glob(os.path.join(local_state_dir(root), "rs", "*.pid")):
        pid = read_pid_file(Path(path))
        if pid is not None:
            out[os.path.basename(path)[: -len(".pid")]] = pid
    return out


def live_servers(zk: KazooClient, paths: ZNodePaths) -> list[str]:
    """The children of ``<parent>/rs`` (sorted; [] when the root is missing)."""
    return LiveServerStorage(zk, paths).live()


@dataclass
class EmbeddedCluster:
    """A running embedded cluster: its key, root, and the region-server processes this object started."""

    cluster_key: str
    root: str
    conf: Config
    name: str
    zk: KazooClient
    paths: ZNodePaths
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def servers(self) -> list[str]:
        """Names of the servers started here that are still running, sorted."""
        return sorted(s for s, p in self.processes.items() if p.poll() is None)

    def live_servers(self) -> list[str]:
        """What ZooKeeper lists as live (``<parent>/rs``)."""
        return live_servers(self.zk, self.paths)

    def client(self) -> ClusterClient:
        """A new ClusterClient for this cluster (close it when done)."""
        return ClusterClient(self.cluster_key, self.conf)

    def start_region_server(self, timeout: float = START_TIMEOUT_S) -> str:
        """Start one more region-server process; return its server name once it is live."""
        sdir = local_state_dir(self.root)
        os.makedirs(os.path.join(sdir, "logs"), exist_ok=True)
        ready = os.path.join(sdir, f"ready-{os.getpid()}-{time.monotonic_ns()}")
        log_path = os.path.join(sdir, "logs", f"regionserver-{time.time_ns()}.log")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "replication.cluster.regionserver", "--cluster", self.cluster_key,
                 "--conf", site_file(self.root), "--ready-file", ready],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=dies_with_parent(),  # dies with a killed test run (not under make up)
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        try:
            while not os.path.exists(ready):
                if proc.poll() is not None:
                    raise ClusterError(f"region server exited with {proc.returncode} at start; log {log_path}: "
                                       f"{_last_line(log_path)}")  # fmt: skip
                if time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    raise ClusterError(f"region server did not start within {timeout:.0f}s; log {log_path}")
                time.sleep(0.02)
            name = Path(ready).read_text().strip()
        finally:
            with contextlib.suppress(OSError):
                os.remove(ready)
        self.processes[name] = proc
        return name

    def kill(self, server: str) -> None:
        """SIGKILL one region server (a crash: no flush, no trailer, its znode expires with the session)."""
        proc = self.processes.get(server)
        if proc is not None:
            proc.kill()
            proc.wait()
        else:
            kill_server(self.root, server, signal.SIGKILL)

    def wait_until_dead(self, server: str, timeout: float = 30.0) -> None:
        """Wait until ``server``'s ephemeral znode is gone (its ZooKeeper session expired)."""
        deadline = time.monotonic() + timeout
        while server in self.live_servers():
            if time.monotonic() > deadline:
                raise ClusterError(f"region server {server} is still listed live after {timeout:.0f}s")
            time.sleep(0.1)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every region server cleanly (SIGTERM: flush, close WALs), SIGKILL stragglers, close ZooKeeper."""
        try:
            stop_servers(self.root, timeout, processes=self.processes)
        finally:
            with contextlib.suppress(Exception):
                self.zk.stop()
                self.zk.close()

    def __enter__(self) -> EmbeddedCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _last_line(path: str) -> str:
    with contextlib.suppress(OSError):
        lines = [line for line in Path(path).read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1] if lines else ""
    return ""


def kill_server(root: str, server: str, sig: int = signal.SIGKILL) -> int:
    """Signal the process of ``server`` found by its pid file; return the pid. ClusterError if unknown/not running."""
    pids = server_pids(root)
    pid = pids.get(server)
    if pid is None or not pid_alive(pid):
        raise ClusterError(f"region server {server} is not running under {root}")
    os.kill(pid, sig)
    if sig == signal.SIGKILL:
        with contextlib.suppress(OSError):
            os.remove(pid_file(root, server))
        _wait_dead(pid, 10.0)
    return pid


def _wait_dead(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stop_servers(root: str, timeout: float = 30.0, processes: dict[str, subprocess.Popen] | None = None) -> list[str]:
    """SIGTERM every region server of ``root`` (pid files and ``processes``), wait, SIGKILL what remains."""
    targets: dict[str, int] = {}
    for name, pid in server_pids(root).items():
        if pid_alive(pid):
            targets[name] = pid
    for name, proc in (processes or {}).items():
        if proc.poll() is None:
            targets[name] = proc.pid
    for pid in targets.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for name, pid in targets.items():
        proc = (processes or {}).get(name)
        if proc is not None:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        elif not _wait_dead(pid, max(0.1, deadline - time.monotonic())):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_dead(pid, 5.0)
        with contextlib.suppress(OSError):
            os.remove(pid_file(root, name))
    return sorted(targets)


def prepare_cluster(zk: KazooClient, paths: ZNodePaths, name: str, root: str, conf: Config) -> ClusterInfo:
    """Record the cluster (name, root) and create its id and token once; ClusterError if the key holds another."""
    fs, root_path = get_filesystem(root)
    # a local root is recorded as an absolute path; any other keeps its URI (scheme, NameNode, user)
    recorded = root_path if isinstance(fs, LocalFileSystem) else root.rstrip("/")
    try:
        existing = read_cluster_info(zk, paths)
    except ClusterError:
        existing = None
    if existing is not None and (existing.name != name or existing.root != recorded):
        raise ClusterError(
            f"cluster key {paths.parent} already holds cluster {existing.name!r} with root {existing.root}"
        )
    info = ClusterInfo(name=name, root=recorded, znode_parent=paths.parent)
    fs.mkdirs(root_path)
    create_token_if_absent(fs, root_path)
    create_cluster_id_if_absent(zk, paths)
    write_cluster_info(zk, paths, info)
    os.makedirs(local_state_dir(recorded), exist_ok=True)
    write_site_xml(site_file(recorded), _server_conf(conf))
    return info


def start_cluster(
    cluster_key: str,
    root: str,
    regionservers: int,
    conf: Config | None = None,
    name: str = "hbrep",
) -> EmbeddedCluster:
    """Start an embedded cluster with ``regionservers`` processes; returns once all are live.

    On any failure the processes already started are stopped again (no partial cluster is left running).
    """
    if regionservers < 1:
        raise ClusterError(f"cluster {name}: --regionservers must be at least 1, not {regionservers}")
    conf = conf or Config.load(env={})
    check_region_server_settings(conf)
    key = ClusterKey.parse(cluster_key)
    zk = connect(key, **zk_options(conf))
    paths = ZNodePaths(conf, parent=key.znode_parent)
    try:
        info = prepare_cluster(zk, paths, name, root, conf)
    except BaseException:
        zk.stop()
        zk.close()
        raise
    cluster = EmbeddedCluster(str(key), info.root, conf, name, zk, paths)
    try:
        for _ in range(regionservers):
            cluster.start_region_server()
    except BaseException:
        cluster.stop()
        raise
    return cluster
