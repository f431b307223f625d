"""The server side of HBase's RPC bytes: request frames decoded, response frames encoded, preambles
checked, and any bytes at all either decoded or refused with one FrameError (hypothesis)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replication.cluster.errors import (
    NoSuchColumnFamilyOnPeer,
    RegionServerAborted,
    SinkError,
    SinkUnavailable,
    TableNotFoundOnPeer,
)
from replication.cluster.hbase_rpc.framing import (
    FrameError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from replication.cluster.hbase_rpc.preamble import BadPreamble, parse_preamble, preamble
from replication.cluster.hbase_rpc.remote_errors import exception_response, remote_error
from replication.proto import Admin_pb2
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.wal.key_codec import key_to_pb
from replication.wal.model import WALKey


def test_a_request_the_client_encodes_is_what_the_server_decodes():
    param = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId="c")
    key = WALKey(b"0" * 32, b"t", 7, 1_700_000_000_000, {b"f": 1}, [])
    param.entry.add(associated_cell_count=2).key.CopyFrom(key_to_pb(key, 2))
    frame = encode_request(9, "ReplicateWALEntry", param, b"CELLBLOCK", timeout_ms=500)
    request = decode_request(frame[4:])
    assert (request.call_id, request.method, request.cell_block) == (9, "ReplicateWALEntry", b"CELLBLOCK")
    assert Admin_pb2.ReplicateWALEntryRequest.FromString(request.message) == param
    assert request.header.timeout == 500


def test_a_cell_block_shorter_or_longer_than_its_meta_is_refused():
    frame = encode_request(1, "ReplicateWALEntry", Admin_pb2.ReplicateWALEntryRequest(), b"12345")[4:]
    with pytest.raises(FrameError, match="cell block is 4 bytes, its header says 5"):
        decode_request(frame[:-1])
    with pytest.raises(FrameError, match="cell block is 6 bytes, its header says 5"):
        decode_request(frame + b"x")


def test_responses_the_server_encodes_are_what_the_client_decodes():
    ok = encode_response(3, Admin_pb2.ReplicateWALEntryResponse())
    (length,) = struct.unpack(">i", ok[:4])
    assert length == len(ok) - 4
    response = decode_response(ok[4:])
    assert response.call_id == 3 and response.exception is None and response.message == b""
    failed = decode_response(encode_response(4, exception=exception_response(UnknownTable("table t gone"), "h", 1))[4:])
    assert failed.call_id == 4
    assert failed.exception.exception_class_name == "org.apache.hadoop.hbase.TableNotFoundException"
    assert failed.exception.stack_trace.startswith("org.apache.hadoop.hbase.TableNotFoundException: table t gone\n")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (UnknownTable("table t does not exist"), TableNotFoundOnPeer),
        (UnknownFamily("column family t:zz does not exist"), NoSuchColumnFamilyOnPeer),
        (RegionServerAborted("stopping"), SinkUnavailable),
        (ValueError("boom"), SinkError),
    ],
)
def test_the_server_errors_map_back_to_the_same_sink_errors_on_hbreps_client(error, kind):
    back = remote_error(exception_response(error, "h", 1), "h:1", ["t"], [("t", "zz")])
    assert type(back) is kind


def test_preambles():
    assert parse_preamble(preamble()) == 80
    assert parse_preamble(preamble(81)) == 81  # KERBEROS: the SASL exchange follows (gssapi_server.py)
    for bad, said in ((b"HBas\x01\x50", "version 1"), (b"HBas\x00\x52", "code 82"), (b"PRI * ", "not an HBase")):
        with pytest.raises(BadPreamble, match=said):
            parse_preamble(bad)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_frame_error(data):
    try:
        request = decode_request(data)
    except FrameError:
        return
    assert len(request.cell_block) == (request.header.cell_block_meta.length if request.header.request_param else 0)
