"""``hbase.replication`` false, as the reference guide describes the switch: real region servers register
no queues, the ship cycle and the failover pass do nothing and say why, add_peer warns; the dead server's
edits are still recovered (log splitting is not replication)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
from support import create_table

from replication.cluster.embedded import start_cluster
from replication.config import Config
from replication.failover import failover_once
from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.jobs.ship_window import run_window
from replication.source.cycle import run_cycle
from replication.tables.table_files import list_table_files
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.queue_storage import ReplicationQueueStorage

pytestmark = pytest.mark.slow

OFF = {"hbase.replication": "false", "replication.sleep.before.failover": "0"}


def hbrep(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def off_pair(zk_server, tmp_path_factory):
    conf = Config.load(env={}, overrides=OFF)
    source_key = f"127.0.0.1:{zk_server.port}:/hbase-off-{uuid.uuid4().hex[:8]}"
    peer_key = f"127.0.0.1:{zk_server.port}:/hbase-offpeer-{uuid.uuid4().hex[:8]}"
    source = start_cluster(source_key, str(tmp_path_factory.mktemp("off")), 2, conf=conf, name="off")
    try:
        peer = start_cluster(peer_key, str(tmp_path_factory.mktemp("offpeer")), 1, conf=conf, name="offpeer")
    except BaseException:
        source.stop()
        raise
    try:
        yield source, peer, conf
    finally:
        peer.stop()
        source.stop()


def test_switched_off_nothing_is_queued_shipped_or_claimed(off_pair, tmp_path, spark):
    source, peer, conf = off_pair
    site = tmp_path / "hbase-site.xml"
    site.write_text(
        "<configuration><property><name>hbase.replication</name><value>false</value></property></configuration>"
    )
    added = hbrep("--conf", str(site), "--cluster", source.cluster_key, "add_peer", "1", peer.cluster_key)
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == f"peer 1 added ({peer.cluster_key}, ENABLED)"
    assert added.stderr.strip().splitlines() == [
        f"warning: replication is disabled: hbase.replication is false (from {site}); "
        "nothing is shipped to peer 1 until it is true"
    ]
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (source, peer):
        create_table(cluster, table, ("f", 1))
    with source.client() as client:
        client.batch(table, [Cell(f"r{i:03d}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v") for i in range(50)])
    key = ClusterKey.parse(source.cluster_key)
    paths = ZNodePaths(conf, parent=key.znode_parent)
    with connected(key) as zk:
        # a peer added while the servers run, and the WALs they rolled at start: no queue anywhere
        assert ReplicationQueueStorage(zk, paths).get_list_of_replicators() == []
        report = run_cycle(zk, key, conf, runner=runner_for(conf, spark), work_dir=tmp_path / "work")
        assert report.disabled == "replication is disabled: hbase.replication is false (from overrides)"
        assert (report.spark_job, report.peers, report.queues) == (False, {}, [])
        assert zk.get_children(paths.peers) == ["1"]
        # a ship window (the Airflow ship task on Spark Connect) ends at its first pass, saying why
        runner = runner_for(conf, spark)
        window = run_window(zk, key, conf, runner, owner="t", work_dir=tmp_path / "w", window_ms=60_000)
        assert window.disabled == window.ended == report.disabled
        assert [(p.queues, p.rows) for p in window.passes] == [(0, 0)]
        assert not zk.exists(f"{paths.leases}/1")
        victim = source.servers[0]
        source.kill(victim)
        source.wait_until_dead(victim)
        failover = failover_once(zk, key, conf)
        assert failover.disabled == report.disabled
        [outcome] = failover.servers
        assert (outcome.server, outcome.action, outcome.error) == (victim, "replication-disabled", report.disabled)
        assert outcome.moved == {} and outcome.claimer is None
        assert ReplicationQueueStorage(zk, paths).get_list_of_replicators() == []
    fs, root = get_filesystem(peer.root)
    assert list_table_files(fs, root, table) == []  # nothing reached the peer
    cli = hbrep("--conf", str(site), "--cluster", source.cluster_key, "ship", "--once")
    assert cli.returncode == 0, cli.stderr
    assert f"nothing shipped, replication is disabled: hbase.replication is false (from {site})" in cli.stdout


def test_a_value_that_is_not_a_boolean_is_one_error_line(tmp_path, cluster_key):
    site = tmp_path / "hbase-site.xml"
    site.write_text("<configuration><property><name>hbase.replication</name><value>maybe</value></property>"
                    "</configuration>")  # fmt: skip
    result = hbrep("--conf", str(site), "--cluster", cluster_key, "add_peer", "1", "zk9:2181:/hbase-b")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"hbrep: error: bad value for hbase.replication (from {site}): 'maybe' is not a boolean (true/false)"
    ]
