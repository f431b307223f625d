"""Kerberos (SASL GSSAPI) on the HBase RPC listener of hbrep's region servers (``gssapi_server.py``), with HBase's
server keys and an MIT KDC made for the module; hbrep's own HBase RPC client (``gssapi.py``) is the client here.
A real Kerberized HBase as the client: tests/secure/test_hbase_rpc_kerberos.py::
test_a_kerberized_hbase_replicates_into_a_kerberized_hbrep_cluster.

Each protection the listener offers is agreed and the call reaches the sink; AES replaces the GSS wrap when both
ask for it; a SIMPLE client, a client asking for a protection not offered, and a listener whose keytab has no key
for its principal are each refused with one line, and nothing reaches the sink."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from support import kerberos_environment

from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC_WITH_TAGS
from replication.cluster.hbase_rpc.connection import ConnectionFailed, RpcConnection
from replication.cluster.hbase_rpc.gssapi_server import listener_kerberos
from replication.cluster.hbase_rpc.preamble import ADMIN_SERVICE
from replication.cluster.hbase_rpc.rpc_kerberos import rpc_kerberos
from replication.cluster.hbase_rpc.server import REPLICATE_WAL_ENTRY, HBaseRpcServer
from replication.config import Config
from replication.devstack.kdc import MitKdc
from replication.errors import ConfigError
from replication.kerberos import KerberosError
from replication.proto import Admin_pb2

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kdc(tmp_path_factory) -> Iterator[MitKdc]:
    kdc = MitKdc(tmp_path_factory.mktemp("listener-kdc"))
    kdc.start()
    try:
        kdc.add_principal("hbase/127.0.0.1")
        kdc.add_principal("hbrep/127.0.0.1")
        kdc.add_principal("other/127.0.0.1")
        with kerberos_environment(kdc.krb5_conf):
            yield kdc
    finally:
        kdc.stop()


def _keytab(kdc: MitKdc, name: str) -> str:
    return str(kdc.keytab_dir / f"{name.replace('/', '_')}.keytab")


def _server_conf(kdc: MitKdc, **changes: str) -> Config:
    settings = {
        "hbase.security.authentication": "kerberos",
        "hbase.regionserver.kerberos.principal": f"hbase/_HOST@{kdc.realm}",
        "hbase.regionserver.keytab.file": _keytab(kdc, "hbase/127.0.0.1"),
        "hbase.rpc.protection": "privacy,integrity,authentication",
    }
    settings.update({key.replace("_", "."): value for key, value in changes.items()})
    return Config.load(env={}, overrides=settings)


def _listener(received: list, conf: Config) -> HBaseRpcServer:
    server = HBaseRpcServer(
        "127.0.0.1", 0, received.append, max_request=1 << 20, kerberos=listener_kerberos(conf, "127.0.0.1")
    )
    server.start()
    return server


def _client_conf(kdc: MitKdc | None, **changes: str) -> Config:
    settings = {"hbase.security.authentication": "simple"}
    if kdc is not None:
        settings = {
            "hbase.security.authentication": "kerberos",
            "hbase.client.kerberos.principal": f"hbrep/127.0.0.1@{kdc.realm}",
            "hbase.client.keytab.file": _keytab(kdc, "hbrep/127.0.0.1"),
            "hbase.regionserver.kerberos.principal": f"hbase/_HOST@{kdc.realm}",
            "hbase.unsafe.client.kerberos.hostname.disable.reversedns": "true",
        }
    settings.update({key.replace("_", "."): value for key, value in changes.items()})
    return Config.load(env={}, overrides=settings)


def _call(server: HBaseRpcServer, conf: Config, cluster_id: str = "c1") -> None:
    connection = RpcConnection(
        "127.0.0.1", server.port, ADMIN_SERVICE, KEY_VALUE_CODEC_WITH_TAGS, "hbrep", 10.0, kerberos=rpc_kerberos(conf)
    )
    try:
        connection.call(
            REPLICATE_WAL_ENTRY,
            Admin_pb2.ReplicateWALEntryRequest(replicationClusterId=cluster_id),
            Admin_pb2.ReplicateWALEntryResponse,
        )
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("protection", "qop"), [("authentication", "auth"), ("integrity", "auth-int"), ("privacy", "auth-conf")]
)
def test_each_protection_the_listener_offers_is_agreed_and_the_call_arrives(kdc, protection, qop, caplog):
    received: list = []
    server = _listener(received, _server_conf(kdc))
    try:
        with caplog.at_level(logging.INFO, logger="replication.cluster.hbase_rpc.server"):
            _call(server, _client_conf(kdc, hbase_rpc_protection=protection), cluster_id=protection)
            _call(server, _client_conf(kdc, hbase_rpc_protection=protection), cluster_id=protection + "-again")
    finally:
        server.stop()
    assert [r.replicationClusterId for r in received] == [protection, protection + "-again"]
    said = [r.getMessage() for r in caplog.records if "authenticated as" in r.getMessage()]
    assert len(said) == 2 and all(f"hbrep/127.0.0.1@{kdc.realm} ({qop})" in line for line in said), said


def test_privacy_with_aes_on_both_sides_switches_to_hbases_crypto_aes(kdc):
    received: list = []
    server = _listener(received, _server_conf(kdc, hbase_rpc_crypto_encryption_aes_enabled="true"))
    try:
        client = _client_conf(kdc, hbase_rpc_protection="privacy", hbase_rpc_crypto_encryption_aes_enabled="true")
        connection = RpcConnection(
            "127.0.0.1", server.port, ADMIN_SERVICE, KEY_VALUE_CODEC_WITH_TAGS, "hbrep", 10.0,
            kerberos=rpc_kerberos(client),
        )  # fmt: skip
        try:
            for n in range(3):  # several calls: the CTR streams and sequence numbers run on across packets
                connection.call(
                    REPLICATE_WAL_ENTRY,
                    Admin_pb2.ReplicateWALEntryRequest(replicationClusterId=f"aes-{n}"),
                    Admin_pb2.ReplicateWALEntryResponse,
                )
            assert type(connection._sasl).__name__ == "CryptoAes"
        finally:
            connection.close()
    finally:
        server.stop()
    assert [r.replicationClusterId for r in received] == ["aes-0", "aes-1", "aes-2"]


def test_refusals_are_one_line_and_nothing_arrives(kdc):
    received: list = []
    server = _listener(received, _server_conf(kdc))
    only_privacy = _listener(received, _server_conf(kdc, hbase_rpc_protection="privacy"))
    try:
        with pytest.raises(KerberosError) as simple:  # what HBase's server answers, as hbrep's client words it
            _call(server, _client_conf(None))
        assert "demands Kerberos (AccessDeniedException: Authentication is required)" in str(simple.value)
        with pytest.raises(KerberosError) as weaker:
            _call(only_privacy, _client_conf(kdc, hbase_rpc_protection="authentication"))
        assert "offers hbase.rpc.protection privacy, hbrep asks for authentication" in str(weaker.value)
        with pytest.raises(KerberosError) as wrong_service:  # a ticket for another service: HBase's SASL error
            _call(server, _client_conf(kdc, hbase_regionserver_kerberos_principal=f"other/_HOST@{kdc.realm}"))
        assert "refused Kerberos authentication as hbrep/127.0.0.1" in str(wrong_service.value)
        assert "SaslException: GSS initiate failed: Cannot decrypt ticket for other/127.0.0.1" in str(
            wrong_service.value
        )
        for refusal in (simple, weaker, wrong_service):
            assert "\n" not in str(refusal.value), refusal.value
    finally:
        server.stop()
        only_privacy.stop()
    assert received == []


def test_a_refused_client_still_writing_its_call_reads_the_refusal(kdc):
    """The listener answers a SIMPLE client after its preamble, while the client may still be writing its header
    and a large first call: the listener reads what is left before it closes, so the client reads the refusal
    rather than "broken pipe" (without that, 11 of 300 such calls here got BrokenPipeError)."""
    server = _listener([], _server_conf(kdc))
    large = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId="x" * 200_000)
    outcomes: list[str] = []
    try:
        for _ in range(100):
            connection = RpcConnection("127.0.0.1", server.port, ADMIN_SERVICE, KEY_VALUE_CODEC_WITH_TAGS, "hbrep",
                                       10.0, kerberos=rpc_kerberos(_client_conf(None)))  # fmt: skip
            try:
                connection.call(REPLICATE_WAL_ENTRY, large, Admin_pb2.ReplicateWALEntryResponse)
                outcomes.append("served")
            except KerberosError:
                outcomes.append("refused")
            except ConnectionFailed as failed:
                outcomes.append(str(failed))
            finally:
                connection.close()
    finally:
        server.stop()
    assert set(outcomes) == {"refused"}, [o for o in outcomes if o != "refused"][:3]


def test_simple_clients_are_served_when_the_listener_allows_fallback(kdc):
    received: list = []
    server = _listener(received, _server_conf(kdc, **{"hbase.ipc.server.fallback-to-simple-auth-allowed": "true"}))
    try:
        _call(server, _client_conf(None), cluster_id="simple")
    finally:
        server.stop()
    assert [r.replicationClusterId for r in received] == ["simple"]


def test_a_kerberos_client_at_a_simple_listener_is_told_to_switch_and_goes_on_only_if_it_may(kdc):
    received: list = []
    server = HBaseRpcServer("127.0.0.1", 0, received.append, max_request=1 << 20)
    server.start()
    try:
        with pytest.raises((ConnectionFailed, KerberosError)) as refused:
            _call(server, _client_conf(kdc))
        assert "\n" not in str(refused.value) and "SIMPLE" in str(refused.value), refused.value
        may_fall_back = _client_conf(kdc, **{"hbase.ipc.client.fallback-to-simple-auth-allowed": "true"})
        _call(server, may_fall_back, cluster_id="fell")
    finally:
        server.stop()
    assert [r.replicationClusterId for r in received] == ["fell"]


def test_a_listener_that_cannot_accept_as_its_principal_does_not_start(kdc, tmp_path):
    received: list = []
    wrong_keytab = _server_conf(kdc, hbase_regionserver_keytab_file=_keytab(kdc, "other/127.0.0.1"))
    with pytest.raises(KerberosError) as no_key:
        _listener(received, wrong_keytab)
    assert f"cannot accept as hbase/127.0.0.1@{kdc.realm}" in str(no_key.value)
    missing = _server_conf(kdc, hbase_regionserver_keytab_file=str(tmp_path / "missing.keytab"))
    with pytest.raises(KerberosError) as unreadable:
        _listener(received, missing)
    assert "cannot read the keytab" in str(unreadable.value)
    with pytest.raises(ConfigError) as no_principal:
        listener_kerberos(_server_conf(kdc, hbase_regionserver_kerberos_principal=""), "127.0.0.1")
    assert "hbase.regionserver.kerberos.principal" in str(no_principal.value)
    for refusal in (no_key, unreadable, no_principal):
        assert "\n" not in str(refusal.value), refusal.value
