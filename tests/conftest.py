"""Session-wide real components: one ZooKeeper server and one Spark session per test session.

- ``zk_server``: a real ZooKeeper (pyspark's jars) on a free loopback port, stopped at the end.
- ``zk``: a kazoo client in its own chroot, so tests never see each other's znodes.
- ``cluster_key``: a fresh cluster key (own znode parent) on the shared server, for code that
  uses HBase's absolute layout (``<parent>/replication/...``).
- ``spark``: a ``local[2]`` SparkSession bound to 127.0.0.1.
- ``hdfs_cluster``: a real single-node HDFS (Hadoop's NameNode + DataNode from Maven Central) on
  free loopback ports, started once for the session; its logs are attached to every failed test
  that used it.
- ``pair``: per module, two embedded clusters A (3 region servers) → B (2) with small retry settings.
- ``spark_connect``: a real Spark Connect server (Spark's own, from pyspark's jars) on a free loopback
  port for the whole session, started on first use.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from shared_fixtures import hlog_fixtures_dir

VENV_BIN = str(Path(sys.executable).parent)
os.environ["PATH"] = VENV_BIN + os.pathsep + os.environ.get("PATH", "")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
# The Airflow stacks the tests start run their scheduler's idle loop at Airflow's default, 1 s (make up's 0.2 s,
# airflow_stack.SCHEDULER_IDLE_SLEEP_S, is a latency setting measured in bench/; at 0.2 s an idle scheduler
# took 15-17% of a core here, and the suite is CPU-bound on this 2-core machine). tests/devstack/
# test_stack_restart.py runs make up's own settings. The DAG processor keeps its 30 s: an asset watcher (the
# failover and ship DAGs' ZooKeeper triggers) starts only when a parse after its DAG's unpause registers it;
# at 5 minutes the event tests waited that long (seen in a fresh-clone run).
os.environ.setdefault("AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME", "1")
# Spark's JVMs in the suite (the session's local Spark, and the Spark Connect servers and spark-submit jobs the
# tests start, to which Spark's launcher passes SPARK_SUBMIT_OPTS) compile with C1 only and collect with the serial
# GC, as the dev HBase's JVMs do: the same small jobs in a local session then took half the JVM's CPU here
# (12.6-13.2 s against 23.6-29.0 s). Spark's JVMs were the largest CPU users of the suite in a sample of a run.
# make up, the demos and bench/ keep Spark's defaults.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def hlog_fixtures() -> Path:
    """The real 0.94 HLog files HBase wrote (shared/fixtures/hbase-0.94-hlogs; shared_fixtures.py finds it)."""
    try:
        return hlog_fixtures_dir()
    except FileNotFoundError as exc:
        pytest.fail(f"shared fixtures missing: {exc}")


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A real standalone ZooKeeper server on a free 127.0.0.1 port for the whole session."""
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.net import free_port

    server = ZooKeeperServer(tmp_path_factory.mktemp("zk"), free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def zk(zk_server) -> Iterator[object]:
    """A started KazooClient chrooted to a fresh path; the path is removed afterwards."""
    from kazoo.client import KazooClient

    chroot = f"/test-{uuid.uuid4().hex[:12]}"
    admin = KazooClient(hosts=zk_server.hosts)
    admin.start(timeout=15)
    admin.ensure_path(chroot)
    client = KazooClient(hosts=zk_server.hosts + chroot)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()
        admin.delete(chroot, recursive=True)
        admin.stop()
        admin.close()


@pytest.fixture
def cluster_key(zk_server) -> str:
    """A cluster key with a znode parent of its own on the session's ZooKeeper."""
    return f"127.0.0.1:{zk_server.port}:/hbase-{uuid.uuid4().hex[:10]}"


PAIR_CONF = {
    "replication.source.sleepforretries": "50",
    "replication.source.maxretriesmultiplier": "4",
    "hbrep.source.ship.max.attempts": "4",
    "replication.sleep.before.failover": "0",
    "hbase.regionserver.hlog.blocksize": str(256 * 1024),
}


@dataclass
class Pair:
    """A source cluster, its peer cluster and the configuration both use."""

    source: object
    peer: object
    source_key: object
    peer_key: object
    conf: object


def new_cluster_key(zk_server, name: str) -> str:
    """A cluster key with a fresh znode parent ``/<name>-<random>`` on the session ZooKeeper."""
    return f"127.0.0.1:{zk_server.port}:/{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def pair(zk_server, tmp_path_factory) -> Iterator[Pair]:
    """Two embedded clusters per test module: A (3 region servers) → B (2), small retry settings."""
    from replication.cluster.embedded import start_cluster
    from replication.config import Config
    from replication.zk.cluster_key import ClusterKey

    conf = Config.load(env={}, overrides=PAIR_CONF)
    source_key, peer_key = new_cluster_key(zk_server, "hbase-a"), new_cluster_key(zk_server, "hbase-b")
    source = start_cluster(source_key, str(tmp_path_factory.mktemp("a")), 3, conf=conf, name="a")
    try:
        peer = start_cluster(peer_key, str(tmp_path_factory.mktemp("b")), 2, conf=conf, name="b")
    except BaseException:
        source.stop()
        raise
    try:
        yield Pair(source, peer, ClusterKey.parse(source_key), ClusterKey.parse(peer_key), conf)
    finally:
        peer.stop()
        source.stop()


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local[2] SparkSession for the whole test session (starting one costs 7-10 s)."""
    from replication.spark import spark_session

    session = spark_session("hbrep-tests", master="local[2]")
    try:
        yield session
    finally:
        session.stop()
        logging.getLogger("py4j").setLevel(logging.ERROR)  # no "Closing down clientserver" at exit


@pytest.fixture(scope="session")
def hdfs_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One real HDFS (NameNode + DataNode JVMs, WebHDFS and permissions on) for the whole session.

    Tests that break it (SIGKILL the DataNode, enter safe mode) restore it before they end.
    """
    from replication.devstack.hdfs import HdfsCluster, HdfsError

    cluster = HdfsCluster(tmp_path_factory.mktemp("hdfs"))
    try:
        cluster.start()
    except HdfsError as exc:
        cluster.stop()
        pytest.fail(f"the session HDFS did not start: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Attach the NameNode's and DataNode's log tails to a failed test that used ``hdfs_cluster``."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed or "hdfs_cluster" not in getattr(item, "fixturenames", ()):
        return
    cluster = getattr(item, "funcargs", {}).get("hdfs_cluster")
    if cluster is None:
        return
    for jvm in (cluster.namenode, cluster.datanode):
        report.sections.append((f"{jvm.name} log tail ({jvm.log_file})", jvm.log_tail(60)))


@pytest.fixture(scope="session")
def spark_connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One Spark Connect server (``hbrep spark start``'s component) for the whole session, then stopped."""
    from replication.devstack.spark_connect import SparkConnectServer
    from replication.net import free_port

    server = SparkConnectServer(tmp_path_factory.mktemp("spark-connect"), free_port(), driver_memory_mb=768)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --- make test runs the suite on pytest-xdist workers (-n 2 --dist loadscope, with the scheduler below) ---------
# Tests are dealt to the workers in groups, and a group runs whole on one worker:
# - a module is a group, so its module-scoped clusters start once;
# - tests/interop/ is one group, so the session's real HBase starts once, not once per worker;
# - tests/scheduler/ is one group, so two Airflow stacks (scheduler, API server, DAG processor, triggerer,
#   Spark) never start at once on a 2-core machine;
# - tests/native/ is one group: two real HBase clusters and an Airflow stack, started once for its module;
# - the reliability suite is one group, so the worker that runs it sees every scenario and may rewrite
#   RELIABILITY.md (tests/reliability/conftest.py);
# - the dev stack's whole-stack modules (make up/down, make demo, the distributed stack) are one group, so no
#   two of them run at once: in a fresh-clone run at e47f8dc test_stack_restart took 445 s beside
#   test_dist_stack, 185 s alone.
# The long groups go first, so none starts last while the other worker idles.
# (xdist's own --dist loadgroup cannot do this under pytest 9: it renames tests through Node._nodeid,
# which pytest 9 no longer reads, so its groups are silently ignored.)
GROUPED_PATHS = {
    "tests/interop/": "real-hbase",
    "tests/scheduler/": "scheduler",
    "tests/reliability/": "reliability",
    "tests/secure/": "secure",  # the Kerberized stacks (KDC, SASL ZooKeeper): one worker, one stack per module
    "tests/hbase_source/": "hbase-source",  # a real HBase source's own features (issue 48), its own HBase
    "tests/native/": "native",
    "tests/devstack/test_dist_stack.py": "whole-stacks",
    "tests/devstack/test_stack_restart.py": "whole-stacks",
    "tests/devstack/test_demo.py": "whole-stacks",
}


def xdist_group_of(nodeid: str) -> str:
    """The group a test runs in: that of the first GROUPED_PATHS prefix (a folder or a module) its path
    starts with, else its module's path."""
    module = nodeid.split("::", 1)[0]
    return next((group for prefix, group in GROUPED_PATHS.items() if module.startswith(prefix)), module)


def _long_first(item: pytest.Item) -> int:
    group = xdist_group_of(item.nodeid)
    groups = list(GROUPED_PATHS.values())
    return groups.index(group) if group in groups else len(groups)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the long groups first (stable, so modules keep their order and their tests theirs)."""
    items.sort(key=_long_first)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's scope scheduler with :func:`xdist_group_of` as the scope of a test."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(nodeid)

    return GroupScheduling(config, log)
