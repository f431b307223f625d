"""Fixtures of the bad-input tests: one small embedded cluster per module (1 region server)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from replication.config import Config

SMALL_CONF = {
    "replication.source.sleepforretries": "50",
    "replication.source.maxretriesmultiplier": "4",
    "hbrep.source.ship.max.attempts": "3",
    "replication.sleep.before.failover": "0",
    "hbase.regionserver.optionalcacheflushinterval": "0",
}


@pytest.fixture(scope="module")
def small_conf() -> Config:
    return Config.load(env={}, overrides=SMALL_CONF)


@pytest.fixture(scope="module")
def single(zk_server, tmp_path_factory, small_conf) -> Iterator[object]:
    """A running one-region-server cluster with table ``t`` (f1 replicated, f0 local)."""
    from replication.cluster.embedded import start_cluster
    from replication.fs import get_filesystem
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    key = f"127.0.0.1:{zk_server.port}:/hbase-bad-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("single")), 1, conf=small_conf, name="single")
    try:
        fs, root = get_filesystem(cluster.root)
        TableRegistry(fs, root).create(
            TableDescriptor.of("t", ColumnFamilyDescriptor("f1", scope=1), ColumnFamilyDescriptor("f0", scope=0))
        )
        yield cluster
    finally:
        cluster.stop()
