"""The WALKey protobuf: HBase's field numbers on the wire, every field round-trips."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from wal_strategies import keys

from replication.wal.errors import CorruptWALError
from replication.wal.key_codec import decode_key, encode_key
from replication.wal.model import WALKey


def test_minimal_key_bytes_by_hand() -> None:
    key = WALKey(b"abc", b"t1", 300, 1)
    # 1:"abc" 2:"t1" 3:varint 300 (ac 02) 4:varint 1 7:varint 2 -- nonces/orig seq absent when 0.
    assert encode_key(key, 2) == bytes.fromhex("0a036162631202743118ac0220013802")
    assert decode_key(encode_key(key, 2)) == (key, 2)


def test_field_numbers_of_optional_fields() -> None:
    cid = uuid.UUID(int=(5 << 64) | 7)
    key = WALKey(
        b"r",
        b"t",
        1,
        2,
        {b"f": 1},
        [cid],
        nonce_group=9,
        nonce=-1,
        orig_sequence_number=4,
        extended_attributes={"a": b"b"},
    )
    data = encode_key(key, 0)
    assert bytes.fromhex("32050a01661001") in data  # 6: FamilyScope{1: "f", 2: GLOBAL}
    assert bytes.fromhex("420408071005") in data  # 8: UUID{1: least=7, 2: most=5}
    assert bytes.fromhex("4809") in data and bytes.fromhex("5804") in data  # 9 nonceGroup, 11 orig seq
    assert bytes.fromhex("50ffffffffffffffffff01") in data  # 10 nonce = -1 as uint64
    assert bytes.fromhex("62060a0161120162") in data  # 12: Attribute{"a": "b"}
    assert decode_key(data) == (key, 0)


@settings(max_examples=80, deadline=None)
@given(keys)
def test_round_trip(key: WALKey) -> None:
    decoded, count = decode_key(encode_key(key, 17))
    assert count == 17
    assert decoded == key


def test_garbage_and_missing_fields_raise() -> None:
    with pytest.raises(CorruptWALError, match="required"):
        decode_key(bytes.fromhex("0a0161"))  # only the region name
    with pytest.raises(CorruptWALError, match="garbled"):
        decode_key(b"\x0a\x10ab")  # length past the end
