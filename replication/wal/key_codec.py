"""The WALKey protobuf (spec §1.3): WALKeyImpl.getBuilder on write, readFieldsFromPb on read."""

from __future__ import annotations

import uuid

from google.protobuf.message import DecodeError

from replication.proto import WAL_pb2
from replication.wal.errors import CorruptWALError
from replication.wal.model import WALKey

_MASK64 = (1 << 64) - 1


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def key_to_pb(key: WALKey, following_kv_count: int) -> WAL_pb2.WALKey:
    """The protobuf message for ``key``; nonces only when != 0 and orig seq only when > 0, as HBase does."""
    pb = WAL_pb2.WALKey(
        encoded_region_name=key.encoded_region_name,
        table_name=key.table_name,
        log_sequence_number=key.log_sequence_number,
        write_time=key.write_time,
        following_kv_count=following_kv_count,
    )
    for family, scope in key.scopes.items():
        pb.scopes.add(family=family, scope_type=scope)
    for cid in key.cluster_ids:
        pb.cluster_ids.add(least_sig_bits=cid.int & _MASK64, most_sig_bits=cid.int >> 64)
    if key.nonce_group:
        pb.nonceGroup = key.nonce_group & _MASK64
    if key.nonce:
        pb.nonce = key.nonce & _MASK64
    if key.orig_sequence_number > 0:
        pb.orig_sequence_number = key.orig_sequence_number
    for name, value in key.extended_attributes.items():
        pb.extended_attributes.add(key=name, value=value)
    return pb


def encode_key(key: WALKey, following_kv_count: int) -> bytes:
    """The WALKey protobuf bytes (not length-delimited) announcing ``following_kv_count`` cells."""
    return key_to_pb(key, following_kv_count).SerializeToString()


def key_from_pb(pb: WAL_pb2.WALKey) -> WALKey:
    """A WALKey from its protobuf. The deprecated ``cluster_id`` (field 5) is ignored, as in HBase 2.x."""
    # Hot on the ship path: touch repeated fields only when present (each element access costs).
    pb_scopes = pb.scopes
    if not pb_scopes:
        scopes = {}
    elif len(pb_scopes) == 1:
        scope = pb_scopes[0]
        scopes = {scope.family: scope.scope_type}
    else:
        scopes = {s.family: s.scope_type for s in pb_scopes}
    pb_ids = pb.cluster_ids
    nonce_group = pb.nonceGroup
    nonce = pb.nonce
    pb_attrs = pb.extended_attributes
    return WALKey(
        pb.encoded_region_name,
        pb.table_name,
        pb.log_sequence_number,
        pb.write_time,
        scopes,
        [uuid.UUID(int=(c.most_sig_bits << 64) | c.least_sig_bits) for c in pb_ids] if pb_ids else [],
        _signed64(nonce_group) if nonce_group else 0,
        _signed64(nonce) if nonce else 0,
        pb.orig_sequence_number,
        {a.key: a.value for a in pb_attrs} if pb_attrs else {},
    )


def decode_key(data: bytes | memoryview) -> tuple[WALKey, int]:
    """Parse WALKey protobuf bytes; returns the key and its following_kv_count (0 when absent).

    Raises CorruptWALError when the bytes do not parse or a required field is missing.
    """
    pb = WAL_pb2.WALKey()
    try:
        pb.ParseFromString(data)
    except DecodeError as exc:
        raise CorruptWALError(f"garbled WALKey protobuf: {exc}") from None
    if not pb.IsInitialized():
        raise CorruptWALError(f"WALKey protobuf misses required fields: {', '.join(pb.FindInitializationErrors())}")
    return key_from_pb(pb), pb.following_kv_count


# Tags of the WALKey fields that may follow write_time (field 4): 5, 6, 7, 8, 9, 10, 11, 12.
_TAGS_AFTER_WRITE_TIME = frozenset((0x2A, 0x32, 0x38, 0x42, 0x48, 0x50, 0x58, 0x62))


class KeyDecoder:
    """Decodes the WALKeys of one file, fast when consecutive keys differ only in seq id and write time.

    Entries of one region share region, table, scopes, cluster ids and attributes, so the key bytes
    without fields 3 and 4 are used as a cache key for the rest of the decoded key. Every key is still
    parsed by protobuf (so garbage is always detected); only the conversion to WALKey is cached. Keys
    not laid out as HBase (and protobuf) write them take the plain path.
    """

    MAX_CACHED = 4096

    def __init__(self) -> None:
        self._pb = WAL_pb2.WALKey()
        self._cache: dict[bytes, tuple[WALKey, int]] = {}

    def decode(self, buf: bytes, view: memoryview, start: int, end: int) -> tuple[WALKey, int]:
        """The key in ``buf[start:end]`` and its following_kv_count; CorruptWALError if it does not parse."""
        pb = self._pb
        kb = buf[start:end]  # parsing bytes is cheaper than parsing a memoryview
        try:
            pb.ParseFromString(kb)  # clears the message first
        except DecodeError as exc:
            raise CorruptWALError(f"garbled WALKey: {exc}") from None
        seq = pb.log_sequence_number
        write_time = pb.write_time
        # Layout check: 0a <len> region 12 <len> table 18 <seq> 20 <write_time> [field >= 5 ...].
        cache_key = None
        size = end - start
        if size > 2 and kb[0] == 0x0A and kb[1] < 0x80:
            t = 2 + kb[1]
            if t + 1 < size and kb[t] == 0x12 and kb[t + 1] < 0x80:
                v = t + 2 + kb[t + 1]
                w = v + 1 + ((seq.bit_length() + 6) // 7 or 1)
                s = w + 1 + ((write_time.bit_length() + 6) // 7 or 1)
                if (
                    w < size
                    and kb[v] == 0x18
                    and kb[w] == 0x20
                    and (s == size or (s < size and kb[s] in _TAGS_AFTER_WRITE_TIME))
                ):
                    cache_key = kb[:v] + kb[s:]
                    hit = self._cache.get(cache_key)
                    if hit is not None:
                        k, count = hit
                        return (
                            WALKey(
                                k.encoded_region_name,
                                k.table_name,
                                seq,
                                write_time,
                                dict(k.scopes) if k.scopes else {},
                                list(k.cluster_ids) if k.cluster_ids else [],
                                k.nonce_group,
                                k.nonce,
                                k.orig_sequence_number,
                                dict(k.extended_attributes) if k.extended_attributes else {},
                            ),
                            count,
                        )
        if not pb.IsInitialized():
            raise CorruptWALError(f"WALKey misses required fields: {', '.join(pb.FindInitializationErrors())}")
        key = key_from_pb(pb)
        count = pb.following_kv_count
        if cache_key is not None:
            if len(self._cache) >= self.MAX_CACHED:
                self._cache.clear()
            template = key_from_pb(pb)  # a private copy: callers may mutate the key they get
            self._cache[cache_key] = (template, count)
        return key, count
