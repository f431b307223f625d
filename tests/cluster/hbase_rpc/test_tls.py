"""The TLS context of hbrep's HBase RPC client from HBase's keys (replication/cluster/hbase_rpc/tls.py); the
handshakes themselves run against a real HBase 2.6 in tests/secure/test_hbase_rpc_tls.py."""

from __future__ import annotations

import ssl

import pytest

from replication.cluster.hbase_rpc.tls import client_context, store_type
from replication.config import Config
from replication.devstack.tls_ca import ThrowAwayCA
from replication.errors import ConfigError


def test_tls_is_off_unless_enabled_and_checks_host_names_by_default(tmp_path):
    ca = ThrowAwayCA.create(tmp_path)
    assert (
        client_context(Config.load(env={}, overrides={"hbase.rpc.tls.truststore.location": str(ca.cert_path)})) is None
    )
    on = {"hbase.client.netty.tls.enabled": "true", "hbase.rpc.tls.truststore.location": str(ca.cert_path)}
    context = client_context(Config.load(env={}, overrides=on))
    assert context is not None and context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert [c["subject"] for c in context.get_ca_certs()] == [((("commonName", "hbrep throw-away CA"),),)]
    off = {**on, "hbase.client.netty.tls.verify.server.hostname": "false"}
    unchecked = client_context(Config.load(env={}, overrides=off))
    assert unchecked is not None and not unchecked.check_hostname and unchecked.verify_mode == ssl.CERT_REQUIRED


@pytest.mark.parametrize(
    ("name", "configured", "expected"),
    [("ca.pem", "", "PEM"), ("ca.crt", "", "PEM"), ("s.p12", "", "PKCS12"), ("s.PFX", "", "PKCS12"),
     ("s.jks", "", "JKS"), ("s.bcfks", "", "BCFKS"), ("s.jks", "pkcs12", "PKCS12")],
)  # fmt: skip
def test_the_store_type_follows_the_extension_unless_configured(tmp_path, name, configured, expected):
    path = tmp_path / name
    path.write_bytes(b"")
    keys = {"hbase.rpc.tls.keystore.location": str(path), "hbase.rpc.tls.keystore.type": configured}
    assert store_type(Config.load(env={}, overrides=keys), "hbase.rpc.tls.keystore") == expected


def test_java_only_store_types_are_refused_naming_the_key(tmp_path):
    store = tmp_path / "client.jks"
    store.write_bytes(b"\xfe\xed\xfe\xed")
    keys = {"hbase.client.netty.tls.enabled": "true", "hbase.rpc.tls.keystore.location": str(store)}
    with pytest.raises(ConfigError, match=r"^hbase.rpc.tls.keystore.type JKS: hbrep reads PEM or PKCS12 stores"):
        client_context(Config.load(env={}, overrides=keys))
    keys["hbase.rpc.tls.keystore.type"] = "BCFKS"
    with pytest.raises(ConfigError, match=r"^hbase.rpc.tls.keystore.type BCFKS"):
        client_context(Config.load(env={}, overrides=keys))
