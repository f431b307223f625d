"""HBase's RPC TLS on the HBase RPC listener of hbrep's region servers (``hbase.server.netty.tls.*``), with hbrep's
own HBase RPC client as the TLS client (``tls.client_context``): a client trusting the CA and presenting a
certificate is served; without a certificate (client auth NEED), trusting another CA, or in plain text on a
TLS-only listener it is refused, and nothing reaches the sink. A real HBase as the client:
tests/secure/test_hbase_rpc_tls.py::test_a_real_hbase_replicates_into_hbreps_listener_over_tls_only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC_WITH_TAGS
from replication.cluster.hbase_rpc.connection import ConnectionFailed, RpcConnection
from replication.cluster.hbase_rpc.preamble import ADMIN_SERVICE
from replication.cluster.hbase_rpc.server import REPLICATE_WAL_ENTRY, HBaseRpcServer
from replication.cluster.hbase_rpc.tls import client_context, server_context
from replication.config import Config
from replication.devstack.tls_ca import ThrowAwayCA
from replication.errors import ConfigError
from replication.proto import Admin_pb2


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> ThrowAwayCA:
    return ThrowAwayCA.create(tmp_path_factory.mktemp("listener-ca"))


def _listener(ca: ThrowAwayCA, received: list, changes: dict[str, str] | None = None) -> HBaseRpcServer:
    """A TLS-only listener (client certificates demanded), with ``changes`` to those settings."""
    settings = {
        "hbase.server.netty.tls.enabled": "true",
        "hbase.server.netty.tls.supportplaintext": "false",
        "hbase.rpc.tls.keystore.location": str(ca.issue("listener").combined()),
        "hbase.rpc.tls.truststore.location": str(ca.cert_path),
        **(changes or {}),
    }
    conf = Config.load(env={}, overrides=settings)
    server = HBaseRpcServer(
        "127.0.0.1", 0, received.append, max_request=1 << 20, tls=server_context(conf),
        plaintext_allowed=conf.get_bool("hbase.server.netty.tls.supportplaintext"),
    )  # fmt: skip
    server.start()
    return server


def _call(server: HBaseRpcServer, **client: str) -> None:
    conf = Config.load(env={}, overrides=client) if client else None
    tls = client_context(conf) if conf is not None else None
    connection = RpcConnection(
        "127.0.0.1", server.port, ADMIN_SERVICE, KEY_VALUE_CODEC_WITH_TAGS, "hbase", 10.0, tls=tls
    )
    try:
        connection.call(REPLICATE_WAL_ENTRY, Admin_pb2.ReplicateWALEntryRequest(), Admin_pb2.ReplicateWALEntryResponse)
    finally:
        connection.close()


@pytest.fixture
def received() -> Iterator[list]:
    yield []


def test_a_client_with_the_cas_certificate_is_served_and_the_others_are_refused(ca, received, tmp_path):
    server = _listener(ca, received)
    try:
        good = {
            "hbase.client.netty.tls.enabled": "true",
            "hbase.rpc.tls.truststore.location": str(ca.cert_path),
            "hbase.rpc.tls.keystore.location": str(ca.issue("hbase-rs", client=True).combined()),
        }
        _call(server, **good)
        assert len(received) == 1
        no_certificate = {k: v for k, v in good.items() if k != "hbase.rpc.tls.keystore.location"}
        other = ThrowAwayCA.create(tmp_path / "other", name="another CA")
        foreign = {**good, "hbase.rpc.tls.keystore.location": str(other.issue("intruder", client=True).combined())}
        for settings in (no_certificate, foreign, {}):  # the last: plain text at a TLS-only listener
            with pytest.raises(ConnectionFailed) as refused:
                _call(server, **settings)
            assert "\n" not in str(refused.value)
        assert len(received) == 1  # nothing of the refused calls reached the sink
    finally:
        server.stop()


def test_plain_text_is_served_beside_tls_while_supportplaintext_is_on(ca, received):
    server = _listener(ca, received, {"hbase.server.netty.tls.supportplaintext": "true"})
    try:
        _call(server)
        assert len(received) == 1
    finally:
        server.stop()


def test_a_tls_listener_without_a_key_store_is_one_config_error():
    conf = Config.load(env={}, overrides={"hbase.server.netty.tls.enabled": "true"})
    with pytest.raises(ConfigError, match=r"hbase\.server\.netty\.tls\.enabled=true needs hbase\.rpc\.tls\.keystore"):
        server_context(conf)
    assert server_context(Config.load(env={})) is None


def test_client_auth_optional_serves_a_client_without_a_certificate(ca, received):
    server = _listener(ca, received, {"hbase.server.netty.tls.client.auth.mode": "OPTIONAL"})
    try:
        trusting = {"hbase.client.netty.tls.enabled": "true", "hbase.rpc.tls.truststore.location": str(ca.cert_path)}
        _call(server, **trusting)
        assert len(received) == 1
    finally:
        server.stop()
