"""ReplicateWALEntry's bytes with the cell block outside protobuf: the same bytes both ways as protobuf's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wal.wal_strategies import entries

from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC, KEY_VALUE_CODEC_WITH_TAGS
from replication.cluster.replicate_wire import MalformedRequest, parse_request, serialize_request
from replication.cluster.sink_client import build_request
from replication.proto import Admin_pb2
from replication.wal.cell_codec import encode_cells

CLUSTER = "7f3c1a2e-0000-4000-8000-000000000001"


def _shipped(batch):
    return [(e.key, len(e.cells), encode_cells(e.cells)) for e in batch]


@settings(max_examples=200, deadline=None)
@given(st.lists(entries, max_size=5), st.sampled_from([KEY_VALUE_CODEC_WITH_TAGS, KEY_VALUE_CODEC]))
def test_the_bytes_are_protobufs_own_and_parse_back(batch, codec):
    shipped = _shipped(batch)
    data = serialize_request(shipped, CLUSTER, codec)
    expected = build_request(shipped, CLUSTER, codec)
    assert data == expected.SerializeToString()
    request, block = parse_request(data)
    assert isinstance(block, memoryview)  # read in place, not copied
    assert bytes(block) == expected.cell_block
    expected.ClearField("cell_block")
    assert request == expected


def test_a_block_that_is_not_the_last_field_is_read_by_protobuf():
    """Another encoder may write the fields in another order: the whole message is parsed then."""
    shipped = _shipped([])
    head = build_request(shipped, CLUSTER).SerializeToString()
    late = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId="late").SerializeToString()
    data = Admin_pb2.ReplicateWALEntryRequest(cell_block=b"cells").SerializeToString() + late
    request, block = parse_request(data)
    assert block == b"cells" and request.replicationClusterId == "late"
    assert parse_request(head)[1] == b""


@pytest.mark.parametrize("data", [b"\xa2\x06\x05abc", b"\x0a\x7f", b"\xff" * 11, b"\x0f"])
def test_bytes_that_are_not_a_request_are_one_error(data):
    with pytest.raises(MalformedRequest, match="does not parse"):
        parse_request(data)
