"""Fixtures of the topology tests: a ``topology`` factory starting named clusters, all stopped at module end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reliability.harness import chaos_conf, new_cluster


@pytest.fixture(scope="module")
def topology(zk_server, tmp_path_factory) -> Iterator[object]:
    """``topology(a=2, b=2, c=1)`` → dict name → running EmbeddedCluster (stopped after the module)."""
    started = []
    conf = chaos_conf()

    def make(**sizes: int) -> dict[str, object]:
        out = {}
        for name, servers in sizes.items():
            cluster = new_cluster(zk_server, tmp_path_factory, f"hbase-{name}", servers, conf)
            started.append(cluster)
            out[name] = cluster
        return out

    try:
        yield make
    finally:
        for cluster in reversed(started):
            cluster.stop()
