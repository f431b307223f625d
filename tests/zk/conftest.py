"""Fixtures for the replication-state tests: an absolute-path client and the paths of a fresh cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replication.config import Config
from replication.zk.client import connect
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths


@pytest.fixture
def zkc(cluster_key: str) -> Iterator[object]:
    """A kazoo client (absolute paths) for the fresh cluster; the cluster's parent is removed afterwards."""
    client = connect(cluster_key)
    try:
        yield client
    finally:
        parent = ClusterKey.parse(cluster_key).znode_parent
        if client.exists(parent):
            client.delete(parent, recursive=True)
        client.stop()
        client.close()


@pytest.fixture
def paths(cluster_key: str) -> ZNodePaths:
    return ZNodePaths(Config.load(env={}), parent=ClusterKey.parse(cluster_key).znode_parent)
