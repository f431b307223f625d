"""Issue 23: the peer's region-server list is watched during a ship task (HBase's PeerRegionServerListener),
so a sink that leaves is dropped and a new one used without waiting for a failure."""

from __future__ import annotations

import random
import time
import uuid

from kazoo.client import KazooClient

from replication.source.peer_servers import PeerRegionServers
from replication.source.sink_manager import ReplicationSinkManager

SERVERS = [f"127.0.0.1,{17000 + i},1" for i in range(4)]


def _wait(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_a_server_that_leaves_is_never_chosen_again_and_a_new_one_is(zk_server):
    rs_path = f"/peer-{uuid.uuid4().hex[:8]}/rs"
    admin = KazooClient(hosts=zk_server.hosts)
    admin.start(timeout=15)
    members = [KazooClient(hosts=zk_server.hosts) for _ in SERVERS]  # one session per "region server"
    try:
        for member, server in zip(members[:2], SERVERS[:2], strict=True):
            member.start(timeout=15)
            member.create(f"{rs_path}/{server}", b"", ephemeral=True, makepath=True)
        servers = PeerRegionServers("2", SERVERS[:2], lambda: _client(zk_server), rs_path)
        manager = ReplicationSinkManager("2", servers.fetch, 1.0, 3, random.Random(1), servers_changed=servers.changed)
        assert {manager.get_sink() for _ in range(40)} == set(SERVERS[:2])
        members[0].stop()  # SERVERS[0] leaves: its session ends, its znode goes
        _wait(lambda: servers.current() == SERVERS[1:2])
        assert {manager.get_sink() for _ in range(40)} == {SERVERS[1]}  # no failure was reported
        members[2].start(timeout=15)
        members[2].create(f"{rs_path}/{SERVERS[2]}", b"", ephemeral=True)
        _wait(lambda: servers.current() == SERVERS[1:3])
        assert {manager.get_sink() for _ in range(40)} == {SERVERS[1], SERVERS[2]}
        assert manager.bad_counts == {}
        servers.close()
    finally:
        for member in members:
            member.stop()
            member.close()
        admin.stop()
        admin.close()


def _client(zk_server) -> KazooClient:
    client = KazooClient(hosts=zk_server.hosts)
    client.start(timeout=15)
    return client


def test_an_unreachable_peer_zookeeper_leaves_the_snapshots_list(zk_server):
    def unreachable() -> KazooClient:
        raise RuntimeError("peer ZooKeeper at 127.0.0.1:1 did not answer")

    servers = PeerRegionServers("2", SERVERS[:1], unreachable, "/nowhere/rs")
    assert servers.fetch() == SERVERS[:1]
    assert servers.changed() is None and servers.fetch() == []  # no watch; a later read finds nothing
