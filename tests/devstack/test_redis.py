"""The distributed stack's broker: a real redis-server on loopback, its data kept across a restart."""

from __future__ import annotations

import socket

import pytest
import redis as redis_client

from replication.devstack.redis import RedisServer, RedisServerError, ping
from replication.net import LOOPBACK


@pytest.fixture
def server(tmp_path):
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_it_answers_on_loopback_only_and_keeps_queued_data_across_a_restart(server):
    assert ping(server.port) and server.url == f"redis://127.0.0.1:{server.port}/0"
    assert f"bind {LOOPBACK}" in (server.state_dir / "redis.conf").read_text()
    client = redis_client.Redis.from_url(server.url)
    client.rpush("default", b"task-1", b"task-2")  # a Celery queue is a Redis list
    client.close()
    port = server.port
    assert server.stop() and not ping(port)
    server.start()  # the same port (recorded), the append-only file replayed
    assert RedisServer(server.state_dir).port == port
    client = redis_client.Redis.from_url(server.url)
    assert client.lrange("default", 0, -1) == [b"task-1", b"task-2"]
    client.close()


def test_a_taken_port_is_one_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind((LOOPBACK, 0))
        taken.listen()
        with pytest.raises(RedisServerError, match=r"^port \d+ on 127.0.0.1 is already in use") as err:
            RedisServer(tmp_path / "r", taken.getsockname()[1]).start()
    assert "\n" not in str(err.value)
    assert not (tmp_path / "r" / "redis.pid").exists()


def test_a_second_start_from_the_same_folder_is_refused(server):
    with pytest.raises(RedisServerError, match="already runs from"):
        RedisServer(server.state_dir).start()
    assert ping(server.port)
