"""Replication end to end with both clusters' roots on a real HDFS (Hadoop's NameNode + DataNode).

The source's root is ``hdfs://127.0.0.1:<http port>/...`` (hbrep reads hdfs:// as WebHDFS on the
NameNode's HTTP port), the peer's ``webhdfs://...``: WALs, oldWALs, table files and descriptors all
live on HDFS. A ship cycle runs through Spark reading those WALs; a WAL is archived between the
snapshot and the read; the log cleaner deletes on HDFS; VerifyReplication and the GX checks read the
table files from HDFS. Faults: the DataNode SIGKILLed mid-read, the NameNode in safe mode.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from support import add_peer, create_table, cycle, queue_snapshot, table_state

from replication.checks.peer_checks import check_replicated_table, verify_replication
from replication.cleaner import clean_once, old_wal_files
from replication.config import Config
from replication.fs import FileSystemError, get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import commit_step, ship_step, snapshot_step
from replication.wal.model import Cell, CellType
from replication.wal.names import old_wal_dir
from replication.zk.client import connected

pytestmark = pytest.mark.slow

HDFS_CONF = {
    "replication.source.sleepforretries": "50",
    "replication.source.maxretriesmultiplier": "2",
    "hbrep.source.ship.max.attempts": "2",
    "replication.sleep.before.failover": "0",
    "hbase.regionserver.hlog.blocksize": str(256 * 1024),
    "hbase.master.logcleaner.ttl": "0",
}


@dataclass
class HdfsPair:
    """The shape of tests/conftest.py's Pair, which the ``support`` helpers take."""

    source: Any
    peer: Any
    source_key: Any
    peer_key: Any
    conf: Config


@pytest.fixture(scope="module")
def hdfs_pair(zk_server, hdfs_cluster) -> Iterator[object]:
    """Cluster A (2 region servers, root hdfs://) → cluster B (1, root webhdfs://), both on the session HDFS."""
    from replication.cluster.embedded import start_cluster
    from replication.zk.cluster_key import ClusterKey

    conf = Config.load(env={}, overrides=HDFS_CONF)
    tag = uuid.uuid4().hex[:8]
    source_root = f"hdfs://127.0.0.1:{hdfs_cluster.ports['http']}/hbase-a-{tag}"
    peer_root = hdfs_cluster.webhdfs_root(f"/hbase-b-{tag}")
    source_key = f"127.0.0.1:{zk_server.port}:/hdfs-a-{tag}"
    peer_key = f"127.0.0.1:{zk_server.port}:/hdfs-b-{tag}"
    source = start_cluster(source_key, source_root, 2, conf=conf, name="a")
    try:
        peer = start_cluster(peer_key, peer_root, 1, conf=conf, name="b")
    except BaseException:
        source.stop()
        raise
    pair = HdfsPair(source, peer, ClusterKey.parse(source_key), ClusterKey.parse(peer_key), conf)
    try:
        add_peer(pair, "1")
        yield pair
    finally:
        peer.stop()
        source.stop()


def _table(pair) -> str:
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    return table


def _put_rows(pair, table: str, rows: range, roll: bool = False) -> set[bytes]:
    keys = set()
    with pair.source.client() as client:
        cells = []
        for i in rows:
            key = f"row{i:05d}".encode()
            keys.add(key)
            cells.append(Cell(key, b"f", b"q", 1000 + i, CellType.PUT, b"v" * 200))
        client.batch(table, cells)
        if roll:
            for server in pair.source.servers:
                client.roll_wal(server)
    return keys


def _row_keys(spark, cluster, table: str) -> set[bytes]:
    return {row for row, *_ in table_state(spark, cluster, table)}


def _positions(pair) -> dict:
    return queue_snapshot(pair).as_dict()


def test_wals_and_table_files_live_on_hdfs_and_a_cycle_ships_them(hdfs_pair, hdfs_cluster, spark):
    pair = hdfs_pair
    table = _table(pair)
    keys = _put_rows(pair, table, range(300))
    fs, root = get_filesystem(pair.source.root)
    assert pair.source.root.startswith("hdfs://")
    wal_files = [s for d in fs.list(fs.join(root, "WALs")) for s in fs.list(d.path)]
    assert len(wal_files) >= 2 and all(s.length > 0 for s in wal_files)
    assert all(r["ugi"].startswith("root") for r in hdfs_cluster.audit_entries(wal_files[0].path))
    report = cycle(pair, spark)
    assert report.spark_job and all(q.status == "ok" for q in report.queues), report.queues
    assert _row_keys(spark, pair.peer, table) == keys
    assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)
    peer_fs, peer_root = get_filesystem(pair.peer.root)
    table_files = [s for s in _walk(peer_fs, peer_fs.join(peer_root, "data")) if s.name.endswith(".parquet")]
    assert table_files, "the peer's flushed table files are on HDFS"
    with connected(pair.source_key) as zk:
        verified = verify_replication(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table)
        assert (verified.good_rows, verified.bad_row_count) == (300, 0)
        quality = check_replicated_table(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table)
    assert quality.success and quality.source_rows == 300 and quality.peer_rows == 300


def _walk(fs, path):
    for status in fs.list(path):
        if status.is_dir:
            yield from _walk(fs, status.path)
        else:
            yield status


def test_a_wal_archived_between_snapshot_and_read_is_found_in_old_wals(hdfs_pair, spark):
    pair = hdfs_pair
    table = _table(pair)
    keys = _put_rows(pair, table, range(1000, 1100), roll=True)
    fs, root = get_filesystem(pair.source.root)
    with connected(pair.source_key) as zk:
        outcome = snapshot_step(zk, pair.source_key, pair.conf, owner="archiver-test")
        manifest = outcome.manifest_path
        # archive every finished WAL the snapshot located under WALs/ (what a region server does)
        moved = []
        for d in fs.list(fs.join(root, "WALs")):
            live = [s for s in fs.list(d.path)]
            for status in live[:-1]:  # the newest one is still being written
                fs.rename(status.path, fs.join(old_wal_dir(root), status.name))
                moved.append(status.name)
        assert moved
        ship_step(manifest, pair.conf, runner=runner_for(pair.conf, spark))
        report = commit_step(zk, pair.source_key, pair.conf, manifest, owner="archiver-test")
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert keys <= _row_keys(spark, pair.peer, table)


def test_a_cycle_whose_manifest_and_result_are_on_hdfs_commits_its_positions(hdfs_pair, spark):
    """The Airflow hook's work dir for a root on HDFS is on that HDFS (shared by workers on other hosts):
    the commit reads the result there (it once looked for it on the local disk, found nothing, and
    committed no position)."""
    from replication.source.manifest import shared_work_dir

    pair = hdfs_pair
    table = _table(pair)
    keys = _put_rows(pair, table, range(2000, 2050))
    work = shared_work_dir(pair.conf, pair.source.root)
    assert work.startswith("hdfs://"), work
    before = _positions(pair)
    with connected(pair.source_key) as zk:
        outcome = snapshot_step(zk, pair.source_key, pair.conf, owner="work-on-hdfs", work_dir=work)
        assert outcome.manifest_path.startswith(work) and outcome.queues
        ship_step(outcome.manifest_path, pair.conf, runner=runner_for(pair.conf, spark))
        report = commit_step(zk, pair.source_key, pair.conf, outcome.manifest_path, owner="work-on-hdfs")
    assert report.queues and all(q.status == "ok" for q in report.queues), report.queues
    assert report.peers["1"].rows_shipped >= len(keys) and report.peers["1"].positions_advanced > 0
    assert _positions(pair) != before
    assert keys <= _row_keys(spark, pair.peer, table)


def test_the_log_cleaner_deletes_shipped_old_wals_on_hdfs(hdfs_pair, hdfs_cluster, spark):
    pair = hdfs_pair
    table = _table(pair)
    _put_rows(pair, table, range(2000, 2050), roll=True)
    assert all(q.status == "ok" for q in cycle(pair, spark).queues)
    with pair.source.client() as client:
        client.flush(table)
    fs, root = get_filesystem(pair.source.root)
    deadline = time.monotonic() + 30
    while not old_wal_files(fs, root) and time.monotonic() < deadline:  # archived once flushed
        time.sleep(0.2)
    before = {s.name for s in old_wal_files(fs, root)}
    assert before
    with connected(pair.source_key) as zk:
        from replication.zk.layout import ZNodePaths
        from replication.zk.queue_storage import ReplicationQueueStorage

        held = ReplicationQueueStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)).get_all_wals()
        report = clean_once(zk, pair.source_key, pair.conf)
    assert report.error is None
    deleted = {p.rsplit("/", 1)[-1] for p in report.deleted}
    assert deleted == before - set(held) and deleted
    assert {s.name for s in old_wal_files(fs, root)} == before - deleted
    for path in report.deleted:
        assert [r["cmd"] for r in hdfs_cluster.audit_entries(path)][-1] == "delete"


def test_datanode_killed_mid_read_fails_the_ship_cleanly_and_it_resumes(hdfs_pair, hdfs_cluster, spark):
    pair = hdfs_pair
    table = _table(pair)
    keys = set()
    for batch in range(4):  # several finished WALs per server: the ship opens one after another
        keys |= _put_rows(pair, table, range(3000 + batch * 200, 3200 + batch * 200), roll=True)
    fs, root = get_filesystem(pair.source.root)
    wal_dir = fs.join(root, "WALs")
    killed = threading.Event()
    audit_start = len(hdfs_cluster.audit_log.read_text().splitlines())

    def kill_on_first_wal_read() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            lines = hdfs_cluster.audit_log.read_text().splitlines()[audit_start:]
            if any("cmd=open" in line and f"src={wal_dir}/" in line for line in lines):
                hdfs_cluster.kill_datanode()
                killed.set()
                return
            time.sleep(0.005)

    before = _positions(pair)
    killer = threading.Thread(target=kill_on_first_wal_read, daemon=True)
    killer.start()
    try:
        try:
            report = cycle(pair, spark)
            failed = [q for q in report.queues if q.status != "ok"]
            errors = " ".join(str(q.get("error")) for q in failed)
        except FileSystemError as exc:  # the snapshot or commit step met the dead DataNode
            failed, errors = ["cycle"], str(exc)
        killer.join(130)
        assert killed.is_set(), "the ship never opened a WAL"
        assert failed, "a ship with its DataNode SIGKILLed mid-read must not report success"
        assert "WebHDFS" in errors or "DataNode" in errors or "unreachable" in errors, errors
    finally:
        hdfs_cluster.start_datanode()
        hdfs_cluster.wait_ready()
    after_fail = _positions(pair)
    for replicator, queues in before.items():  # positions moved only for what the peer acknowledged
        for queue_id, wals in queues.items():
            for wal, position in wals.items():
                assert after_fail.get(replicator, {}).get(queue_id, {}).get(wal, position) >= position
    for _ in range(3):
        report = cycle(pair, spark)
        if all(q.status == "ok" for q in report.queues):
            break
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert _row_keys(spark, pair.peer, table) == _row_keys(spark, pair.source, table) == keys


def test_namenode_in_safe_mode_is_a_clear_error_and_nothing_advances(hdfs_pair, hdfs_cluster, spark):
    pair = hdfs_pair
    table = _table(pair)
    keys = _put_rows(pair, table, range(5000, 5100), roll=True)
    before = _positions(pair)
    hdfs_cluster.enter_safe_mode()
    try:
        assert hdfs_cluster.status().safe_mode is True
        # the peer's region server cannot write its WAL, so the ship fails; the commit then cannot
        # record the cycle's metrics on the source's root: one FileSystemError naming safe mode
        with pytest.raises(FileSystemError, match="SafeModeException: Cannot create file") as info:
            cycle(pair, spark)
        assert "\n" not in str(info.value)
        assert _positions(pair) == before
    finally:
        hdfs_cluster.leave_safe_mode()
    report = cycle(pair, spark)
    assert all(q.status == "ok" for q in report.queues), report.queues
    assert keys <= _row_keys(spark, pair.peer, table)
    assert _row_keys(spark, pair.peer, table) == _row_keys(spark, pair.source, table)


def test_a_user_without_write_access_to_old_wals_gets_one_error_and_nothing_is_deleted(
    hdfs_pair, hdfs_cluster, spark, monkeypatch
):
    pair = hdfs_pair
    table = _table(pair)
    _put_rows(pair, table, range(6000, 6050), roll=True)
    assert all(q.status == "ok" for q in cycle(pair, spark).queues)
    with pair.source.client() as client:
        client.flush(table)
    fs, root = get_filesystem(pair.source.root)
    deadline = time.monotonic() + 30
    while not old_wal_files(fs, root) and time.monotonic() < deadline:
        time.sleep(0.2)
    before = {s.path for s in old_wal_files(fs, root)}
    assert before
    old_wals = fs.join(root, "oldWALs")
    assert fs.client.status(old_wals)["owner"] == "root"  # written by the region servers (the OS user)
    fs.client.set_permission(old_wals, "755")  # as the superuser: others may read, not delete
    monkeypatch.setenv("HBREP_WEBHDFS_USER", "cleaner-without-rights")
    with connected(pair.source_key) as zk, pytest.raises(FileSystemError) as info:
        clean_once(zk, pair.source_key, pair.conf)
    message = str(info.value)
    assert "AccessControlException: Permission denied: user=cleaner-without-rights, access=WRITE" in message
    assert "\n" not in message
    monkeypatch.delenv("HBREP_WEBHDFS_USER")
    assert {s.path for s in old_wal_files(fs, root)} == before  # nothing deleted
