"""``hbase.rpc.timeout``: each call of hbrep's cluster client waits that long for a region server, no
longer (HBase's client RPC timeout). The server is stopped with SIGSTOP, so it accepts the connection and
never answers. Real region server, real client."""

from __future__ import annotations

import os
import signal
import time

import pytest

from replication.cluster.client import ClusterClient
from replication.cluster.embedded import server_pids, start_cluster
from replication.errors import HbrepError
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow


def test_a_call_to_a_silent_server_fails_after_the_configured_timeout(cluster_key, tmp_path, cluster_conf):
    with start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=cluster_conf) as cluster:
        (server,) = cluster.servers
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", "f"))
        cell = Cell(b"r", b"f", b"q", 1, int(CellType.PUT), b"v")
        pid = server_pids(cluster.root)[server]
        waited = {}
        os.kill(pid, signal.SIGSTOP)
        try:
            for timeout_ms in (1500, 6000):
                client = ClusterClient(
                    cluster.cluster_key, cluster_conf.with_overrides({"hbase.rpc.timeout": timeout_ms})
                )
                try:
                    started = time.monotonic()
                    with pytest.raises(HbrepError):
                        client.mutate_on(server, "t", [cell])
                    waited[timeout_ms] = time.monotonic() - started
                finally:
                    client.close()
        finally:
            os.kill(pid, signal.SIGCONT)
    assert 1.4 <= waited[1500] < 4.5, waited
    assert 5.9 <= waited[6000] < 10, waited
