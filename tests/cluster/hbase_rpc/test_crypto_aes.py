"""HBase's CryptoAES wrap (``replication/cluster/hbase_rpc/crypto_aes.py``): both ends built from one server's
CryptoCipherMeta as HBase builds them (the client's in/out are the server's out/in); what one wraps the other
unwraps, in order, and an altered or replayed packet is refused. Against a real HBase: tests/secure/
test_hbase_rpc_kerberos.py::test_privacy_with_aes_wraps_the_calls_with_hbases_crypto_aes."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.cluster.hbase_rpc.crypto_aes import CryptoAes
from replication.cluster.hbase_rpc.sasl import SaslFrameError
from replication.proto import RPC_pb2


def _meta(in_key: bytes, out_key: bytes, in_iv: bytes, out_iv: bytes, transformation="AES/CTR/NoPadding"):
    return RPC_pb2.CryptoCipherMeta(
        transformation=transformation, inKey=in_key, outKey=out_key, inIv=in_iv, outIv=out_iv
    )


def _pair() -> tuple[CryptoAes, CryptoAes]:
    """(client, server): the server's keys as setupCryptoCipher makes them, the client's meta swapped."""
    in_key, out_key, in_iv, out_iv = (os.urandom(16) for _ in range(4))
    server = CryptoAes(_meta(in_key, out_key, in_iv, out_iv))
    client = CryptoAes(_meta(out_key, in_key, out_iv, in_iv))
    return client, server


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=8))
def test_a_packet_wrapped_on_one_side_unwraps_on_the_other(messages):
    client, server = _pair()
    for message in messages:
        packet = client.wrap(message)
        assert len(packet) == len(message) + 14  # 10 bytes of MAC, 4 of sequence number
        assert server.unwrap(packet) == message
        assert client.unwrap(server.wrap(message[::-1])) == message[::-1]


def test_an_altered_or_replayed_packet_is_refused():
    client, server = _pair()
    first = client.wrap(b"call one")
    altered = bytes([first[0] ^ 1]) + first[1:]
    with pytest.raises(SaslFrameError, match="MAC"):
        server.unwrap(altered)
    client, server = _pair()
    first = client.wrap(b"call one")
    client.wrap(b"call two")
    assert server.unwrap(first) == b"call one"
    with pytest.raises(SaslFrameError):
        server.unwrap(first)  # the keystream has moved on: a replay no longer decrypts to its MAC
    client, server = _pair()
    with pytest.raises(SaslFrameError, match="too short"):
        server.unwrap(b"\0" * 5)


def test_only_aes_ctr_is_taken():
    with pytest.raises(SaslFrameError, match="AES/CTR"):
        CryptoAes(_meta(b"k" * 16, b"k" * 16, b"i" * 16, b"i" * 16, transformation="AES/CBC/PKCS5Padding"))
