"""``hbrep metrics serve``: a real scrape endpoint over the status of real region servers and ZooKeeper."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import add_peer, create_table

from replication.cluster.embedded import start_cluster
from replication.monitoring.status import replication_status
from replication.net import free_port
from replication.wal.model import Cell, CellType
from replication.zk.client import connected

pytestmark = pytest.mark.slow


def _serve(cluster_key: str, port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "replication.cli", "--cluster", cluster_key, "metrics", "serve", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _scrape(port: int, timeout: float = 60) -> dict[str, object]:
    """The families of one scrape, waiting (bounded) for the endpoint to answer."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
                return {f.name: f for f in text_string_to_metric_families(response.read().decode())}
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _scrape_until_up(port: int, value: float, timeout: float = 60) -> dict[str, object]:
    """The first scrape whose hbrep_status_up is ``value`` (a monitor scrapes again and again); every
    scrape on the way must answer (a hung endpoint fails the test through ``_scrape``'s timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        families = _scrape(port)
        if [s.value for s in families["hbrep_status_up"].samples] == [value]:
            return families
        assert time.monotonic() < deadline, f"hbrep_status_up never became {value}"
        time.sleep(0.5)


@contextlib.contextmanager
def _served(cluster_key: str, port: int):
    proc = _serve(cluster_key, port)
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_a_scrape_gives_the_queues_gauges_with_hbase_names(pair):
    add_peer(pair, "7")
    table = f"t_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, table, ("f", 1))
    with pair.source.client() as client:
        client.batch(table, [Cell(f"r{i}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v") for i in range(20)])
        for server in pair.source.servers:
            client.roll_wal(server)
    port = free_port()
    with _served(str(pair.source_key), port) as proc:
        families = _scrape(port)
        with connected(pair.source_key) as zk:
            status = replication_status(zk, pair.source_key, pair.conf)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert [s.value for s in families["hbrep_status_up"].samples] == [1.0]
    scraped = {
        s.labels["replicator"]: s.value
        for s in families["hbrep_source_sizeOfLogQueue"].samples
        if s.labels["peer_id"] == "7"
    }
    expected = {q.replicator: float(q.sizeOfLogQueue) for q in status.queues if q.peer_id == "7"}
    assert scraped == expected and set(scraped) == set(pair.source.servers)
    assert all(value >= 1.0 for value in scraped.values())  # each server rolled: its older WAL waits
    lag = {s.labels["peer_id"]: s.labels["state"] for s in families["hbrep_peer_replicationLag"].samples}
    assert lag["7"] == "ENABLED"
    (total,) = families["hbrep_global_source_sizeOfLogQueue"].samples
    assert total.value == float(status.global_source["source.sizeOfLogQueue"]) and total.labels == {}
    assert "hbrep_source_replicationLag" in families  # (ageOfLastShippedOp appears once a queue shipped)


def test_status_up_drops_to_zero_when_zookeeper_stops(tmp_path):
    zk_port = free_port()
    data = str(tmp_path / "zk")
    hbrep = [sys.executable, "-m", "replication.cli"]
    started = subprocess.run([*hbrep, "zk", "start", "--port", str(zk_port), "--data", data],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert started.returncode == 0, started.stderr
    port = free_port()
    key = f"127.0.0.1:{zk_port}:/metrics-{uuid.uuid4().hex[:6]}"
    try:
        start_cluster(key, str(tmp_path / "cluster"), 1, name="metrics").stop()  # the cluster stays, servers down
        with _served(key, port) as proc:
            assert [s.value for s in _scrape(port)["hbrep_status_up"].samples] == [1.0]
            stopped = subprocess.run([*hbrep, "zk", "stop", "--port", str(zk_port), "--data", data],
                                     capture_output=True, text=True, timeout=120)  # fmt: skip
            assert stopped.returncode == 0, stopped.stderr
            families = _scrape_until_up(port, 0.0)
            assert "hbrep_peer_replicationLag" not in families  # no stale figures shown as current
            restarted = subprocess.run([*hbrep, "zk", "start", "--port", str(zk_port), "--data", data],
                                       capture_output=True, text=True, timeout=120)  # fmt: skip
            assert restarted.returncode == 0, restarted.stderr
            # ZooKeeper back (an outage longer than a one-shot command's 30 s would also be outlived)
            assert "hbrep_peer_replicationLag" in _scrape_until_up(port, 1.0)
        assert proc.returncode == 0
        assert "replication status unreadable" in proc.stderr.read()
    finally:
        subprocess.run([*hbrep, "zk", "stop", "--port", str(zk_port), "--data", data], capture_output=True, timeout=120)


def test_a_port_in_use_is_one_error_line(pair):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve(str(pair.source_key), port)
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert stderr.strip().splitlines() == [f"hbrep: error: metrics serve: 127.0.0.1:{port} is in use"]
