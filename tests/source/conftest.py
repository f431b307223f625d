"""Two embedded clusters (A with 3 region servers → B with 2) on the session ZooKeeper, per module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from replication.config import Config
from replication.zk.cluster_key import ClusterKey

# Small numbers so tests exercise rolls, batches and backoff quickly.
TEST_CONF = {
    "replication.source.sleepforretries": "50",
    "replication.source.maxretriesmultiplier": "4",
    "hbrep.source.ship.max.attempts": "4",
    "replication.sleep.before.failover": "0",
    "hbase.regionserver.hlog.blocksize": str(256 * 1024),
}


@dataclass
class Pair:
    """A source cluster, its peer cluster and the configuration both use."""

    source: object
    peer: object
    source_key: ClusterKey
    peer_key: ClusterKey
    conf: Config


def new_key(zk_server, name: str) -> str:
    return f"127.0.0.1:{zk_server.port}:/{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def pair(zk_server, tmp_path_factory) -> Iterator[Pair]:
    from replication.cluster.embedded import start_cluster

    conf = Config.load(env={}, overrides=TEST_CONF)
    source_key, peer_key = new_key(zk_server, "hbase-a"), new_key(zk_server, "hbase-b")
    source = start_cluster(source_key, str(tmp_path_factory.mktemp("a")), 3, conf=conf, name="a")
    try:
        peer = start_cluster(peer_key, str(tmp_path_factory.mktemp("b")), 2, conf=conf, name="b")
    except BaseException:
        source.stop()
        raise
    try:
        yield Pair(source, peer, ClusterKey.parse(source_key), ClusterKey.parse(peer_key), conf)
    finally:
        peer.stop()
        source.stop()
