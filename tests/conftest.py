"""Session-wide real components: one ZooKeeper server and one Spark session per test session.

- ``zk_server``: a real ZooKeeper (pyspark's jars) on a free loopback port, stopped at the end.
- ``zk``: a kazoo client in its own chroot, so tests never see each other's znodes.
- ``cluster_key``: a fresh cluster key (own znode parent) on the shared server, for code that
  uses HBase's absolute layout (``<parent>/replication/...``).
- ``spark``: a ``local[2]`` SparkSession bound to 127.0.0.1.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

VENV_BIN = str(Path(sys.executable).parent)
os.environ["PATH"] = VENV_BIN + os.pathsep + os.environ.get("PATH", "")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def hlog_fixtures() -> Path:
    """The real 0.94 HLog files HBase wrote (shared/fixtures/hbase-0.94-hlogs)."""
    path = FIXTURES / "hbase-0.94-hlogs"
    if not path.is_dir():
        pytest.fail(f"shared fixtures missing: {path}")
    return path


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A real standalone ZooKeeper server on a free 127.0.0.1 port for the whole session."""
    from replication.zk.server import ZooKeeperServer, free_port

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


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local[2] SparkSession for the whole test session (starting one costs 7-10 s)."""
    from replication.spark import spark_session

    session = spark_session("hbrep-tests", master="local[2]")
    try:
        yield session
    finally:
        session.stop()
