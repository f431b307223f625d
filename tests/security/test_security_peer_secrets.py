"""Peer secrets stay out of ZooKeeper: the peer configuration names them (env, owner-only file, Airflow).

Two clusters with different tokens and ZooKeeper credentials; the source knows the peer's secrets only
through references in the peer configuration. A real ship cycle reaches the peer, then every znode
both clusters wrote is read and none holds a secret.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest
from kazoo.client import KazooClient
from support import create_table, table_state

from replication.cluster.embedded import start_cluster
from replication.config import Config
from replication.errors import HbrepError
from replication.jobs.launch import runner_for
from replication.secrets import SecretError, refuse_plain_secrets, resolve_secret
from replication.source.cycle import run_cycle
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

SOURCE_AUTH, SOURCE_TOKEN = "src:srcZkPw-41d9a7", "srcTok-8f3e1b2c9d"
PEER_AUTH, PEER_TOKEN = "peer:peerZkPw-93c1e0", "peerTok-0a6d5e4f7b"
SECRETS = [SOURCE_AUTH, SOURCE_TOKEN, PEER_AUTH, PEER_TOKEN, "srcZkPw-41d9a7", "peerZkPw-93c1e0"]
ENV_NAME = "HBREP_TEST_PEER_ZK_AUTH"


def conf_for(auth: str, token: str) -> Config:
    return Config.load(env={}, overrides={"hbrep.zk.auth": auth, "hbrep.cluster.token": token,
                                          "replication.source.sleepforretries": 50})  # fmt: skip


@pytest.fixture(scope="module")
def clusters(zk_server, tmp_path_factory):
    """Source a (its own token and ZooKeeper credentials) and peer b (others)."""
    tag = uuid.uuid4().hex[:8]
    keys = {n: f"127.0.0.1:{zk_server.port}:/hbase-{n}-{tag}" for n in ("sa", "sb")}
    peer = start_cluster(keys["sb"], str(tmp_path_factory.mktemp("sb")), 1, conf=conf_for(PEER_AUTH, PEER_TOKEN))
    try:
        source = start_cluster(keys["sa"], str(tmp_path_factory.mktemp("sa")), 1,
                               conf=conf_for(SOURCE_AUTH, SOURCE_TOKEN))  # fmt: skip
    except BaseException:
        peer.stop()
        raise
    try:
        yield source, peer
    finally:
        source.stop()
        peer.stop()


def every_znode(zk_server, parents: list[str]) -> dict[str, bytes]:
    """Path -> data of every znode under ``parents``, read with both clusters' credentials (all must read)."""
    zk = KazooClient(hosts=f"127.0.0.1:{zk_server.port}", timeout=10,
                     auth_data=[("digest", SOURCE_AUTH), ("digest", PEER_AUTH)])  # fmt: skip
    zk.start(timeout=15)
    found: dict[str, bytes] = {}
    try:
        todo = list(parents)
        while todo:
            path = todo.pop()
            found[path] = zk.get(path)[0] or b""
            todo.extend(f"{path.rstrip('/')}/{child}" for child in zk.get_children(path))
    finally:
        zk.stop()
        zk.close()
    return found


def test_a_peer_named_by_secret_references_ships_and_no_znode_holds_a_secret(
    clusters, zk_server, spark, tmp_path, monkeypatch
):
    source, peer = clusters
    token_file = tmp_path / "peer-token"
    token_file.write_text(PEER_TOKEN + "\n")
    token_file.chmod(0o600)
    monkeypatch.setenv(ENV_NAME, PEER_AUTH)
    for cluster in (source, peer):
        create_table(cluster, "t", ("f", 1))
    source_key = ClusterKey.parse(source.cluster_key)
    source_conf = conf_for(SOURCE_AUTH, SOURCE_TOKEN)
    config = ReplicationPeerConfig(
        cluster_key=peer.cluster_key,
        configuration={"hbrep.cluster.token.secret": f"file:{token_file}", "hbrep.zk.auth.secret": f"env:{ENV_NAME}"},
    )
    with connected(source_key, auth=SOURCE_AUTH) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(source_conf, parent=source_key.znode_parent)).add_peer("1", config)
    with source.client() as client:
        for i in range(20):
            client.put("t", f"r{i:02d}".encode(), b"f", b"q", f"v{i}".encode())
    with connected(source_key, auth=SOURCE_AUTH) as zk:
        report = run_cycle(zk, source_key, source_conf, runner=runner_for(source_conf, spark))
    assert report.queues and all(q.status == "ok" for q in report.queues), report.as_dict()
    assert table_state(spark, peer, "t") == table_state(spark, source, "t")
    assert len(table_state(spark, peer, "t")) == 20

    znodes = every_znode(zk_server, [source_key.znode_parent, ClusterKey.parse(peer.cluster_key).znode_parent])
    assert any("/replication/peers/1" in path for path in znodes)  # the peer znode was read
    assert len(znodes) > 10
    for path, data in znodes.items():
        for secret in SECRETS:
            assert secret.encode() not in data, f"{path} holds a secret"
    peer_znode = next(data for path, data in znodes.items() if path.endswith("/replication/peers/1"))
    assert f"file:{token_file}".encode() in peer_znode  # the reference is what is stored


def test_a_secret_in_the_peer_configuration_is_refused_without_echoing_it(clusters):
    source, peer = clusters
    source_key = ClusterKey.parse(source.cluster_key)
    for key, value in (("hbrep.cluster.token", PEER_TOKEN), ("hbrep.zk.auth", PEER_AUTH)):
        config = ReplicationPeerConfig(cluster_key=peer.cluster_key, configuration={key: value})
        with connected(source_key, auth=SOURCE_AUTH) as zk, pytest.raises(HbrepError) as caught:
            ReplicationPeerStorage(zk, ZNodePaths(Config.load(env={}), parent=source_key.znode_parent)).add_peer(
                "2", config
            )
        assert str(caught.value).startswith(f"peer configuration {key} would store a secret in ZooKeeper")
        assert value not in str(caught.value)
    with connected(source_key, auth=SOURCE_AUTH) as zk:
        assert not zk.exists(f"{source_key.znode_parent}/replication/peers/2")  # no half-written peer


def test_a_group_readable_secret_file_fails_the_ship_with_one_line(clusters, spark, tmp_path):
    source, peer = clusters
    token_file = tmp_path / "loose-token"
    token_file.write_text(PEER_TOKEN)
    token_file.chmod(0o640)
    source_key = ClusterKey.parse(source.cluster_key)
    source_conf = conf_for(SOURCE_AUTH, SOURCE_TOKEN)
    config = ReplicationPeerConfig(cluster_key=peer.cluster_key,
                                   configuration={"hbrep.cluster.token.secret": f"file:{token_file}"})  # fmt: skip
    paths = ZNodePaths(source_conf, parent=source_key.znode_parent)
    with connected(source_key, auth=SOURCE_AUTH) as zk:
        ReplicationPeerStorage(zk, paths).add_peer("3", config)
    try:
        with source.client() as client:
            client.put("t", b"loose", b"f", b"q", b"v")
        with connected(source_key, auth=SOURCE_AUTH) as zk:
            report = run_cycle(zk, source_key, source_conf, runner=runner_for(source_conf, spark), peer_ids=["3"])
        errors = [q.error for q in report.queues if q.peer_id == "3"]
        assert errors, report.as_dict()
        expected = f"peer 3: secret file:{token_file}: {token_file} is readable by others (mode 0640); chmod 600 it"
        assert all(e == expected for e in errors), errors
        assert PEER_TOKEN not in json.dumps(report.as_dict())
    finally:
        with connected(source_key, auth=SOURCE_AUTH) as zk:
            ReplicationPeerStorage(zk, paths).remove_peer("3")


def test_references_resolve_from_env_files_and_airflows_environment_form(tmp_path):
    env = {
        "PEER_TOKEN": "from-env",
        "AIRFLOW_VAR_PEER_B_TOKEN": "from-variable",
        "AIRFLOW_CONN_PEER_B": json.dumps({"conn_type": "generic", "login": "u", "password": "from-json-conn"}),
        "AIRFLOW_CONN_PEER_C": "generic://u:from%2Furi@host",
        "AIRFLOW_CONN_NO_PASSWORD": "generic://host",
        "EMPTY": "  ",
    }
    assert resolve_secret("env:PEER_TOKEN", env=env) == "from-env"
    assert resolve_secret("airflow-var:peer_b_token", env=env) == "from-variable"
    assert resolve_secret("airflow-conn:peer_b", env=env) == "from-json-conn"
    assert resolve_secret("airflow-conn:peer_c", env=env) == "from/uri"
    assert resolve_secret("airflow-var:x", lambda kind, name: f"{kind}/{name}", env=env) == "airflow-var/x"
    good = tmp_path / "good"
    good.write_text("from-file\n")
    good.chmod(0o400)
    assert resolve_secret(f"file:{good}", env=env) == "from-file"
    link = tmp_path / "link"
    os.symlink(good, link)
    cases = {
        "env:MISSING": "secret env:MISSING: environment variable MISSING is not set",
        "env:EMPTY": "secret env:EMPTY is empty",
        "airflow-var:nope": "secret airflow-var:nope: no Airflow variable nope "
        "(nor AIRFLOW_VAR_NOPE in the environment)",
        "airflow-conn:no_password": "secret airflow-conn:no_password: the connection has no password",
        "vault:x": "bad secret reference 'vault:x': expected one of env:NAME, file:NAME, airflow-var:NAME, "
        "airflow-conn:NAME",
        f"file:{tmp_path}": f"secret file:{tmp_path}: {tmp_path} is not a regular file",
        f"file:{link}": f"secret file:{link}: cannot open {link} (Too many levels of symbolic links)",
        f"file:{tmp_path / 'absent'}": f"secret file:{tmp_path / 'absent'}: cannot open {tmp_path / 'absent'} "
        "(No such file or directory)",
    }
    for ref, message in cases.items():
        with pytest.raises(SecretError) as caught:
            resolve_secret(ref, env=env)
        assert str(caught.value) == message
    with pytest.raises(SecretError, match="bad secret reference"):
        refuse_plain_secrets({"hbrep.zk.auth.secret": "plain-password"})
    refuse_plain_secrets({"hbrep.zk.auth.secret": "env:X", "other": "value"})
