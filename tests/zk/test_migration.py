"""Issue 23: hbrep's znodes move out of HBase's replication tree into hbrep's own root, once, on first start."""

from __future__ import annotations

import json
import threading
import uuid

from kazoo.client import KazooClient

from replication.config import Config
from replication.zk.layout import ZNodePaths
from replication.zk.migration import migrate_legacy_znodes


def _client(zk_server) -> KazooClient:
    client = KazooClient(hosts=zk_server.hosts)
    client.start(timeout=15)
    return client


def _old_layout(zk: KazooClient, paths: ZNodePaths) -> dict[str, bytes]:
    """What an hbrep before issue 23 left in ``<parent>/replication``: a lease, a dead mark, a token, a journal."""
    old = {
        f"{paths.replication}/hbrep-leases/1": json.dumps({"owner": "run-1", "expires_ms": 1}).encode(),
        f"{paths.replication}/hbrep-dead/h,1,1": b"1700000000000",
        f"{paths.replication}/hbrep-consistency/1799999999999-abc": b'{"peer": "1"}',
    }
    for path, data in old.items():
        zk.create(path, data, makepath=True)
    for _ in range(3):
        zk.create(f"{paths.replication}/hbrep-journal/q-", b"h,1,1/1", sequence=True, makepath=True)
    zk.create(paths.peer("1"), b"peer config stays", makepath=True)  # HBase's own: untouched
    return old


def test_old_znodes_move_to_hbreps_root_and_nothing_stays_in_hbases_tree(zk_server):
    zk = _client(zk_server)
    try:
        paths = ZNodePaths(parent=f"/mig-{uuid.uuid4().hex[:8]}")
        _old_layout(zk, paths)
        moved = migrate_legacy_znodes(zk, paths)
        assert sorted(moved) == sorted(
            f"{paths.replication}/hbrep-{n}" for n in ("leases", "dead", "consistency", "journal")
        )
        assert zk.get_children(paths.replication) == ["peers"]  # only what HBase writes there
        assert zk.get(paths.peer("1"))[0] == b"peer config stays"
        assert paths.hbrep_root == f"{paths.parent}/hbrep"
        assert json.loads(zk.get(paths.lease("1"))[0]) == {"owner": "run-1", "expires_ms": 1}
        assert zk.get(paths.dead_server("h,1,1"))[0] == b"1700000000000"
        assert zk.get(paths.consistency_token("1799999999999-abc"))[0] == b'{"peer": "1"}'
        assert zk.exists(paths.journal) is None  # not copied: the next writer starts a new journal
        assert migrate_legacy_znodes(zk, paths) == []  # a second start finds nothing to move
    finally:
        zk.stop()
        zk.close()


def test_a_configured_root_and_two_processes_migrating_at_once(zk_server):
    parent = f"/mig-{uuid.uuid4().hex[:8]}"
    root = f"/hbrep-own-{uuid.uuid4().hex[:8]}/a"
    paths = ZNodePaths(Config.load(env={}, overrides={"hbrep.zookeeper.znode.root": root}), parent=parent)
    clients = [_client(zk_server) for _ in range(3)]
    try:
        _old_layout(clients[0], paths)
        for i in range(40):  # enough dead marks that the two copies overlap
            clients[0].create(f"{paths.replication}/hbrep-dead/s{i},1,1", str(i).encode())
        errors: list[BaseException] = []

        def run(zk: KazooClient) -> None:
            try:
                migrate_legacy_znodes(zk, paths)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(c,)) for c in clients[1:]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        zk = clients[0]
        assert zk.get_children(paths.replication) == ["peers"]
        assert len(zk.get_children(paths.dead_servers)) == 41
        assert all(zk.get(f"{paths.dead_servers}/s{i},1,1")[0] == str(i).encode() for i in range(40))
        assert paths.lease("1") == f"{root}/leases/1" and zk.exists(paths.lease("1"))
    finally:
        for client in clients:
            client.stop()
            client.close()
