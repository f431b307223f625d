"""A real HBase source's own features (issue 48): one real HBase 2.6 for this folder (the release pinned in
interop/hbase/pom.xml, started as ``hbrep hbase start`` does) with two region servers (regions move across
servers), and an embedded hbrep cluster beside it. A test that kills region servers starts them again
before it ends.

This folder runs as its own xdist group (tests/conftest.py GROUPED_PATHS), in parallel with tests/interop.
A failing test gets the real HBase's log paths and tails in its report.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

SOURCE_HBASE_KEY = pytest.StashKey[object]()
REGIONSERVERS = 2


@pytest.fixture(scope="package")
def source_hbase(zk_server, tmp_path_factory, request) -> Iterator[object]:
    """A running real HBase (master, two region servers, Thrift) for the folder, stopped at its end."""
    from replication.devstack.hbase import RealHBase
    from replication.devstack.maven import interop_tools_classpath

    interop_tools_classpath()
    cluster = RealHBase(tmp_path_factory.mktemp("hbase-source"))
    started = time.monotonic()
    cluster.start(f"127.0.0.1:{zk_server.port}:/hbase-src-{uuid.uuid4().hex[:8]}", regionservers=REGIONSERVERS)
    print(f"real HBase started in {time.monotonic() - started:.1f}s (logs {cluster.run_dir})")
    request.config.stash[SOURCE_HBASE_KEY] = cluster
    try:
        yield cluster
    finally:
        cluster.stop()
        request.config.stash[SOURCE_HBASE_KEY] = None


@pytest.fixture(scope="package")
def hbrep_cluster(zk_server, tmp_path_factory) -> Iterator[object]:
    """An embedded hbrep cluster (one region server) for the folder, with its ClusterKey as ``key``."""
    from replication.cluster.embedded import start_cluster
    from replication.config import Config
    from replication.zk.cluster_key import ClusterKey

    key = f"127.0.0.1:{zk_server.port}:/hbrep-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path_factory.mktemp("hbrep")), 1, conf=Config.load(env={}), name="hbrep")
    try:
        cluster.key = ClusterKey.parse(key)
        yield cluster
    finally:
        cluster.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """On a failure, add where the real HBase's logs are (and their last lines) to the report."""
    outcome = yield
    report = outcome.get_result()
    cluster = item.config.stash.get(SOURCE_HBASE_KEY, None)
    if report.failed and cluster is not None:
        lines = []
        for log in cluster.log_files():
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-8:])
            lines.append(f"--- {log} (last lines)\n{tail}")
        report.sections.append(("real HBase logs", "\n".join(lines)))
