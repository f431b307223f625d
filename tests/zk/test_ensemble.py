"""A 3-server ZooKeeper ensemble on loopback (same jars as the single server): ensemble cluster keys
work with connect() and the peer/queue storage, and work goes on when one server stops mid-way."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from kazoo.exceptions import ConnectionLoss

from replication.devstack.zookeeper import LoopbackEnsemble, four_letter_word
from replication.zk.client import connect
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackEnsemble]:
    ens = LoopbackEnsemble(tmp_path_factory.mktemp("ensemble"), size=3)
    ens.start()
    try:
        yield ens
    finally:
        ens.stop()


def _key(ens: LoopbackEnsemble) -> str:
    """``127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3:p1:/hbase-x``: per-host ports, as HBase allows."""
    return f"{ens.quorum}:{ens.servers[0].port}:/hbase-{uuid.uuid4().hex[:8]}"


def _serving_server(ens: LoopbackEnsemble, session_id: int):
    """The member that holds this session's connection (from the ``cons`` four-letter word)."""
    needle = f"sid=0x{session_id:x}"
    for server in ens.servers:
        try:
            if needle in four_letter_word("127.0.0.1", server.port, "cons"):
                return server
        except OSError:
            continue
    raise AssertionError(f"no member reports session {needle}")


def test_ensemble_has_one_leader_and_two_followers(ensemble):
    modes = sorted(server.status().mode for server in ensemble.servers)
    assert modes == ["follower", "follower", "leader"]


def test_ensemble_key_parses_and_connects(ensemble):
    text = _key(ensemble)
    key = ClusterKey.parse(text)
    assert [port for _, port in key.servers] == [s.port for s in ensemble.servers]
    assert ClusterKey.parse(str(key)) == key
    writer = connect(text)
    reader = connect(text)
    try:
        writer.create(key.znode_parent + "/x", b"hello", makepath=True)
        reader.sync(key.znode_parent + "/x")
        assert reader.get(key.znode_parent + "/x")[0] == b"hello"
    finally:
        for client in (writer, reader):
            client.stop()
            client.close()


def test_peer_and_queue_storage_over_an_ensemble_key(ensemble):
    key = ClusterKey.parse(_key(ensemble))
    zk = connect(key)
    try:
        paths = ZNodePaths(parent=key.znode_parent)
        peers = ReplicationPeerStorage(zk, paths)
        peers.add_peer("1", ReplicationPeerConfig(cluster_key=_key(ensemble)))
        peers.set_peer_state("1", False)
        assert peers.list_peer_ids() == ["1"] and not peers.is_peer_enabled("1")
        assert peers.get_peer_config("1").cluster_key.startswith(ensemble.quorum)
        queues = ReplicationQueueStorage(zk, paths)
        queues.add_wal("rs1,16020,1", "1", "rs1%2C16020%2C1.100")
        queues.set_wal_position("rs1,16020,1", "1", "rs1%2C16020%2C1.100", 4242)
        assert queues.get_wal_position("rs1,16020,1", "1", "rs1%2C16020%2C1.100") == 4242
        assert queues.get_all_wals() == {"rs1%2C16020%2C1.100"}
    finally:
        zk.stop()
        zk.close()


def test_one_server_stopped_mid_operation_and_work_continues(ensemble):
    """Stop the very member the client talks to while a worker writes queue positions.

    kazoo moves the session to another member; a call in flight at that moment can fail with
    ConnectionLoss, which callers retry with the client's retry policy (connect(): command_retry),
    as HBase's RecoverableZooKeeper does. Nothing written is lost and the session survives.
    """
    text = _key(ensemble)
    key = ClusterKey.parse(text)
    zk = connect(text)
    paths = ZNodePaths(parent=key.znode_parent)
    queues = ReplicationQueueStorage(zk, paths)
    server, queue_id = "rs1,16020,1", "2"
    wals = [f"rs1%2C16020%2C1.{1000 + i}" for i in range(400)]
    losses: list[str] = []
    done: list[str] = []
    errors: list[BaseException] = []

    def call(func, *args):
        def once():
            try:
                return func(*args)
            except ConnectionLoss:
                losses.append(func.__name__)
                raise

        return zk.retry(once)

    def worker() -> None:
        try:
            for i, wal in enumerate(wals):
                call(queues.add_wal, server, queue_id, wal)
                call(queues.set_wal_position, server, queue_id, wal, 100 + i)
                done.append(wal)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    session_id = zk.client_id[0]
    victim = _serving_server(ensemble, session_id)
    thread = threading.Thread(target=worker)
    thread.start()
    try:
        while len(done) < 50 and thread.is_alive():
            time.sleep(0.005)
        victim.stop()  # SIGTERM while the worker keeps writing
        assert len(done) < len(wals), "the worker finished before the server stopped; make the run longer"
        thread.join(120)
        assert not thread.is_alive() and errors == []
        print(f"calls retried after ConnectionLoss: {losses}")
        assert zk.client_id[0] == session_id  # same session, now on another member
        assert _serving_server(ensemble, session_id) is not victim
        assert queues.get_wals_in_queue(server, queue_id) == wals
        positions = [queues.get_wal_position(server, queue_id, wal) for wal in wals]
        assert positions == [100 + i for i in range(len(wals))]
        assert sorted(s.status().mode for s in ensemble.servers if s is not victim) == ["follower", "leader"]
    finally:
        thread.join(120)
        zk.stop()
        zk.close()
        ensemble.restart(victim)
    assert sorted(s.status().mode for s in ensemble.servers) == ["follower", "follower", "leader"]
