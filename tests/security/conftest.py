"""A cluster started with ZooKeeper digest credentials and a configured cluster token (per module)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from replication.config import Config

ZK_AUTH = "hbrep:zkPw-7c1d0f3e9a"
TOKEN = "tok-5b0e2c77d1a94f8e"


def _start_secure(zk_server, tmp_path_factory, name: str):
    from replication.cluster.embedded import start_cluster

    conf = Config.load(
        env={},
        overrides={"hbrep.zk.auth": ZK_AUTH, "hbrep.cluster.token": TOKEN, "replication.sleep.before.failover": 0},
    )
    key = f"127.0.0.1:{zk_server.port}:/hbase-{name}-{uuid.uuid4().hex[:8]}"
    return start_cluster(key, str(tmp_path_factory.mktemp(name)), 1, conf=conf, name=name)


@pytest.fixture(scope="module")
def secure(zk_server, tmp_path_factory) -> Iterator[object]:
    cluster = _start_secure(zk_server, tmp_path_factory, "sec")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def secure_peer(zk_server, tmp_path_factory) -> Iterator[object]:
    """A second cluster with the same credentials and token: a peer of ``secure``."""
    cluster = _start_secure(zk_server, tmp_path_factory, "secpeer")
    try:
        yield cluster
    finally:
        cluster.stop()
