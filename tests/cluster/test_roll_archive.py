"""WAL roll and archive rules (spec §2, §4.1): queue registration before use, archive only when flushed, maxlogs."""

from __future__ import annotations

import os
import time

import pytest

from replication.cluster.embedded import start_cluster
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.names import old_wal_dir, wal_dir
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage
from tests.cluster.helpers import wal_entries, wal_files

pytestmark = pytest.mark.slow


def _fill(client, table: str, n: int, size: int = 200, prefix: bytes = b"r") -> None:
    for i in range(n):
        client.batch(table, [_put(prefix + b"%05d" % i, b"x" * size)])


def _put(row: bytes, value: bytes):
    from replication.wal.model import Cell, CellType

    return Cell(row, b"f", b"q", 1000, int(CellType.PUT), value)


def _wait(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_every_wal_is_queued_for_every_peer_before_use(cluster_key, tmp_path, cluster_conf, zk_abs):
    paths = ZNodePaths(cluster_conf, parent=cluster_key.rsplit(":", 1)[1])
    peers = ReplicationPeerStorage(zk_abs, paths)
    peers.add_peer("1", ReplicationPeerConfig(cluster_key="127.0.0.1:2181:/peer1"))
    peers.add_peer("2", ReplicationPeerConfig(cluster_key="127.0.0.1:2181:/peer2"), enabled=False)
    queues = ReplicationQueueStorage(zk_abs, paths)
    with start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=cluster_conf) as cluster:
        (server,) = cluster.servers
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        with cluster.client() as client:
            _fill(client, "t", 200)  # ~50 KB with 16 KiB rolls -> several WALs
            files = [os.path.basename(p) for p in wal_files(cluster.root, server)]
            assert len(files) >= 3
            for peer_id in ("1", "2"):  # the disabled peer keeps tracking edits too
                assert queues.get_wals_in_queue(server, peer_id) == files
            # a roll registers the new WAL before anything is written to it
            new_wal = client.roll_wal(server)
            assert new_wal in queues.get_wals_in_queue(server, "1")
            assert new_wal in queues.get_wals_in_queue(server, "2")
            assert os.path.getsize(os.path.join(wal_dir(cluster.root, server), new_wal)) < 200  # header only
            # a peer added later starts from the server's current WAL only (spec §4.1)
            peers.add_peer("3", ReplicationPeerConfig(cluster_key="127.0.0.1:2181:/peer3"))
            _wait(lambda: queues.get_wals_in_queue(server, "3") == [new_wal])
            client.put("t", b"after", b"f", b"q", b"v")
            rolled = client.roll_wal(server)
            assert queues.get_wals_in_queue(server, "3") == [new_wal, rolled]
        entries = wal_entries(cluster.root, server)
        assert len(entries) == 201  # nothing lost across rolls


def test_closed_wals_are_archived_only_once_flushed(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", "f"))
    server = embedded.servers[0]
    with embedded.client() as client:
        for i in range(120):
            client.mutate_on(server, "t", [_put(b"r%04d" % i, b"y" * 300)])
        live = wal_dir(embedded.root, server)
        old = old_wal_dir(embedded.root)
        assert len(os.listdir(live)) >= 3  # rolled on size
        assert [n for n in os.listdir(old) if n.startswith("127.0.0.1%2C" + server.split(",")[1])] == []
        files = client.flush("t")
        assert files
        mine = [n for n in os.listdir(old) if server.split(",")[1] in n]
        _wait(lambda: len(os.listdir(live)) == 1)
        assert len(mine) >= 2
        # archive sets the mtime to "now"
        for name in mine:
            assert abs(os.path.getmtime(os.path.join(old, name)) - time.time()) < 60


def test_maxlogs_forces_flush_and_archive(cluster_key, tmp_path, cluster_conf):
    conf = cluster_conf.with_overrides({"hbase.regionserver.maxlogs": 2})
    with start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=conf) as cluster:
        (server,) = cluster.servers
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", "f"))
        with cluster.client() as client:
            for i in range(300):
                client.mutate_on(server, "t", [_put(b"r%04d" % i, b"z" * 300)])
            live = wal_dir(cluster.root, server)
            # current WAL + at most maxlogs closed ones (the chore enforces it within a moment)
            _wait(lambda: len(os.listdir(live)) <= 3)
            data = os.path.join(cluster.root, "data")
            assert any(n.endswith(".parquet") for _, _, fs in os.walk(data) for n in fs)
            archived = len(os.listdir(old_wal_dir(cluster.root)))
            assert archived >= 2 and archived + len(os.listdir(live)) >= 5  # ~120 KB in 16 KiB WALs


def test_period_roll_and_interval_flush(cluster_key, tmp_path, cluster_conf):
    conf = cluster_conf.with_overrides(
        {"hbase.regionserver.logroll.period": 600, "hbase.regionserver.optionalcacheflushinterval": 600}
    )
    with start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=conf) as cluster:
        (server,) = cluster.servers
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", "f"))
        live = wal_dir(cluster.root, server)
        first = os.listdir(live)
        with cluster.client() as client:
            client.put("t", b"r", b"f", b"q", b"v")
        data = os.path.join(cluster.root, "data")
        # the period rolls the WAL that has an entry; the interval flushes the memstore; the WAL is archived
        _wait(lambda: any(n.endswith(".parquet") for _, _, fs in os.walk(data) for n in fs))
        _wait(lambda: os.listdir(old_wal_dir(cluster.root)) == first)
        current = os.listdir(live)
        assert len(current) == 1 and current != first
        time.sleep(1.5)  # a WAL without entries is not rolled on the period (rollWriter skips it)
        assert os.listdir(live) == current


def test_separate_oldlogdir_archives_under_the_servers_folder(cluster_key, tmp_path, cluster_conf):
    """``hbase.separate.oldlogdir.by.regionserver=true``: archived WALs go to ``oldWALs/<server>/`` (HBase's
    AbstractFSWALProvider), where find_wal looks for them."""
    from replication.fs import LocalFileSystem
    from replication.wal.names import find_wal

    conf = cluster_conf.with_overrides({"hbase.separate.oldlogdir.by.regionserver": True})
    with start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=conf) as cluster:
        (server,) = cluster.servers
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", "f"))
        with cluster.client() as client:
            for i in range(120):
                client.mutate_on(server, "t", [_put(b"r%04d" % i, b"y" * 300)])
            client.flush("t")
            own = os.path.join(old_wal_dir(cluster.root), server)
            _wait(lambda: os.path.isdir(own) and len(os.listdir(own)) >= 2)
            archived = sorted(os.listdir(own))
            assert [n for n in os.listdir(old_wal_dir(cluster.root)) if n != server] == []
            found = find_wal(LocalFileSystem(), cluster.root, archived[0])
            assert found == os.path.join(own, archived[0])
