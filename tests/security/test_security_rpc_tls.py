"""TLS on the region-server RPC: server certificates, mutual TLS against a CA, plain text refused."""

from __future__ import annotations

import time
import uuid

import pytest

from replication.cluster.client import ClusterClient
from replication.cluster.embedded import start_cluster
from replication.cluster.errors import SinkError
from replication.cluster.sink_client import SinkClient
from replication.config import Config
from replication.devstack.tls_ca import ThrowAwayCA
from replication.errors import ConfigError, HbrepError
from replication.fs import get_filesystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tls import TlsSettings, rpc_client_tls, rpc_server_tls
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey
from tests.cluster.helpers import wal_entries

pytestmark = pytest.mark.slow
TOKEN = "tls-token-2f8c"


def batch(row: bytes) -> list:
    cells = [Cell(row, b"f", b"q", 1000, int(CellType.PUT), b"v")]
    key = WALKey(b"0" * 32, b"t", 1, int(time.time() * 1000), {b"f": 1}, [uuid.uuid4()])
    return [(key, len(cells), encode_cells(cells))]


def tls_conf(ca: ThrowAwayCA, cert, **extra) -> Config:
    overrides = {
        "hbrep.cluster.token": TOKEN,
        "hbrep.rpc.tls.enabled": "true",
        "hbrep.rpc.tls.cert": str(cert.cert),
        "hbrep.rpc.tls.key": str(cert.key),
        "hbrep.rpc.tls.ca": str(ca.cert_path),
        **extra,
    }
    return Config.load(env={}, overrides=overrides)


@pytest.fixture(scope="module")
def tls_cluster(zk_server, tmp_path_factory):
    """One region server serving TLS only and demanding client certificates from its CA (mutual TLS)."""
    folder = tmp_path_factory.mktemp("pki")
    ca = ThrowAwayCA.create(folder / "ca")
    conf = tls_conf(ca, ca.issue("regionserver"), **{"hbrep.rpc.tls.client.auth": "true"})
    key = f"127.0.0.1:{zk_server.port}:/hbase-tls-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("tls")), 1, conf=conf, name="tls")
    try:
        fs, root = get_filesystem(cluster.root)
        TableRegistry(fs, root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        yield cluster, ca, ThrowAwayCA.create(folder / "other")
    finally:
        cluster.stop()


def test_a_client_with_a_certificate_from_the_ca_is_served_and_every_other_client_is_refused(tls_cluster):
    cluster, ca, other_ca = tls_cluster
    (sink,) = cluster.servers
    good = rpc_client_tls(tls_conf(ca, ca.issue("source", client=True)))
    before = len(wal_entries(cluster.root, sink))
    with SinkClient(sink, TOKEN, timeout_s=10, tls=good) as client:
        client.replicate(batch(b"over-tls"), str(uuid.uuid4()))
    assert len(wal_entries(cluster.root, sink)) == before + 1

    stranger = other_ca.issue("stranger", client=True)
    refused = {
        "plain text": None,
        "TLS without a client certificate": TlsSettings("", "", str(ca.cert_path), False, "hbrep.rpc.tls."),
        "a client certificate from another CA": TlsSettings(
            str(stranger.cert), str(stranger.key), str(ca.cert_path), False, "hbrep.rpc.tls."
        ),
        "a server certificate the client does not trust": rpc_client_tls(
            tls_conf(other_ca, other_ca.issue("source2", client=True))
        ),
    }
    for why, tls in refused.items():
        with SinkClient(sink, TOKEN, timeout_s=10, tls=tls) as client, pytest.raises(SinkError) as caught:
            client.replicate(batch(why.encode()), str(uuid.uuid4()))
        assert str(caught.value).startswith(f"sink {sink} "), (why, caught.value)
        assert TOKEN not in str(caught.value)
    assert len(wal_entries(cluster.root, sink)) == before + 1  # nothing else was applied


def test_the_cluster_client_writes_over_tls_and_a_plain_text_client_cannot(tls_cluster):
    cluster, ca, _ = tls_cluster
    with ClusterClient(cluster.cluster_key, tls_conf(ca, ca.issue("writer", client=True))) as client:
        client.put("t", b"r-tls", b"f", b"q", b"v")
    plain = Config.load(env={}, overrides={"hbrep.cluster.token": TOKEN})
    with ClusterClient(cluster.cluster_key, plain) as client, pytest.raises(HbrepError):
        client.put("t", b"r-plain", b"f", b"q", b"v")


def test_tls_settings_are_checked_with_the_keys_named(tmp_path):
    ca = ThrowAwayCA.create(tmp_path)
    cert = ca.issue("rs")
    with pytest.raises(ConfigError) as caught:
        Config.load(env={}, overrides={"hbrep.rpc.tls.cert": str(tmp_path / "missing.pem")})
    assert str(caught.value) == (
        f"bad value for hbrep.rpc.tls.cert (from overrides): '{tmp_path / 'missing.pem'}' is not a file"
    )
    with pytest.raises(ConfigError, match=r"bad value for hbrep.rpc.tls.enabled .*not a boolean"):
        Config.load(env={}, overrides={"hbrep.rpc.tls.enabled": "maybe"})
    cases = [
        ({"hbrep.rpc.tls.enabled": "true"},
         "hbrep.rpc.tls.enabled is true but hbrep.rpc.tls.cert and hbrep.rpc.tls.key are not set"),
        ({"hbrep.rpc.tls.enabled": "true", "hbrep.rpc.tls.cert": str(cert.cert)},
         "hbrep.rpc.tls.cert and hbrep.rpc.tls.key must be set together"),
        ({"hbrep.rpc.tls.enabled": "true", "hbrep.rpc.tls.cert": str(cert.cert), "hbrep.rpc.tls.key": str(cert.key),
          "hbrep.rpc.tls.client.auth": "true"},
         "hbrep.rpc.tls.client.auth is true but hbrep.rpc.tls.ca (the clients' CA) is not set"),
    ]  # fmt: skip
    for overrides, message in cases:
        with pytest.raises(ConfigError) as caught:
            rpc_server_tls(Config.load(env={}, overrides=overrides))
        assert str(caught.value) == message
    assert rpc_server_tls(Config.load(env={})) is None  # off by default


def test_the_plain_text_hbase_rpc_listener_stays_off_when_rpc_is_tls_only(tls_cluster):
    cluster, _ca, _other = tls_cluster
    # hbrep.regionserver.hbase.rpc.enabled=auto: no HBase RPC listener is registered for HBase's clients
    assert cluster.servers
    assert not cluster.zk.exists(cluster.paths.hbase_rpc_rs) or not cluster.zk.get_children(cluster.paths.hbase_rpc_rs)


def test_without_client_auth_a_tls_client_needs_no_certificate(zk_server, tmp_path):
    """hbrep.rpc.tls.client.auth false (the default): TLS still, but any client that trusts the server is
    served, the certificate-less one the mutual-TLS cluster above refuses; plain text is still refused."""
    ca = ThrowAwayCA.create(tmp_path / "ca")
    conf = tls_conf(ca, ca.issue("regionserver"), **{"hbrep.rpc.tls.client.auth": "false"})
    key = f"127.0.0.1:{zk_server.port}:/hbase-tls1w-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path / "root"), 1, conf=conf, name="tls1w")
    try:
        fs, root = get_filesystem(cluster.root)
        TableRegistry(fs, root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        (sink,) = cluster.servers
        before = len(wal_entries(cluster.root, sink))
        no_certificate = TlsSettings("", "", str(ca.cert_path), False, "hbrep.rpc.tls.")
        with SinkClient(sink, TOKEN, timeout_s=10, tls=no_certificate) as client:
            client.replicate(batch(b"one-way-tls"), str(uuid.uuid4()))
        assert len(wal_entries(cluster.root, sink)) == before + 1
        with SinkClient(sink, TOKEN, timeout_s=10, tls=None) as client, pytest.raises(SinkError):
            client.replicate(batch(b"plain"), str(uuid.uuid4()))
        assert len(wal_entries(cluster.root, sink)) == before + 1
    finally:
        cluster.stop()
