from __future__ import annotations

import os
import time
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kazoo.security import make_digest_acl

from replication.cleaner import clean_once
from replication.cluster.info import ClusterInfo, write_cluster_info
from replication.config import Config
from replication.zk.client import connected
from replication.zk.cluster_id import create_cluster_id_if_absent
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage

TTL = 600_000
SERVERS = ["10.0.0.1,16020,1", "10.0.0.2,16020,2"]


def make_source(zk, key: ClusterKey, root) -> ZNodePaths:
    paths = ZNodePaths(Config.load(env={}), parent=key.znode_parent)
    create_cluster_id_if_absent(zk, paths)
    write_cluster_info(zk, paths, ClusterInfo("src", str(root), key.znode_parent))
    return paths


def old_wal(root, name: str, age_ms: int) -> str:
    path = os.path.join(root, "oldWALs", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(b"PWAL" + b"x" * 10)
    mtime = (time.time() * 1000 - age_ms) / 1000
    os.utime(path, (mtime, mtime))
    return path


def wal_name(i: int) -> str:
    return f"10.0.0.1%2C16020%2C1.{1700000000000 + i}"


def test_deletes_only_old_unqueued_wals_and_explains(zk_server, cluster_key, tmp_path):
    key = ClusterKey.parse(cluster_key)
    conf = Config.load(env={})
    with connected(key) as zk:
        paths = make_source(zk, key, tmp_path)
        queues = ReplicationQueueStorage(zk, paths)
        queues.add_wal(SERVERS[0], "2", wal_name(1))  # queued (e.g. a disabled peer's)
        held = old_wal(tmp_path, wal_name(1), TTL * 2)
        young = old_wal(tmp_path, wal_name(2), 1000)
        future = old_wal(tmp_path, wal_name(3), -TTL)
        gone = old_wal(tmp_path, wal_name(4), TTL * 2)
        per_server = old_wal(tmp_path, f"{SERVERS[1]}/{wal_name(5)}", TTL * 2)
        foreign = old_wal(tmp_path, "README", TTL * 2)
        report = clean_once(zk, key, conf, explain=True)
    assert sorted(report.deleted) == sorted([gone, per_server])
    assert report.bytes_freed == 28
    assert report.kept[held] == f"held by queue {SERVERS[0]}/2"
    assert report.kept[young].startswith("too young")
    assert report.kept[future] == "modification time is in the future"
    assert report.kept[foreign] == "not a WAL file name"
    assert all(os.path.exists(p) for p in (held, young, future, foreign))


def test_nothing_deleted_when_zookeeper_cannot_be_read(zk_server, cluster_key, tmp_path):
    key = ClusterKey.parse(cluster_key)
    with connected(key) as zk:
        paths = make_source(zk, key, tmp_path)
        path = old_wal(tmp_path, wal_name(1), TTL * 2)
        zk.create(f"{paths.queues}/{SERVERS[0]}/2/{wal_name(9)}", b"", makepath=True)
        # Only another user may read the queues now: the snapshot fails, so nothing is deletable.
        zk.set_acls(paths.queues, [make_digest_acl("someone-else", "secret", all=True)])
        report = clean_once(zk, key, Config.load(env={}))
    assert report.error is not None and "nothing deleted" in report.error
    assert report.deleted == [] and os.path.exists(path)


layouts = st.lists(
    st.tuples(st.integers(0, 40), st.sampled_from([0, 1, 2]), st.booleans(), st.integers(0, 3 * TTL)),
    min_size=1,
    max_size=25,
    unique_by=lambda t: t[0],
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=layouts)
def test_property_never_deletes_a_queued_wal(zk_server, tmp_path_factory, layout):
    """Random queue layouts: every WAL any queue holds survives; every old unqueued WAL goes."""
    root = tmp_path_factory.mktemp("root")
    key = ClusterKey.parse(f"127.0.0.1:{zk_server.port}:/prop-{uuid.uuid4().hex[:8]}")
    with connected(key) as zk:
        paths = make_source(zk, key, root)
        storage = ReplicationQueueStorage(zk, paths)
        queued, files = set(), {}
        for index, owner, in_queue, age in layout:
            name = wal_name(index)
            files[name] = (old_wal(root, name, age), age)
            if in_queue:
                storage.add_wal(SERVERS[owner % 2], f"{owner}-{SERVERS[1 - owner % 2]}" if owner == 2 else "1", name)
                queued.add(name)
        report = clean_once(zk, key, Config.load(env={}))
        zk.delete(key.znode_parent, recursive=True)
    deleted = {os.path.basename(p) for p in report.deleted}
    assert not (deleted & queued)
    expected = {n for n, (_, age) in files.items() if n not in queued and age > TTL + 5_000}
    assert expected <= deleted
    for name, (path, _) in files.items():
        assert os.path.exists(path) == (name not in deleted)
