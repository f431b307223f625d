"""A real HBase cluster replicates natively into an hbrep cluster: HBase's own ReplicationSource and
HBaseInterClusterReplicationEndpoint are the client, hbrep's region servers' HBase RPC listeners the sink.

The hbrep cluster is added as a peer of the session's real HBase through HBase's Admin API, with the
cluster key hbrep registers for HBase (``<parent>/hbrep-hbase-rpc``: hbaseid + rs/<host,hbaseRpcPort,
startcode>). Rows written into HBase through happybase (Thrift) must all arrive: the exact set of cells
(every version, deletes applied) on the hbrep side equals what HBase itself holds and what was written,
and hbrep's WAL keys of those edits carry HBase's cluster id (HBase's hbaseid), so they never go back.
"""

from __future__ import annotations

import time
import uuid

import pytest
from interop.helpers import (
    ARRIVAL_TIMEOUT_S,
    SINK_VERSIONS,
    assert_every_cell_arrives,
    assert_hbrep_wal_keeps_hbase_cluster_id,
    create_on_both,
    hbase_peer_into_hbrep,
    hbase_table_cells,
    write_through_thrift,
)

from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

pytestmark = pytest.mark.slow


def test_real_hbase_replicates_every_row_into_hbrep_with_its_cluster_id_kept(hbrep_sink, real_hbase):
    table = f"native_{uuid.uuid4().hex[:8]}"
    create_on_both(hbrep_sink, real_hbase, table)
    with hbase_peer_into_hbrep(real_hbase, hbrep_sink.key, hbrep_sink.paths, table):
        expected = write_through_thrift(real_hbase, table, 500)
        assert hbase_table_cells(real_hbase, table) == expected
        assert_every_cell_arrives(hbrep_sink, table, expected)

    assert_hbrep_wal_keeps_hbase_cluster_id(hbrep_sink, real_hbase, table, expected)


def _hbase_log_mentions(real_hbase, *needles: str) -> bool:
    return any(
        all(needle in line for needle in needles)
        for log in real_hbase.log_files()
        for line in log.read_text(errors="replace").splitlines()
    )


def test_a_table_missing_on_hbrep_is_a_table_not_found_for_hbase_which_retries_until_it_exists(hbrep_sink, real_hbase):
    table = f"late_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", table, str(SINK_VERSIONS), "a:1", "b:1")  # on HBase only, for now
    with hbase_peer_into_hbrep(real_hbase, hbrep_sink.key, hbrep_sink.paths, table):
        expected = write_through_thrift(real_hbase, table, 50)
        # HBase's endpoint gets hbrep's answer as a RemoteException of TableNotFoundException and logs it
        said = f"RemoteWithExtrasException: org.apache.hadoop.hbase.TableNotFoundException: table {table} "
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
        while time.monotonic() < deadline and not _hbase_log_mentions(real_hbase, said):
            time.sleep(1)
        assert _hbase_log_mentions(real_hbase, said)
        assert not TableRegistry(LocalFileSystem(), hbrep_sink.root).exists(table)
        # once the table exists on hbrep, HBase's retries deliver every cell
        families = [ColumnFamilyDescriptor(f, scope=1, max_versions=SINK_VERSIONS) for f in ("a", "b")]
        TableRegistry(LocalFileSystem(), hbrep_sink.root).create(TableDescriptor.of(table, *families))
        assert_every_cell_arrives(hbrep_sink, table, expected)
