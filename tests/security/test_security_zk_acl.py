"""ZooKeeper digest ACLs on the replication znodes (``--zk-auth`` / ``hbrep.zk.auth``)."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from replication.config import write_site_xml
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from tests.badinput.helpers import error_line, hbrep
from tests.security.conftest import ZK_AUTH

pytestmark = pytest.mark.slow


def denied(path: str) -> str:
    return (
        f"hbrep: error: ZooKeeper denied access to {path} (ACL): give the owner's credentials with "
        "--zk-auth user:password (or its Kerberos identity, hbase.client.kerberos.principal)"
    )


def test_without_the_credentials_queues_cannot_be_read_or_changed(secure, zk_server, tmp_path):
    key = secure.cluster_key
    paths = ZNodePaths(parent=ClusterKey.parse(key).znode_parent)
    owner = ("--cluster", key, "--zk-auth", ZK_AUTH)
    added = hbrep(*owner, "add_peer", "1", "zk9:2181:/hbase-b", "--state", "DISABLED")
    assert added.returncode == 0, added.stderr
    server = secure.servers[0]
    listed = hbrep(*owner, "queues", "--json")
    assert listed.returncode == 0, listed.stderr
    (wal,) = json.loads(listed.stdout)[server]["1"]

    # the credentials as the configuration key (an hbase-site.xml), not the flag: the same access
    site = tmp_path / "hbase-site.xml"
    write_site_xml(site, {"hbrep.zk.auth": ZK_AUTH})
    from_key = hbrep("--conf", str(site), "--cluster", key, "queues", "--json")
    assert from_key.returncode == 0, from_key.stderr
    assert list(json.loads(from_key.stdout)[server]["1"]) == [wal]

    for creds in ((), ("--zk-auth", "mallory:guess")):
        c = ("--cluster", key, *creds)
        assert error_line(hbrep(*c, "queues")) == denied(paths.queues)
        assert error_line(hbrep(*c, "list_peers")) == denied(paths.peer("1"))
        assert error_line(hbrep(*c, "disable_peer", "1")) == denied(paths.peer("1"))
        assert error_line(hbrep(*c, "remove_peer", "1")) == denied(paths.peer("1"))

    stranger = KazooClient(hosts=zk_server.hosts)
    stranger.start(timeout=15)
    try:
        wal_znode = paths.wal(server, "1", wal)
        for call in (
            lambda: stranger.get(wal_znode),
            lambda: stranger.set(wal_znode, b"PBUF\x08\x00"),
            lambda: stranger.delete(wal_znode),
            lambda: stranger.get_children(paths.queue(server, "1")),
            lambda: stranger.create(paths.queue(server, "1-evil,1,1"), b""),
        ):
            with pytest.raises(NoAuthError):
                call()
        with pytest.raises(NoAuthError):
            stranger.get_acls(wal_znode)  # not even the ACL is readable without the credentials
    finally:
        stranger.stop()
        stranger.close()
    owner_client = KazooClient(hosts=zk_server.hosts, auth_data=[("digest", ZK_AUTH)])
    owner_client.start(timeout=15)
    try:
        for path in (wal_znode, paths.queue(server, "1"), paths.peer("1"), paths.peer_state("1")):
            acls, _ = owner_client.get_acls(path)
            assert [(a.id.scheme, a.id.id.split(":")[0], a.perms) for a in acls] == [("digest", "hbrep", 31)], path
    finally:
        owner_client.stop()
        owner_client.close()
    # the owner still sees everything unchanged
    again = hbrep(*owner, "queues", "--json")
    assert again.returncode == 0 and again.stdout == listed.stdout
    peers = hbrep(*owner, "list_peers", "--json")
    assert '"STATE": "DISABLED"' in peers.stdout
