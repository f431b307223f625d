"""VerifyReplication and GX after real replication (embedded clusters, ship cycle, Spark, GX)."""

from __future__ import annotations

import os
import uuid

import pytest
from support import add_peer, create_table, cycle

from replication.checks.peer_checks import check_replicated_table, verify_replication
from replication.monitoring.status import replication_status
from replication.wal.model import Cell, CellType
from replication.zk.client import connected

pytestmark = pytest.mark.slow


def test_verify_and_quality_after_replication(pair, spark):
    add_peer(pair, "1")
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("cf", 1), ("local", 0))
    rows = [f"user{i:04d}".encode() for i in range(120)]
    with pair.source.client() as client:
        client.batch(table, [Cell(r, b"cf", b"field0", 10_000, CellType.PUT, b"v" + r) for r in rows])
        client.flush(table)
    with connected(pair.source_key) as zk:
        behind = check_replicated_table(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table)
        assert not behind.success and behind.source_rows == 120 and behind.peer_rows == 0
        cycle(pair, spark)
        with pair.peer.client() as client:
            client.flush(table)
        result = verify_replication(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table,
                                    families=["cf"])  # fmt: skip
        report = check_replicated_table(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table)
        status = replication_status(zk, pair.source_key, pair.conf)
    assert result.counters["GOODROWS"] == 120
    assert result.counters["BADROWS"] == 0
    assert result.counters["ONLY_IN_SOURCE_TABLE_ROWS"] == result.counters["ONLY_IN_PEER_TABLE_ROWS"] == 0
    assert report.success and report.peer_rows == 120
    assert os.path.exists(report.data_docs_index)
    assert status.checks[f"verify/1/{table}"]["counters"]["GOODROWS"] == 120
    assert status.checks[f"quality/1/{table}"]["success"] is True
