"""The Replication view: served by uvicorn, loaded in headless Chromium, no console errors, a known queue shown."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from cdp import chromium_binary, load_page

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def source_cluster(cluster_key, tmp_path):
    """One embedded region server with table t (f scope 1) and peer 1, after one write: one known queue."""
    from replication.cluster.embedded import start_cluster
    from replication.config import Config
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    conf = Config.load(env={}, overrides={"zookeeper.session.timeout": 4000})
    cluster = start_cluster(cluster_key, str(tmp_path / "src"), 1, conf=conf, name="ui-src")
    try:
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        ReplicationPeerStorage(cluster.zk, cluster.paths).add_peer(
            "1", ReplicationPeerConfig(cluster_key="127.0.0.1:2181:/nowhere")
        )
        with cluster.client() as client:
            client.put("t", b"r1", b"f", b"q", b"v")
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def served_view(source_cluster):
    """The plugin's FastAPI app on a free 127.0.0.1 port (uvicorn in a thread)."""
    import uvicorn
    from hbrep_airflow.ui.app import create_app

    from replication.status import replication_status
    from replication.zk.cluster_key import ClusterKey

    key = ClusterKey.parse(source_cluster.cluster_key)
    app = create_app(lambda: replication_status(source_cluster.zk, key, source_cluster.conf))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(10)


def _known_queue(cluster) -> tuple[str, str]:
    from replication.zk.queue_storage import ReplicationQueueStorage

    (server,) = cluster.servers
    storage = ReplicationQueueStorage(cluster.zk, cluster.paths)
    deadline = time.monotonic() + 20
    while not storage.get_wals_in_queue(server, "1"):
        assert time.monotonic() < deadline, "no queue for peer 1"
        time.sleep(0.1)
    return server, storage.get_wals_in_queue(server, "1")[0]


@pytest.mark.skipif(chromium_binary() is None, reason="chromium not installed (make chromium)")
def test_page_loads_without_console_errors_and_shows_a_known_queue(source_cluster, served_view):
    server, wal = _known_queue(source_cluster)
    result = load_page(served_view, "document.body.dataset.loaded === '1'")
    assert result.errors == []
    assert "Replication" in result.text
    assert server in result.text  # the replicator of the queue tree
    assert wal in result.text  # the queue's WAL with its position
    assert "1 (peer 1)" in result.text  # queue id 1 of peer 1
    assert "ENABLED" in result.text  # the peers table
    assert "cannot load" not in result.text


def test_status_api_adds_lag_history(source_cluster, served_view):
    import json
    import urllib.request

    _known_queue(source_cluster)
    with urllib.request.urlopen(served_view + "api/status", timeout=30) as response:
        data = json.loads(response.read())
    assert list(data["peers"]) == ["1"]
    assert data["queues"][0]["queue_id"] == "1"
    assert data["lag_history"]["1"][-1] == [data["now_ms"], data["peers"]["1"]["replicationLag"]]


def test_status_errors_are_one_line_503():
    from fastapi.testclient import TestClient
    from hbrep_airflow.ui.app import create_app

    def broken():
        raise RuntimeError("ZooKeeper at 127.0.0.1:1 did not answer")

    response = TestClient(create_app(broken)).get("/api/status")
    assert response.status_code == 503
    assert response.json() == {"error": "RuntimeError: ZooKeeper at 127.0.0.1:1 did not answer"}
