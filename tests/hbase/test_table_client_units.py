"""The pieces of the real-HBase table client that need no server: MutationProto shapes (HBase's
``ProtobufUtil.toMutation``), the Scan message, HBase's exceptions sorted as its client sorts them, the
retry backoff, and the repair report's advice naming ``hbrep major_compact``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.errors import HbrepError
from replication.hbase.client_errors import (
    HBaseCallError,
    RegionNotHere,
    ScannerGone,
    ServerBusy,
    action_error,
    exception_error,
)
from replication.hbase.mutations import LATEST_TIMESTAMP, cell_mutation, delete_mutation, put_mutation
from replication.hbase.retries import RetryPolicy
from replication.hbase.scanner import ScanOptions, closest_row_after
from replication.operations.repair import RepairReport
from replication.operations.sync_table import RepairPlan
from replication.proto import Client_pb2
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.wal.model import Cell, CellType

M = Client_pb2.MutationProto


def test_put_groups_cells_by_family_and_leaves_latest_to_the_server():
    m = put_mutation(b"r", [(b"a", b"q1", b"v1", None), (b"b", b"q", b"v", 5), (b"a", b"q2", b"v2", LATEST_TIMESTAMP)])
    assert m.mutate_type == M.PUT and [cv.family for cv in m.column_value] == [b"a", b"b"]
    a, b = m.column_value
    assert [(qv.qualifier, qv.value, qv.HasField("timestamp")) for qv in a.qualifier_value] == [
        (b"q1", b"v1", False),
        (b"q2", b"v2", False),
    ]
    assert b.qualifier_value[0].timestamp == 5


@pytest.mark.parametrize(
    ("family", "qualifier", "ts", "kind", "expected"),
    [
        (None, None, None, None, None),
        (b"f", None, None, None, M.DELETE_FAMILY),
        (b"f", b"q", 9, None, M.DELETE_MULTIPLE_VERSIONS),
        (b"f", b"q", 9, CellType.DELETE, M.DELETE_ONE_VERSION),
        (b"f", None, 9, CellType.DELETE_FAMILY_VERSION, M.DELETE_FAMILY_VERSION),
    ],
)
def test_deletes_are_hbases_delete_types(family, qualifier, ts, kind, expected):
    m = delete_mutation(b"r", family, qualifier, ts, kind)
    assert m.mutate_type == M.DELETE and m.row == b"r"
    if expected is None:
        assert not m.column_value  # the whole row
        return
    qv = m.column_value[0].qualifier_value[0]
    assert qv.delete_type == expected and (qv.timestamp if qv.HasField("timestamp") else None) == ts
    if expected in (M.DELETE_ONE_VERSION, M.DELETE_MULTIPLE_VERSIONS):
        assert qv.qualifier == qualifier


@pytest.mark.parametrize("kind", [CellType.DELETE, CellType.DELETE_FAMILY_VERSION])
def test_one_version_deletes_need_a_timestamp(kind):
    with pytest.raises(HbrepError, match="needs an explicit timestamp"):
        delete_mutation(b"r", b"f", b"q", None, kind)


@given(st.binary(min_size=1, max_size=8), st.binary(max_size=4), st.integers(0, 1 << 62))
def test_every_cell_type_becomes_one_mutation_of_its_row(row, qualifier, ts):
    for kind in (CellType.PUT, CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY,
                 CellType.DELETE_FAMILY_VERSION):  # fmt: skip
        m = cell_mutation(Cell(row, b"f", qualifier, ts, int(kind), b"v"))
        assert m.row == row and len(m.column_value) == 1
    assert not cell_mutation(Cell(row, b"", b"", ts, int(CellType.DELETE_FAMILY))).column_value  # whole row


def test_scan_message_carries_every_option():
    scan = ScanOptions(b"a", b"z", (b"f",), versions=3, raw=True, time_range=(10, 20), limit=5).to_proto(b"b\x00")
    assert (scan.start_row, scan.stop_row, scan.max_versions) == (b"b\x00", b"z", 3)
    assert [c.family for c in scan.column] == [b"f"]
    assert [(a.name, a.value) for a in scan.attribute] == [("_raw_", b"\xff")]  # Scan.setRaw
    assert (getattr(scan.time_range, "from"), scan.time_range.to) == (10, 20)
    assert closest_row_after(b"row") == b"row\x00" and closest_row_after(b"row") > b"row"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("org.apache.hadoop.hbase.NotServingRegionException", RegionNotHere),
        ("org.apache.hadoop.hbase.exceptions.RegionMovedException", RegionNotHere),
        ("org.apache.hadoop.hbase.exceptions.RegionOpeningException", RegionNotHere),
        ("org.apache.hadoop.hbase.UnknownScannerException", ScannerGone),
        ("org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException", ScannerGone),
        ("org.apache.hadoop.hbase.RegionTooBusyException", ServerBusy),
        ("org.apache.hadoop.hbase.TableNotFoundException", UnknownTable),
        ("org.apache.hadoop.hbase.DoNotRetryIOException", HBaseCallError),
    ],
)
def test_exceptions_are_sorted_as_hbases_client_does(name, kind):
    assert isinstance(exception_error(name, f"{name}: region x", "h:1", "t1"), kind)


def test_a_missing_family_is_named():
    text = ("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family zz does not exist in "
            "region t1,,1.abc. in table 't1', {NAME => 'a'}")  # fmt: skip
    error = exception_error("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException", text, "h:1", "t1")
    assert isinstance(error, UnknownFamily) and str(error) == "table t1 has no column family 'zz'"
    multi = action_error("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException",
                         b"\n\x07" + text.encode() + b"\n\tat x", "h:1", "t1")  # fmt: skip
    assert str(multi) == "table t1 has no column family 'zz'"


def test_backoff_is_hbases():
    policy = RetryPolicy(pause_ms=100, tries=16)
    assert [policy.pause_s(i) for i in range(4)] == [0.1, 0.2, 0.3, 0.5]
    assert policy.pause_s(50) == 20.0


def test_repair_advice_names_the_major_compact_command():
    after = RepairPlan("t1", "t1", {}, cells_to_put=3)
    report = RepairReport("p1", "t1", [], True, False, False, after, after=after, peer_key="zk:2181:/hbase",
                          peer_table="t1peer")  # fmt: skip
    assert "hbrep --cluster zk:2181:/hbase major_compact t1peer" in report.why_remaining()
