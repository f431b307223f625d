from __future__ import annotations

import socket

import pytest

from replication.devstack.zookeeper import ZooKeeperServer, ZooKeeperServerError, four_letter_word
from replication.net import free_port
from replication.processes import pid_alive


def test_session_server_serves_on_loopback(zk_server):
    reply = four_letter_word("127.0.0.1", zk_server.port, "srvr")
    assert "Mode: standalone" in reply
    config = zk_server.config_file.read_text()
    assert "clientPortAddress=127.0.0.1" in config


def test_znodes_round_trip(zk):
    zk.create("/a/b", b"hello", makepath=True)
    data, stat = zk.get("/a/b")
    assert data == b"hello"
    zk.set("/a/b", b"world", version=stat.version)
    assert zk.get("/a/b")[0] == b"world"
    tx = zk.transaction()
    tx.create("/a/c", b"1")
    tx.delete("/a/b")
    assert tx.commit() == ["/a/c", True]
    assert zk.get_children("/a") == ["c"]


def test_start_status_stop_leaves_no_process(tmp_path):
    server = ZooKeeperServer(tmp_path / "zk", free_port())
    pid = server.start()
    try:
        status = server.status()
        assert status.running and status.mode == "standalone"
        with pytest.raises(ZooKeeperServerError, match="already runs"):
            server.start()
    finally:
        assert server.stop() is True
    assert not pid_alive(pid)
    assert not server.pid_file.exists()
    assert server.status().running is False
    assert server.stop() is False


def test_port_taken_is_one_clear_error(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(ZooKeeperServerError, match=f"port {port} on 127.0.0.1 is already in use"):
            ZooKeeperServer(tmp_path / "zk", port).start()


def test_missing_java_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ZooKeeperServerError, match="java not found"):
        ZooKeeperServer(tmp_path / "zk", free_port()).start()


def test_server_that_dies_shows_log_tail(tmp_path):
    server = ZooKeeperServer(tmp_path / "zk", free_port(), heap_mb=1)  # JVM refuses a 1 MB heap
    with pytest.raises(ZooKeeperServerError, match="exited with code") as info:
        server.start(timeout=30)
    assert "log tail" in str(info.value)


def test_stop_then_start_at_once_on_the_same_port(tmp_path):
    """Issue 28: the old server's connections in TIME-WAIT do not block a new start on its port, twice."""
    from kazoo.client import KazooClient

    server = ZooKeeperServer(tmp_path / "zk", free_port())
    try:
        for round_ in range(3):
            server.start()
            client = KazooClient(hosts=server.hosts, timeout=10)
            client.start(timeout=15)
            client.ensure_path(f"/round{round_}")
            assert client.exists("/round0") is not None  # the data survives the restarts
            server.stop()  # the server closes its end first: it stays in TIME-WAIT on the port
            client.stop()
            client.close()
    finally:
        server.stop()
