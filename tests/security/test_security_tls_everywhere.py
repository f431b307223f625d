"""TLS on every hbrep connection: ZooKeeper's secure client port (mutual TLS) and the region-server RPC.

An embedded ZooKeeper with TLS on, two clusters whose every ZooKeeper session and RPC is TLS (certificates
from a throw-away CA), one real ship cycle from a to b; then plain-text clients are refused.
"""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
from support import create_table, table_state

from replication.cluster.embedded import start_cluster
from replication.config import Config, write_site_xml
from replication.devstack.tls_ca import ThrowAwayCA
from replication.devstack.zookeeper import ZooKeeperServer, ZooKeeperTls
from replication.errors import ConfigError
from replication.jobs.launch import runner_for
from replication.net import free_port
from replication.source.cycle import run_cycle
from replication.tls import zk_client_tls
from replication.zk.client import ZooKeeperUnavailable, connect, connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def secure_stack(tmp_path_factory):
    """ZooKeeper (secure port, client certificates required) and the hbrep configuration for TLS everywhere."""
    folder = tmp_path_factory.mktemp("tls-stack")
    ca = ThrowAwayCA.create(folder / "pki")
    zk_cert, hbrep_cert = ca.issue("zookeeper"), ca.issue("hbrep")
    tls = ZooKeeperTls(free_port(), zk_cert.combined(), ca.cert_path, client_auth="need")
    server = ZooKeeperServer(folder / "zk", free_port(), tls=tls)
    server.start()
    values = {
        "hbrep.zk.tls.enabled": "true",
        "hbrep.zk.tls.ca": str(ca.cert_path),
        "hbrep.zk.tls.cert": str(hbrep_cert.cert),
        "hbrep.zk.tls.key": str(hbrep_cert.key),
        "hbrep.rpc.tls.enabled": "true",
        "hbrep.rpc.tls.ca": str(ca.cert_path),
        "hbrep.rpc.tls.cert": str(hbrep_cert.cert),
        "hbrep.rpc.tls.key": str(hbrep_cert.key),
        "hbrep.rpc.tls.client.auth": "true",
        "replication.source.sleepforretries": "50",
    }
    site = folder / "hbase-site.xml"
    write_site_xml(site, values)
    try:
        yield server, tls, Config.load(env={}, overrides=values), site
    finally:
        server.stop()


def test_a_ship_cycle_runs_with_tls_on_every_connection(secure_stack, spark):
    server, tls, conf, _ = secure_stack
    tag = uuid.uuid4().hex[:8]
    keys = {n: f"127.0.0.1:{tls.secure_port}:/hbase-{n}-{tag}" for n in ("ta", "tb")}
    peer = start_cluster(keys["tb"], str(server.data_dir / f"tb-{tag}"), 1, conf=conf, name="tb")
    try:
        source = start_cluster(keys["ta"], str(server.data_dir / f"ta-{tag}"), 2, conf=conf, name="ta")
        try:
            for cluster in (source, peer):
                create_table(cluster, "t", ("f", 1))
            source_key = ClusterKey.parse(keys["ta"])
            with connected(source_key, **zk_options(conf)) as zk:
                ReplicationPeerStorage(zk, ZNodePaths(conf, parent=source_key.znode_parent)).add_peer(
                    "1", ReplicationPeerConfig(cluster_key=keys["tb"])
                )
            with source.client() as client:
                for i in range(30):
                    client.put("t", f"row{i:02d}".encode(), b"f", b"q", f"v{i}".encode())
            with connected(source_key, **zk_options(conf)) as zk:
                report = run_cycle(zk, source_key, conf, runner=runner_for(conf, spark))
            assert report.queues and all(q.status == "ok" for q in report.queues), report.as_dict()
            rows = table_state(spark, peer, "t")
            assert rows == table_state(spark, source, "t")
            assert {r[0] for r in rows} == {f"row{i:02d}".encode() for i in range(30)}
        finally:
            source.stop()
    finally:
        peer.stop()


def test_plain_text_and_certificate_less_zookeeper_clients_are_refused(secure_stack, tmp_path):
    _, tls, conf, site = secure_stack
    key = f"127.0.0.1:{tls.secure_port}:/hbase-x"
    with pytest.raises(ZooKeeperUnavailable) as caught:
        connect(key, timeout=4)
    assert str(caught.value) == f"ZooKeeper at 127.0.0.1:{tls.secure_port} did not answer within 4s"
    no_cert = Config.load(
        env={}, overrides={"hbrep.zk.tls.enabled": "true", "hbrep.zk.tls.ca": conf.get_str("hbrep.zk.tls.ca")}
    )
    with pytest.raises(ZooKeeperUnavailable):
        connect(key, timeout=4, tls=zk_client_tls(no_cert))  # ZooKeeper demands a client certificate
    # hbrep.zk.tls.ca decides which server certificates are trusted: a CA that did not sign ZooKeeper's is refused
    other_ca = ThrowAwayCA.create(tmp_path / "other-ca")
    wrong_ca = Config.load(env={}, overrides={**conf.as_dict(), "hbrep.zk.tls.ca": str(other_ca.cert_path)})
    with pytest.raises(ZooKeeperUnavailable):
        connect(key, timeout=4, tls=zk_client_tls(wrong_ca))
    with connected(key, **zk_options(conf)) as zk:  # the configured CA, certificate and key: served
        assert zk.exists("/") is not None
    # the CLI over TLS (the hbase-site.xml names the certificates), and without it
    cli = [sys.executable, "-m", "replication.cli", "--cluster", key]
    ok = subprocess.run([*cli[:3], "--conf", str(site), *cli[3:], "list_peers", "--json"], capture_output=True,
                        text=True, timeout=120)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "[]"
    plain = subprocess.run([*cli, "list_peers"], capture_output=True, text=True, timeout=120,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})  # fmt: skip
    assert plain.returncode != 0
    assert plain.stderr.strip().splitlines()[-1].startswith(f"hbrep: error: ZooKeeper at 127.0.0.1:{tls.secure_port}")
    with pytest.raises(ConfigError, match=r"hbrep.zk.tls.enabled is true but hbrep.zk.tls.ca .* is not set"):
        zk_client_tls(Config.load(env={}, overrides={"hbrep.zk.tls.enabled": "true"}))
