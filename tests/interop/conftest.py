"""One real Apache HBase per test session (the release pinned in interop/hbase/pom.xml).

``real_hbase`` resolves the jars (the first time: downloads into ~/.m2 and prints how long it took),
then starts an HMaster, two HRegionServers and HBase's Thrift server against the session's embedded
ZooKeeper under their own znode parent, through the same code as ``hbrep hbase start``. Its folder
(configuration, rootdir, logs) is kept under pytest's base temp; a failing test in this folder gets
the log paths and tails in its report.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

REAL_HBASE_REGIONSERVERS = 2


def _say(config: pytest.Config, line: str) -> None:
    """Print on the terminal even while pytest captures output (how long the jars and HBase took)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n{line}", flush=True)


@pytest.fixture(scope="session")
def real_hbase(zk_server, tmp_path_factory, request) -> Iterator[object]:
    """A running real HBase (master, 2 region servers, Thrift), stopped at the end of the session."""
    from replication.devstack.hbase import RealHBase
    from replication.devstack.maven import interop_tools_classpath

    started = time.monotonic()
    interop_tools_classpath()
    _say(request.config, f"hbrep: HBase/Hadoop jars and tools ready in {time.monotonic() - started:.1f}s")
    cluster = RealHBase(tmp_path_factory.mktemp("hbase-real"))
    parent = f"/hbase-real-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    cluster.start(f"127.0.0.1:{zk_server.port}:{parent}", regionservers=REAL_HBASE_REGIONSERVERS)
    _say(request.config, f"hbrep: real HBase started in {time.monotonic() - started:.1f}s (logs {cluster.run_dir})")
    request.config.stash[REAL_HBASE_KEY] = cluster
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def real_hbase_on_hdfs(zk_server, hdfs_cluster, tmp_path_factory, request) -> Iterator[object]:
    """A second real HBase (master, 1 region server, Thrift) whose hbase.rootdir is on the session's
    real HDFS, so its region server writes WALs through HDFS's own client (hflush into files the
    NameNode holds open); stopped at the end of the module that uses it."""
    from replication.devstack.hbase import RealHBase

    cluster = RealHBase(tmp_path_factory.mktemp("hbase-on-hdfs"))
    tag = uuid.uuid4().hex[:8]
    started = time.monotonic()
    # The session's HDFS has one DataNode: HBase's default of 3 replicas made FSHLog ask for a roll after its
    # syncs ("Requesting log roll because of low replication"), up to 5 in a row, at moments a test cannot
    # foresee (the fresh-clone make test of 5ace210 found no open WAL left holding a test's rows).
    cluster.start(
        f"127.0.0.1:{zk_server.port}:/hbase-hdfs-{tag}",
        regionservers=1,
        rootdir=f"{hdfs_cluster.uri}/hbase-{tag}",
        extra_site={"dfs.replication": "1"},
    )
    _say(request.config, f"hbrep: real HBase on HDFS started in {time.monotonic() - started:.1f}s")
    request.config.stash[REAL_HBASE_ON_HDFS_KEY] = cluster
    try:
        yield cluster
    finally:
        cluster.stop()
        request.config.stash[REAL_HBASE_ON_HDFS_KEY] = None


@pytest.fixture(scope="module")
def hbrep_sink(zk_server, tmp_path_factory) -> Iterator[object]:
    """An embedded hbrep cluster (2 region servers, HBase RPC listeners on by default) for a real HBase
    to replicate into, with its ClusterKey as ``key``; stopped at the end of the module that uses it."""
    from replication.cluster.embedded import start_cluster
    from replication.config import Config
    from replication.zk.cluster_key import ClusterKey

    key = f"127.0.0.1:{zk_server.port}:/hbrep-dst-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("dst")), 2, conf=Config.load(env={}), name="dst")
    try:
        cluster.key = ClusterKey.parse(key)
        yield cluster
    finally:
        cluster.stop()


REAL_HBASE_KEY = pytest.StashKey[object]()
REAL_HBASE_ON_HDFS_KEY = pytest.StashKey[object]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """On a failure, add where the real HBase's logs are (and their last lines) to the report."""
    outcome = yield
    report = outcome.get_result()
    clusters = [item.config.stash.get(key, None) for key in (REAL_HBASE_KEY, REAL_HBASE_ON_HDFS_KEY)]
    if report.failed and any(clusters):
        lines = []
        for log in [log for cluster in clusters if cluster is not None for log in cluster.log_files()]:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-8:])
            lines.append(f"--- {log} (last lines)\n{tail}")
        report.sections.append(("real HBase logs", "\n".join(lines)))
