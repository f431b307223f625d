"""Fixtures for the embedded cluster tests: small-roll settings, a running 2-server cluster, a root ZooKeeper client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from replication.config import Config


@pytest.fixture
def cluster_conf() -> Config:
    """Small WAL rolls (16 KiB), no periodic roll/flush, quick chores, short ZooKeeper sessions."""
    return Config.load(
        env={},
        overrides={
            "hbase.regionserver.hlog.blocksize": 32768,
            "hbase.regionserver.logroll.multiplier": 0.5,
            "hbase.regionserver.logroll.period": 3600000,
            "hbase.regionserver.optionalcacheflushinterval": 0,
            "zookeeper.session.timeout": 4000,
            "hbrep.regionserver.chore.interval.ms": 100,
        },
    )


@pytest.fixture
def embedded(cluster_key, tmp_path, cluster_conf) -> Iterator[object]:
    """A running 2-region-server cluster on a fresh root; stopped (no process left) afterwards."""
    from replication.cluster.embedded import start_cluster

    cluster = start_cluster(cluster_key, str(tmp_path / "root"), 2, conf=cluster_conf, name="test")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def zk_abs(zk_server) -> Iterator[KazooClient]:
    """A started kazoo client on the session's ZooKeeper, at its root (no chroot); closed afterwards."""
    client = KazooClient(hosts=zk_server.hosts)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()
