"""Znode payloads as HBase writes them: ``PBUF`` + protobuf (spec §3.1, §3.2), plus the legacy readers.

Writers always produce the HBase 2.x bytes. Readers also accept what 0.94 wrote (plain strings), and
raise :class:`BadZNodeData` naming the znode for anything else, so no value is guessed silently.

Every reader first removes the metadata HBase's ``RecoverableZooKeeper`` puts in front of what it
creates or sets through its own create/setData (``ZKMetadata.appendMetaData``: byte 0xFF, int32 id
length, the id = the writer's identifier such as ``master:16000`` + an 8-byte salt), as HBase's own
``getData`` does (``ZKMetadata.removeMetaData``). The master writes ``hbaseid`` that way; znodes
written by ZK multis (peers, queues) have none.
"""

from __future__ import annotations

import uuid

from google.protobuf.message import DecodeError

from replication.errors import HbrepError
from replication.proto import ClusterId_pb2, Replication_pb2, ZooKeeper_pb2

PB_MAGIC = b"PBUF"  # ProtobufMagic.PB_MAGIC
PEER_STATE_ENABLED = PB_MAGIC + Replication_pb2.ReplicationState(state=0).SerializeToString()
PEER_STATE_DISABLED = PB_MAGIC + Replication_pb2.ReplicationState(state=1).SerializeToString()


class BadZNodeData(HbrepError):
    """A znode's data is not in any format HBase (2.x or 0.94) writes."""


ZK_METADATA_MAGIC = 0xFF  # RecoverableZooKeeper.MAGIC


def strip_metadata(data: bytes | None) -> bytes | None:
    """``RecoverableZooKeeper.removeMetaData``: drop the ``0xFF, int32 length, identifier`` prefix.

    Every non-empty value HBase writes through RecoverableZooKeeper (peer configs and states, WAL
    positions, hbaseid, locks; found against a real HBase 2.6, tests/interop) starts with it: the magic
    byte, a 4-byte big-endian length, then that many bytes naming the writer (``master:16000`` and a
    random id). HBase strips it on every read, and so does every reader here. hbrep writes values
    without it, which HBase reads the same way (data not starting with 0xFF is taken as it is).
    Data that starts with 0xFF but whose length does not fit is not such a prefix: it is returned as
    it is, for the caller's parser to name what is wrong with it (HBase would fail on it).
    """
    if not data or data[0] != ZK_METADATA_MAGIC or len(data) < 5:
        return data
    id_length = int.from_bytes(data[1:5], "big", signed=True)
    if id_length < 0 or 5 + id_length > len(data):
        return data
    return data[5 + id_length :]


def _parse(message_cls, data: bytes, what: str):
    message = message_cls()
    try:
        message.ParseFromString(data[len(PB_MAGIC) :])
        if not message.IsInitialized():
            raise DecodeError("required fields missing")
    except DecodeError as exc:
        raise BadZNodeData(f"{what}: bad {message_cls.__name__} protobuf after PBUF ({exc})") from None
    return message


def parse_server_znode(
    data: bytes | None, message_cls, server_field: str, what: str, whose: str
) -> tuple[str, int, int]:
    """(host, port, start code) of the ServerName in field ``server_field`` of a ``PBUF`` + ``message_cls`` znode
    value (HBase's ``master`` and ``meta-region-server`` znodes; ZooKeeper's metadata prefix stripped).
    BadZNodeData naming ``what`` for anything else; ``whose`` names the server in that message."""
    data = strip_metadata(data) or b""
    if not data.startswith(PB_MAGIC):
        raise BadZNodeData(f"{what}: not PBUF + {message_cls.__name__} (HBase 2.x writes that)")
    server = getattr(_parse(message_cls, data, what), server_field)
    if not server.host_name or not 0 < server.port < 65536:
        raise BadZNodeData(f"{what}: {whose} ServerName has no host or port")
    return server.host_name, server.port, server.start_code


def position_to_bytes(position: int) -> bytes:
    """``ZKUtil.positionToByteArray``: ``PBUF`` + ReplicationHLogPosition{position}."""
    if position < 0:
        raise ValueError(f"negative WAL position {position}")
    return PB_MAGIC + ZooKeeper_pb2.ReplicationHLogPosition(position=position).SerializeToString()


def parse_position(data: bytes | None, what: str = "WAL position") -> int:
    """``ZKUtil.parseWALPositionFrom``: PBUF protobuf, else an 8-byte big-endian long, empty = 0.

    Also reads 0.94's ASCII decimal (HBase 2.x cannot; we do so that an upgraded 0.94 queue keeps its
    place). Anything else raises BadZNodeData naming ``what`` (HBase logs and restarts at 0 instead;
    we refuse to guess).
    """
    data = strip_metadata(data)
    if not data:
        return 0
    if data.startswith(PB_MAGIC):
        return _parse(ZooKeeper_pb2.ReplicationHLogPosition, data, what).position
    if len(data) == 8:
        value = int.from_bytes(data, "big", signed=True)
        if value < 0:  # HBase would seek to it and fail later; a negative offset is garbage
            raise BadZNodeData(f"{what}: negative position {value} (8-byte long)")
        return value
    if data.isdigit():
        return int(data)
    raise BadZNodeData(f"{what}: {len(data)} bytes that are neither PBUF, an 8-byte long nor a decimal")


def peer_state_to_bytes(enabled: bool) -> bytes:
    """``PBUF`` + ReplicationState{ENABLED=0 | DISABLED=1}."""
    return PEER_STATE_ENABLED if enabled else PEER_STATE_DISABLED


def parse_peer_state(data: bytes | None, what: str = "peer-state") -> bool:
    """True when enabled. Accepts the PBUF form and 0.94's ASCII ``ENABLED``/``DISABLED``."""
    data = strip_metadata(data)
    if data and data.startswith(PB_MAGIC):
        return _parse(Replication_pb2.ReplicationState, data, what).state == 0
    if data in (b"ENABLED", b"DISABLED"):
        return data == b"ENABLED"
    raise BadZNodeData(f"{what}: {data!r} is not a ReplicationState")


def lock_to_bytes(owner: str) -> bytes:
    """``PBUF`` + ReplicationLock{lock_owner}."""
    return PB_MAGIC + ZooKeeper_pb2.ReplicationLock(lock_owner=owner).SerializeToString()


def parse_lock(data: bytes | None, what: str = "lock") -> str:
    """The lock owner; 0.94 stored the raw RS name without the magic."""
    data = strip_metadata(data)
    if data and data.startswith(PB_MAGIC):
        return _parse(ZooKeeper_pb2.ReplicationLock, data, what).lock_owner
    return (data or b"").decode("utf-8", "replace")


def cluster_id_to_bytes(cluster_id: uuid.UUID) -> bytes:
    """``PBUF`` + ClusterId{cluster_id = the UUID as a string}."""
    return PB_MAGIC + ClusterId_pb2.ClusterId(cluster_id=str(cluster_id)).SerializeToString()


def parse_cluster_id(data: bytes | None, what: str = "hbaseid") -> uuid.UUID:
    """The cluster UUID from the PBUF form or the legacy raw string."""
    data = strip_metadata(data)
    text = _parse(ClusterId_pb2.ClusterId, data, what).cluster_id if data and data.startswith(PB_MAGIC) else None
    if text is None:
        text = (data or b"").decode("utf-8", "replace")
    if isinstance(text, bytes):  # a proto2 string field holding invalid UTF-8 comes back as bytes (fuzzing)
        text = text.decode("utf-8", "replace")
    try:
        return uuid.UUID(text)
    except ValueError:
        raise BadZNodeData(f"{what}: {text!r} is not a UUID") from None
