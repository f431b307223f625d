"""The distributed stack (``make up DIST=1``) under Airflow's real scheduler, driven through the REST API.

One stack for the module: ZooKeeper; HDFS holding cluster a's root (its WALs) and the ship work dir;
cluster a (one region server) → cluster b (local root), peer 1; the Redis broker; a Spark standalone
master with two workers and the Spark Connect server on it; Airflow with the CeleryExecutor and two
Celery workers, each with its own HOME, temp dir, working dir and Airflow home. The tests run in order
on it: the DAGs on their schedules, a ship run spread over both workers, the ship and verify jobs in
spark-submit mode on the same Spark master, then the chaos steps (a Celery
worker SIGKILLed mid-ship, a Spark worker SIGKILLed mid-job, the broker restarted, PostgreSQL restarted),
each ending with the sets of row keys and cells compared on both clusters.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replication.config import Config
from replication.devstack.airflow_api import AirflowApi
from replication.devstack.airflow_stack import (
    AirflowStandalone,
    airflow_environment,
    launch_standalone,
    metadata_database,
)
from replication.devstack.dist_stack import DistServices
from replication.devstack.zookeeper import ZooKeeperServer
from replication.net import free_port
from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow

SHIP = "hbrep_ship"
CLUSTER_CONF = {"hbase.regionserver.optionalcacheflushinterval": 0, "zookeeper.session.timeout": 6000,
                "hbrep.regionserver.chore.interval.ms": 200}  # fmt: skip
TABLE = "t"


@dataclass
class Dist:
    """The running stack of this module."""

    services: DistServices
    source: Any  # EmbeddedCluster on HDFS
    peer: Any  # EmbeddedCluster, local root
    source_key: str
    airflow: AirflowStandalone
    api: AirflowApi
    env: dict[str, str]
    postgres: Any  # PostgresServer, or None when HBREP_AIRFLOW_DB=sqlite asks for SQLite

    def write(self, count: int, size: int = 200) -> set[bytes]:
        """``count`` new rows on the source (one cell each); their keys."""
        tag, now = uuid.uuid4().hex[:6], int(time.time() * 1000)
        cells = [Cell(f"{tag}-{i:05d}".encode(), b"f", b"q", now, CellType.PUT, b"v" * size) for i in range(count)]
        with self.source.client() as client:
            for start in range(0, count, 500):
                client.batch(TABLE, cells[start : start + 500])
        return {c.row for c in cells}

    def wait_same(self, timeout: float = 300.0) -> set[tuple]:
        """Wait until b holds exactly a's cells of the table (row, family, qualifier, timestamp, value);
        AssertionError naming what is missing or extra after ``timeout``. Returns the cells."""
        deadline = time.monotonic() + timeout
        while True:
            source, peer = cells_of(self.source), cells_of(self.peer)
            if source == peer:
                return source
            if time.monotonic() > deadline:
                missing = sorted(c[0] for c in source - peer)
                extra = sorted(c[0] for c in peer - source)
                raise AssertionError(f"b differs from a after {timeout:.0f}s: {len(missing)} cells missing "
                                     f"(first {missing[:3]}), {len(extra)} extra (first {extra[:3]})")  # fmt: skip
            time.sleep(3)


def cells_of(cluster: Any) -> set[tuple]:
    """Every cell of the table on ``cluster`` as (row, family, qualifier, timestamp, value)."""
    from replication.cluster.table_reader import ScanSpec, scan_rows

    with cluster.client() as client:
        return {
            (row, c.family, c.qualifier, c.timestamp, c.value)
            for row, cells in scan_rows(client, TABLE, ScanSpec())
            for c in cells
        }


def rows_of(cells: set[tuple]) -> set[bytes]:
    return {c[0] for c in cells}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Iterator[Dist]:
    """The whole stack (see module doc), DAGs paused at creation; everything stopped at the end."""
    from replication.cluster.embedded import start_cluster
    from replication.fs import get_filesystem
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    state = tmp_path_factory.mktemp("dist")
    with contextlib.ExitStack() as stack:
        zk = ZooKeeperServer(state / "zk", free_port())
        zk.start()
        stack.callback(zk.stop)
        database, postgres = metadata_database(state / "postgres", state / "airflow")
        if postgres is not None:
            stack.callback(postgres.stop)  # after Airflow's and the workers' stop (callbacks run last first)
        services = DistServices(state / "dist")
        stack.callback(services.stop)
        services.redis.start()
        source_key, peer_key = f"{zk.hosts}:/hbase-a", f"{zk.hosts}:/hbase-b"
        extra = {
            **services.airflow_extra(),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "HBREP_SHIP_SCHEDULE": "* * * * *",
            "HBREP_SHIP_ON_EDITS": "false",  # scheduled runs only
            "HBREP__hbrep__ship__window__ms": "30000",
            # a task whose worker died is failed (and retried elsewhere) after 20 s without a heartbeat
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "20",
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "5",
        }
        env = airflow_environment(state / "airflow", source_key, database=database, api_port=free_port(),
                                  spark_connect_port=services.connect.port, extra=extra)  # fmt: skip
        # Airflow (migration, then its components) and the Celery workers come up while HDFS and Spark start
        airflow = launch_standalone(env, state / "airflow.log")
        stack.callback(airflow.stop)
        for worker in services.workers:
            worker.start(env)
        services.hdfs.start()
        services.spark.start()
        services.connect.start(timeout=300)
        conf = Config.load(env={}, overrides=CLUSTER_CONF)
        peer = start_cluster(peer_key, str(state / "b"), 1, conf=conf, name="dist-b")
        stack.callback(peer.stop)
        source = start_cluster(source_key, services.source_root(), 1, conf=conf, name="dist-a")
        stack.callback(source.stop)
        for cluster in (peer, source):
            TableRegistry(*get_filesystem(cluster.root)).create(
                TableDescriptor.of(TABLE, ColumnFamilyDescriptor("f", scope=1))
            )
        ReplicationPeerStorage(source.zk, source.paths).add_peer("1", ReplicationPeerConfig(cluster_key=peer_key))
        airflow.wait_ready(timeout=600)
        for worker in services.workers:
            worker.wait_ready()
        # 180 s per call: on this 2-core machine shared with other runs (load average 35) one GET took over 60 s
        api = AirflowApi(airflow.url, "admin", airflow.admin_password(), timeout=180)
        stack.callback(api.close)
        api.call("POST", "/pools", json={"name": "zookeeper", "slots": 4, "include_deferred": False,
                                         "description": "protects the ZooKeeper ensemble"})  # fmt: skip
        for dag_id in (SHIP, "hbrep_failover", "hbrep_log_cleaner"):
            api.wait_for_dag(dag_id, timeout=300)
        yield Dist(services, source, peer, source_key, airflow, api, env, postgres)


def _hosts(api: AirflowApi, run_id: str) -> dict[str, str]:
    """task_id[map_index] → the host name of the worker that ran it (task instances that ran)."""
    return {f"{ti['task_id']}[{ti['map_index']}]": ti["hostname"] for ti in api.task_instances(SHIP, run_id)
            if ti.get("hostname")}  # fmt: skip


def test_every_dag_runs_on_its_schedule_on_the_celery_workers(dist):
    api = dist.api
    keys = dist.write(300)
    for dag_id in (SHIP, "hbrep_failover", "hbrep_log_cleaner"):
        api.set_paused(dag_id, False)
    for dag_id in (SHIP, "hbrep_failover", "hbrep_log_cleaner"):
        runs = api.wait_for_runs(dag_id, 1, run_type="scheduled", timeout=600)
        assert all(r["state"] == "success" for r in runs), (dag_id, runs)
        hosts = {ti["hostname"] for r in runs for ti in api.task_instances(dag_id, r["dag_run_id"])}
        assert hosts - {""} <= {"dist-worker-1", "dist-worker-2"} and hosts - {""}, (dag_id, hosts)
    cells = dist.wait_same()
    assert keys <= rows_of(cells)


def test_a_ship_run_spread_over_both_workers_ships_correctly(dist):
    api = dist.api
    deadline = time.monotonic() + 420
    keys: set[bytes] = set()
    while True:
        keys |= dist.write(100)
        spread = [
            (run["dag_run_id"], hosts)
            for run in api.runs(SHIP, run_type="scheduled")
            if run["state"] == "success" and len(set((hosts := _hosts(api, run["dag_run_id"])).values())) >= 2
        ]
        if spread:
            break
        assert time.monotonic() < deadline, "no successful ship run had tasks on both workers"
        time.sleep(3)
    run_id, hosts = spread[-1]
    assert set(hosts.values()) == {"dist-worker-1", "dist-worker-2"}, hosts
    assert "peer.ship[0]" in hosts, hosts
    assert keys <= rows_of(dist.wait_same())
    # the ship work dir is on HDFS, which both workers share, not under a local path of one of them (its
    # cycle folders go after each pass; the folder they were made in stays)
    from replication.fs import get_filesystem

    fs, work = get_filesystem(dist.services.source_root() + "/.hbrep/airflow-cycles")
    assert fs.exists(work), f"no ship work dir on HDFS after run {run_id}"


def test_spark_submit_mode_ships_and_verifies_on_the_clusters_master(dist, tmp_path):
    """hbrep.spark.mode=submit against the stack's Spark standalone master: the ship job and the verify job, each
    spark-submitted as an application whose executors run on both Spark workers (each worker keeps a core the
    Connect server does not hold), for a pair of clusters of its own beside the DAGs' (a source of two region
    servers with its root on HDFS, so each executor reads WALs through WebHDFS). The peer ends with exactly the
    source's cells, and verify finds exactly the one row planted in the peer only."""
    import json

    from replication.checks.verify import VerifyOptions
    from replication.cluster.embedded import start_cluster
    from replication.fs import get_filesystem
    from replication.jobs.launch import runner_for
    from replication.jobs.verify import submit_verify
    from replication.source.cycle import commit_step, ship_step, snapshot_step
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    spark = dist.services.spark
    zk_hosts = dist.source_key.rsplit(":", 1)[0]
    source_key, peer_key = (f"{zk_hosts}:/hbase-submit-{n}-{uuid.uuid4().hex[:6]}" for n in ("a", "b"))
    source_root = dist.services.hdfs.webhdfs_root(f"/hbase-submit-{uuid.uuid4().hex[:6]}")
    overrides = {**CLUSTER_CONF, "hbrep.spark.mode": "submit", "hbrep.spark.master": spark.master_url}
    conf = Config.load(env={}, overrides=overrides)
    apps_before = {app for _worker, app in _spark_apps(spark)}  # the Connect server's
    with contextlib.ExitStack() as stack:
        source = start_cluster(source_key, source_root, 2, conf=conf, name="submit-a")
        stack.callback(source.stop)
        peer = start_cluster(peer_key, str(tmp_path / "b"), 1, conf=conf, name="submit-b")
        stack.callback(peer.stop)
        for cluster in (source, peer):
            TableRegistry(*get_filesystem(cluster.root)).create(
                TableDescriptor.of(TABLE, ColumnFamilyDescriptor("f", scope=1))
            )
        ReplicationPeerStorage(source.zk, source.paths).add_peer("1", ReplicationPeerConfig(cluster_key=peer_key))
        with source.client() as client:
            client.batch(
                TABLE, [Cell(b"r%03d" % i, b"f", b"q", 1000 + i, CellType.PUT, b"v%d" % i) for i in range(300)]
            )
            client.delete(TABLE, b"r007")

        key = ClusterKey.parse(source_key)
        with connected(key) as zk:
            # manifests and results on HDFS, where the executors of any host would find them
            outcome = snapshot_step(zk, key, conf, owner="submit-mode-test", work_dir=f"{source_root}/.hbrep/cycles")
        assert outcome.queues >= 2  # one queue per source region server: a task for each executor
        result = ship_step(outcome.manifest_path, conf, runner=runner_for(conf))  # spark-submit --master spark://
        assert [q.status for q in result.queues] == ["ok"] * outcome.queues
        with connected(ClusterKey.parse(source_key)) as zk:
            report = commit_step(
                zk, ClusterKey.parse(source_key), conf, outcome.manifest_path, owner="submit-mode-test"
            )
        assert report.peers["1"].rows_shipped >= 300
        expected = cells_of(source)
        assert len(rows_of(expected)) == 299
        assert cells_of(peer) == expected

        with peer.client() as client:  # one row only the peer has: verify must find exactly it
            client.put(TABLE, b"zz-peer-only", b"f", b"q", b"x")
        for cluster in (source, peer):  # verify reads the tables' files on each root: memstores flushed
            with cluster.client() as client:
                client.flush(TABLE)
        verdict = submit_verify(source.root, peer.root, TABLE, json.dumps(VerifyOptions(verbose=True).as_dict()),
                                master=spark.master_url, work_dir=str(tmp_path))  # fmt: skip
        assert verdict.counters["GOODROWS"] == 299
        assert verdict.counters["BADROWS"] == 1 and verdict.counters["ONLY_IN_PEER_TABLE_ROWS"] == 1
    new_apps = {(worker, app) for worker, app in _spark_apps(spark) if app not in apps_before}
    assert len({app for _worker, app in new_apps}) == 2, f"expected the ship and the verify application: {new_apps}"
    workers = {worker for worker, _app in new_apps}
    assert workers == {1, 2}, f"the applications' executors ran on Spark workers {workers}, not on both"


def _spark_apps(spark: Any) -> set[tuple[int, str]]:
    """(worker index, application id) of every application with an executor on one of the Spark workers."""
    return {
        (index, app.name)
        for index in (1, 2)
        for app in (spark.worker_dir(index) / "work").glob("app-*")
        if any(app.glob("*/stderr"))
    }


def _running_ship(api: AirflowApi, timeout: float = 300.0) -> tuple[str, dict[str, Any]]:
    """(run id, task instance) of a ship task running now on a worker."""
    deadline = time.monotonic() + timeout
    while True:
        for run in reversed(api.runs(SHIP)):
            if run["state"] != "running":
                continue
            for ti in api.task_instances(SHIP, run["dag_run_id"]):
                if ti["task_id"] == "peer.ship" and ti["state"] == "running" and ti.get("hostname"):
                    return run["dag_run_id"], ti
        assert time.monotonic() < deadline, "no ship task ran"
        time.sleep(1)


def test_a_celery_worker_killed_mid_ship_loses_nothing_and_the_task_runs_again_elsewhere(dist):
    api = dist.api
    keys = dist.write(3000, size=1000)  # a few MB: the window ships it over several seconds
    run_id, ti = _running_ship(api)
    killed = next(w for w in dist.services.workers if w.name == ti["hostname"])
    killed.kill()
    try:
        deadline = time.monotonic() + 300
        while True:  # the killed try fails by missing heartbeats; its retry runs on the other worker
            again = next(t for t in api.task_instances(SHIP, run_id) if t["task_id"] == "peer.ship")
            if again["try_number"] > ti["try_number"] and again["state"] in ("success", "skipped", "failed"):
                break
            assert time.monotonic() < deadline, f"the killed ship task did not run again: {again}"
            time.sleep(3)
        assert again["hostname"] != killed.name, again
    finally:
        killed.start(dist.env)
        killed.wait_ready()
    assert keys <= rows_of(dist.wait_same())


def test_a_spark_worker_killed_mid_job_loses_nothing(dist):
    api = dist.api
    keys = dist.write(3000, size=1000)
    _running_ship(api)
    dist.services.spark.kill_worker(1)
    try:
        dist.services.spark.wait_alive_workers(1, timeout=120)
        keys |= dist.write(200)
        assert keys <= rows_of(dist.wait_same())  # shipped on the one worker left
    finally:
        dist.services.spark.start_worker(1)


def test_the_broker_restarted_loses_nothing(dist):
    redis = dist.services.redis
    keys = dist.write(500)
    redis.stop()
    keys |= dist.write(500)  # written while the broker is down: shipped once it is back
    redis.start()
    before = {r["dag_run_id"] for r in dist.api.runs(SHIP)}
    assert keys <= rows_of(dist.wait_same())
    deadline = time.monotonic() + 240  # and the workers take new tasks from the restarted broker
    while not [r for r in dist.api.runs(SHIP) if r["dag_run_id"] not in before and r["state"] == "success"]:
        assert time.monotonic() < deadline, "no ship run succeeded after the broker restart"
        time.sleep(2)


def test_postgresql_restarted_loses_nothing_and_airflow_comes_back(dist):
    """Airflow's metadata database stopped for a few seconds under load, then started again: the components
    that lost their connection exit and their supervisor starts them again (airflow_stack._COMPONENTS), the
    API server answers, new ship runs succeed, and b ends with exactly a's cells."""
    if dist.postgres is None:
        pytest.skip("HBREP_AIRFLOW_DB=sqlite: no PostgreSQL server to restart")
    keys = dist.write(500)
    dist.postgres.stop()
    keys |= dist.write(500)  # written while Airflow's database is down: shipped once it is back
    time.sleep(5)
    dist.postgres.start()
    assert dist.airflow.proc.poll() is None, "the Airflow session stopped with its database"
    dist.airflow.wait_ready(timeout=300)
    before = {r["dag_run_id"] for r in dist.api.runs(SHIP)}
    assert keys <= rows_of(dist.wait_same())
    deadline = time.monotonic() + 240
    while not [r for r in dist.api.runs(SHIP) if r["dag_run_id"] not in before and r["state"] == "success"]:
        assert time.monotonic() < deadline, "no ship run succeeded after PostgreSQL's restart"
        time.sleep(2)
    assert dist.airflow.proc.poll() is None


def test_the_workers_kept_their_own_homes(dist):
    homes = [Path(w.folder) for w in dist.services.workers]
    for home in homes:
        assert any((home / "airflow" / "logs").rglob("*.log")), f"{home}: no task log in the worker's own home"
    assert not (Path(dist.env["AIRFLOW_HOME"]) / "logs" / "dag_id=hbrep_ship").exists()
