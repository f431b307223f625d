"""HBase RPC bytes hbrep writes and reads, checked against the layout in HBase's RPC.proto (and the bytes a
real HBase 2.6.1 region server sent, in tests/interop/test_ship_to_hbase.py)."""

from __future__ import annotations

import struct

import pytest

from replication.cluster.errors import (
    NoSuchColumnFamilyOnPeer,
    SinkAuthError,
    SinkError,
    SinkUnavailable,
    TableNotFoundOnPeer,
)
from replication.cluster.hbase_rpc.cell_block import (
    KEY_VALUE_CODEC,
    KEY_VALUE_CODEC_WITH_TAGS,
    UnsupportedCodec,
    build_cell_block,
)
from replication.cluster.hbase_rpc.framing import FrameError, decode_response, delimited, encode_request
from replication.cluster.hbase_rpc.preamble import connection_start
from replication.cluster.hbase_rpc.remote_errors import remote_error
from replication.proto import Admin_pb2, RPC_pb2
from replication.wal.cell_codec import decode_cells, encode_cells
from replication.wal.model import Cell, CellType
from replication.wal.varint import decode_varint


def test_connection_start_is_preamble_then_int32_framed_header():
    data = connection_start("AdminService", KEY_VALUE_CODEC_WITH_TAGS, "alice")
    assert data[:6] == b"HBas\x00\x50"  # magic, version 0, SIMPLE (80)
    (length,) = struct.unpack(">i", data[6:10])
    assert len(data) == 10 + length
    header = RPC_pb2.ConnectionHeader.FromString(data[10:])
    assert (header.service_name, header.cell_block_codec_class, header.user_info.effective_user) == (
        "AdminService",
        KEY_VALUE_CODEC_WITH_TAGS,
        "alice",
    )
    assert not header.HasField("cell_block_compressor_class")


def test_request_frame_is_length_delimited_header_param_and_cell_block():
    param = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId="c")
    frame = encode_request(7, "ReplicateWALEntry", param, b"CELLS", timeout_ms=1500)
    (length,) = struct.unpack(">i", frame[:4])
    body = frame[4:]
    assert len(body) == length
    size, pos = decode_varint(body, 0)
    header = RPC_pb2.RequestHeader.FromString(body[pos : pos + size])
    assert (header.call_id, header.method_name, header.request_param) == (7, "ReplicateWALEntry", True)
    assert (header.cell_block_meta.length, header.timeout) == (5, 1500)
    size, pos2 = decode_varint(body, pos + size)
    assert Admin_pb2.ReplicateWALEntryRequest.FromString(body[pos2 : pos2 + size]) == param
    assert body[pos2 + size :] == b"CELLS"


def test_response_frames_decode_and_truncation_is_refused():
    ok = delimited(RPC_pb2.ResponseHeader(call_id=3)) + delimited(Admin_pb2.ReplicateWALEntryResponse())
    assert decode_response(ok).call_id == 3 and decode_response(ok).exception is None
    failed = delimited(
        RPC_pb2.ResponseHeader(
            call_id=0xFFFFFFFF, exception=RPC_pb2.ExceptionResponse(exception_class_name="x.FatalConnectionException")
        )
    )
    assert decode_response(failed).exception.exception_class_name == "x.FatalConnectionException"
    with pytest.raises(FrameError):
        decode_response(ok[:2])  # ends inside the ResponseHeader


def test_cell_blocks_keep_tags_with_tags_codec_and_drop_them_with_plain_codec():
    cells = [
        Cell(b"r", b"f", b"q", 5, int(CellType.PUT), b"v", tags=b"\x00\x03\x08ab"),
        Cell(b"r", b"f", b"q2", 6, int(CellType.DELETE_COLUMN), b""),
    ]
    framed = encode_cells(cells)
    assert build_cell_block([(2, framed)], KEY_VALUE_CODEC_WITH_TAGS) == framed
    plain, _ = decode_cells(build_cell_block([(2, framed)], KEY_VALUE_CODEC), 2)
    assert [c.tags for c in plain] == [b"", b""]
    assert [(c.row, c.qualifier, c.timestamp, c.type, c.value) for c in plain] == [
        (c.row, c.qualifier, c.timestamp, c.type, c.value) for c in cells
    ]
    with pytest.raises(UnsupportedCodec, match="CellCodec"):
        build_cell_block([(2, framed)], "org.apache.hadoop.hbase.codec.CellCodec")


def _exc(name: str, trace: str) -> RPC_pb2.ExceptionResponse:
    return RPC_pb2.ExceptionResponse(exception_class_name=name, stack_trace=trace)


@pytest.mark.parametrize(
    ("name", "trace", "kind"),
    [
        (
            "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
            "...: Server s stopping",
            SinkUnavailable,
        ),
        ("org.apache.hadoop.hbase.ipc.ServerNotRunningYetException", "...: not running yet", SinkUnavailable),
        ("org.apache.hadoop.hbase.exceptions.RegionMovedException", "...: Region moved to: s", SinkError),
        ("org.apache.hadoop.hbase.NotServingRegionException", "...: t,,1.abc is not online", SinkError),
        ("org.apache.hadoop.hbase.security.AccessDeniedException", "...: denied", SinkAuthError),
    ],
)
def test_hbase_exceptions_map_to_hbreps_retry_kinds(name, trace, kind):
    error = remote_error(_exc(name, f"{name}{trace}"), "h,1,2")
    assert type(error) is kind and "h,1,2" in str(error)


def test_missing_table_and_family_name_what_is_missing():
    # the traces a real HBase 2.6.1 sink returned (first lines)
    missing = remote_error(
        _exc(
            "org.apache.hadoop.hbase.TableNotFoundException", "org.apache.hadoop.hbase.TableNotFoundException: 'nosuch'"
        ),
        "h,1,2",
        tables=["t1", "nosuch"],
    )
    assert isinstance(missing, TableNotFoundOnPeer) and missing.tables == ["nosuch"]
    family = remote_error(
        _exc(
            "org.apache.hadoop.hbase.client.RetriesExhaustedException",
            "org.apache.hadoop.hbase.client.RetriesExhaustedException: Failed after attempts=1, exceptions:\n"
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family zz does not exist "
            "in region try1,,1.abc. in table 'try1'",
        ),
        "h,1,2",
        tables=["try1"],
        families=[("try1", "a"), ("try1", "zz")],
    )
    assert isinstance(family, NoSuchColumnFamilyOnPeer) and family.families == [("try1", "zz")]
