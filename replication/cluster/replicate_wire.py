"""A ReplicateWALEntryRequest's bytes with its cell block (field 100) kept out of the protobuf runtime.

The cell block is most of a request (up to a batch, 64 MB by default). Through protobuf it was copied four
times: joined, set on the message, serialized (the source); parsed, and copied again by each read of the
field (the sink): 1.9 s of CPU per GB shipped on the source and 0.9 s on the sink (microbench, 1 KB cells).
Here the source writes the message without the block and appends the field itself, and the sink parses the
message up to the field and reads the block as a view of the bytes it received. The bytes on the wire are
exactly what ``SerializeToString`` gives (the field comes last, as protobuf writes fields in number order);
any other layout is parsed by protobuf as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import DecodeError

from replication.cluster.hbase_rpc.cell_block import cell_block_parts
from replication.errors import HbrepError
from replication.proto import Admin_pb2
from replication.wal.key_codec import key_to_pb
from replication.wal.model import WALKey
from replication.wal.varint import decode_varint, encode_varint

SERVICE = "hbase.pb.AdminService"
REPLICATE_WAL_ENTRY_METHOD = f"/{SERVICE}/ReplicateWALEntry"
CELL_BLOCK_FIELD = 100  # Admin.proto: optional bytes cell_block = 100
_CELL_BLOCK_TAG = encode_varint(CELL_BLOCK_FIELD << 3 | 2)  # length-delimited

Entries = Sequence[tuple[WALKey, int, bytes | memoryview]]


class MalformedRequest(HbrepError):
    """The bytes of a ReplicateWALEntry request are not a ReplicateWALEntryRequest."""


def serialize_request(
    entries: Entries, replication_cluster_id: str, codec_class: str, source_hfile_dirs: tuple[str, str] | None = None
) -> bytes:
    """The request's bytes (as ``build_request(...).SerializeToString()``), with one copy of the cells: keys
    as WALEntry messages, then the cells of every entry, in order, as ``codec_class`` writes them;
    ``source_hfile_dirs`` = (sourceBaseNamespaceDirPath, sourceHFileArchiveDirPath) when given."""
    message = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId=replication_cluster_id)
    if source_hfile_dirs is not None:
        message.sourceBaseNamespaceDirPath, message.sourceHFileArchiveDirPath = source_hfile_dirs
    for key, count, _cells in entries:
        message.entry.add(associated_cell_count=count).key.CopyFrom(key_to_pb(key, count))
    blocks = cell_block_parts(((count, cells) for _key, count, cells in entries), codec_class)
    length = sum(map(len, blocks))
    return b"".join([message.SerializeToString(), _CELL_BLOCK_TAG, encode_varint(length), *blocks])


def parse_request(data: bytes) -> tuple[Admin_pb2.ReplicateWALEntryRequest, bytes | memoryview]:
    """The request and its cell block: a view of ``data`` when the block is its last field (how protobuf and
    :func:`serialize_request` write it), else the field as protobuf reads it. MalformedRequest when ``data``
    is not a request."""
    block = _last_field_span(data)
    try:
        if block is None:
            message = Admin_pb2.ReplicateWALEntryRequest.FromString(data)
            return message, message.cell_block
        tag_start, start = block
        view = memoryview(data)
        return Admin_pb2.ReplicateWALEntryRequest.FromString(view[:tag_start]), view[start:]
    except DecodeError as exc:
        raise MalformedRequest(f"ReplicateWALEntry request of {len(data)} bytes does not parse: {exc}") from None


def _last_field_span(data: bytes) -> tuple[int, int] | None:
    """(offset of its tag, offset of its bytes) of the cell block when it is the request's last field and
    runs to the end of ``data``; None otherwise (or when the top-level fields do not walk cleanly)."""
    n = len(data)
    pos = 0
    found = None
    try:
        while pos < n:
            tag_start = pos
            tag = decode_varint(data, pos)
            if tag is None:
                return None
            field, pos = tag
            wire = field & 7
            if wire == 2:
                length = decode_varint(data, pos)
                if length is None:
                    return None
                size, pos = length
                found = (tag_start, pos) if field >> 3 == CELL_BLOCK_FIELD else None
                pos += size
            elif wire == 0:
                value = decode_varint(data, pos)
                if value is None:
                    return None
                pos = value[1]
                found = None
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
                found = None
            else:
                return None
    except ValueError:  # a varint over 10 bytes
        return None
    return found if pos == n else None
