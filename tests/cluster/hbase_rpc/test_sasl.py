"""The bytes of HBase's SASL exchange and GSSAPI security layer (replication/cluster/hbase_rpc/sasl.py) and the
Kerberos settings of hbrep's HBase RPC client (rpc_kerberos.py); the exchange itself runs against a real
Kerberized HBase 2.6 in tests/secure/test_hbase_rpc_kerberos.py."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.cluster.hbase_rpc.rpc_kerberos import rpc_kerberos, server_principal
from replication.cluster.hbase_rpc.sasl import (
    SWITCH_TO_SIMPLE_AUTH,
    SaslFrameError,
    SaslReply,
    SecurityLayerOffer,
    challenge_reply,
    choose_qop,
    client_token_length,
    decode_answer,
    decode_offer,
    decode_reply,
    error_reply,
    packet_length,
    sasl_qops,
    sasl_token,
    security_layer_answer,
    security_layer_offer,
    switch_to_simple_reply,
)
from replication.config import Config
from replication.errors import ConfigError


def success(token: bytes) -> bytes:
    return struct.pack(">ii", 0, len(token)) + token


def error(cls: str, message: str) -> bytes:
    a, b = cls.encode(), message.encode()
    return struct.pack(">ii", 1, len(a)) + a + struct.pack(">i", len(b)) + b


def test_replies_as_hbase_writes_them():
    assert decode_reply(success(b"tok") + b"next") == (SaslReply(challenge=b"tok"), 11)
    assert decode_reply(struct.pack(">ii", 0, SWITCH_TO_SIMPLE_AUTH)) == (SaslReply(switch_to_simple=True), 8)
    reply, used = decode_reply(error("javax.security.sasl.SaslException", "GSS initiate failed"))
    assert reply.failed and reply.error_class.endswith("SaslException") and reply.error == "GSS initiate failed"
    assert used == 4 + 4 + 33 + 4 + 19
    assert sasl_token(b"abc") == b"\0\0\0\3abc"


@given(st.binary(max_size=300), st.integers(0, 300))
def test_a_reply_cut_anywhere_asks_for_more_and_whole_decodes_the_same(token, cut):
    for whole in (success(token), error("C" * (len(token) % 7 + 1), token.hex() or "m")):
        part = whole[: min(cut, len(whole) - 1)]
        needed = decode_reply(part)
        assert isinstance(needed, int) and len(part) < needed <= len(whole)
        assert decode_reply(whole)[1] == len(whole)


@given(st.binary(max_size=64))
def test_any_bytes_decode_to_a_reply_a_need_or_one_frame_error(data):
    try:
        decoded = decode_reply(data)
    except SaslFrameError as exc:
        assert "SASL" in str(exc)
        return
    if isinstance(decoded, int):
        assert decoded > len(data)
    else:
        assert 0 < decoded[1] <= len(data)


def test_out_of_range_lengths_are_frame_errors():
    with pytest.raises(SaslFrameError, match="challenge length"):
        decode_reply(struct.pack(">ii", 0, 2**30))
    with pytest.raises(SaslFrameError, match="status 7"):
        decode_reply(struct.pack(">ii", 7, 0))
    with pytest.raises(SaslFrameError, match="out of range"):
        packet_length(struct.pack(">i", 0))
    assert packet_length(struct.pack(">i", 12)) == 12


@given(st.integers(0, 255), st.integers(0, 0xFFFFFF))
def test_the_security_layer_offer_is_one_word(bits, size):
    offer = decode_offer(struct.pack(">I", bits << 24 | size))
    assert offer.max_buffer == size
    assert set(offer.qops) == {q for q, bit in (("auth", 1), ("auth-int", 2), ("auth-conf", 4)) if bits & bit}


def test_the_strongest_wanted_layer_the_server_offers_is_chosen():
    offer = SecurityLayerOffer(("auth-conf", "auth-int", "auth"), 65536)
    assert choose_qop(("auth",), offer) == "auth"
    assert choose_qop(("auth", "auth-conf"), offer) == "auth-conf"
    assert choose_qop(("auth-int",), SecurityLayerOffer(("auth",), 0)) is None
    assert security_layer_answer("auth") == b"\x01\0\0\0"
    assert security_layer_answer("auth-conf", "u") == b"\x04\xff\xff\xffu"
    with pytest.raises(SaslFrameError):
        decode_offer(b"\x01\0\0")


def test_rpc_protection_takes_hbases_names():
    assert sasl_qops("authentication") == ("auth",)
    assert sasl_qops("privacy, integrity") == ("auth-conf", "auth-int")
    assert sasl_qops("") == ("auth",)
    with pytest.raises(ValueError, match="'secret' is not one of"):
        sasl_qops("secret")


def test_host_in_server_principals_is_replaced_as_hadoop_does():
    assert server_principal("hbase/_HOST@R.EXAMPLE", "RS1.Example.com") == "hbase/rs1.example.com@R.EXAMPLE"
    assert server_principal("hbase/fixed.host@R", "other") == "hbase/fixed.host@R"


def test_kerberos_settings_come_from_hbases_keys():
    assert rpc_kerberos(Config.load(env={})) is None
    keys = {
        "hbase.security.authentication": "kerberos",
        "hbase.master.kerberos.principal": "hbase/_HOST@R",
        "hbase.regionserver.kerberos.principal": "rs/_HOST@R",
        "hbase.unsafe.client.kerberos.hostname.disable.reversedns": "true",
    }
    settings = rpc_kerberos(Config.load(env={}, overrides=keys))
    assert settings is not None and settings.qops == ("auth",) and not settings.fallback_allowed
    assert settings.principal_for("MasterService", "M1") == ("hbase", "m1")
    assert settings.principal_for("ClientService", "rs9") == ("rs", "rs9")
    with_fallback = rpc_kerberos(
        Config.load(env={}, overrides={**keys, "hbase.ipc.client.fallback-to-simple-auth-allowed": "true"})
    )
    assert with_fallback is not None and with_fallback.fallback_allowed
    assert not settings.crypto_aes  # AES after the GSS exchange only when asked for, as in HBase
    with_aes = rpc_kerberos(Config.load(env={}, overrides={**keys, "hbase.rpc.crypto.encryption.aes.enabled": "true"}))
    assert with_aes is not None and with_aes.crypto_aes
    unset = rpc_kerberos(Config.load(env={}, overrides={"hbase.security.authentication": "kerberos"}))
    with pytest.raises(ConfigError, match=r"needs hbase\.regionserver\.kerberos\.principal"):
        unset.principal_for("AdminService", "h")
    with pytest.raises(ConfigError, match=r"hbase\.rpc\.protection"):
        Config.load(env={}, overrides={**keys, "hbase.rpc.protection": "secret"})


# -- the server's side (hbrep's HBase RPC listener): what it writes, the client side reads back ------------------
@given(st.binary(max_size=2048))
def test_a_challenge_the_listener_sends_decodes_as_the_client_reads_it(token):
    assert decode_reply(challenge_reply(token)) == (SaslReply(challenge=token), 8 + len(token))


@given(st.text(max_size=80), st.text(max_size=200))
def test_an_error_the_listener_sends_decodes_to_its_class_and_message(error_class, message):
    data = error_reply(error_class, message)
    assert decode_reply(data) == (SaslReply(error_class=error_class, error=message), len(data))


def test_the_switch_to_simple_decodes_as_hbases():
    assert decode_reply(switch_to_simple_reply()) == (SaslReply(switch_to_simple=True), 8)


@given(st.sets(st.sampled_from(["auth", "auth-int", "auth-conf"]), min_size=1), st.integers(0, 0xFFFFFF))
def test_the_listeners_offer_decodes_to_the_layers_it_named(qops, size):
    offer = decode_offer(security_layer_offer(tuple(qops), size))
    assert set(offer.qops) == qops and offer.max_buffer == size


@given(st.sampled_from(["auth", "auth-int", "auth-conf"]), st.text(max_size=40))
def test_the_clients_answer_decodes_to_its_one_layer_and_authorization_id(qop, authorization_id):
    answer = decode_answer(security_layer_answer(qop, authorization_id))
    assert (answer.qop, answer.authorization_id) == (qop, authorization_id)


@given(st.binary(max_size=12))
def test_any_answer_decodes_to_one_layer_or_one_frame_error(data):
    try:
        answer = decode_answer(data)
    except SaslFrameError as exc:
        assert "\n" not in str(exc)
    else:
        assert answer.qop in ("auth", "auth-int", "auth-conf")


def test_client_token_lengths_out_of_range_are_frame_errors():
    assert client_token_length(struct.pack(">i", 0)) == 0
    for bad in (-1, 1024 * 1024 + 1):
        with pytest.raises(SaslFrameError):
            client_token_length(struct.pack(">i", bad))
