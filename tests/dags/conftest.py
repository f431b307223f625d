"""DAG tests: Airflow in a temp home (tests/plugins/airflow_env.py) and two embedded clusters, source → peer."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins"))
import airflow_env

airflow_env.configure()

TABLE = "t"


@pytest.fixture(scope="session")
def airflow_db() -> None:
    """A migrated Airflow DB with the ``zookeeper`` pool."""
    airflow_env.init_db()


@dataclass
class Replication:
    """A source cluster replicating table ``t`` (family ``f``, scope 1; ``g`` scope 0) to peer ``1``."""

    source: object  # EmbeddedCluster
    peer: object  # EmbeddedCluster
    source_key: str
    peer_key: str


def _conf():
    from replication.config import Config

    return Config.load(
        env={},
        overrides={
            "hbase.regionserver.optionalcacheflushinterval": 0,
            "zookeeper.session.timeout": 4000,
            "hbrep.regionserver.chore.interval.ms": 100,
        },
    )


@pytest.fixture
def replication_pair(zk_server, tmp_path, monkeypatch) -> Iterator[Replication]:
    """Source and peer embedded clusters (1 region server each) with peer ``1``; AIRFLOW_CONN_HBREP_SOURCE set."""
    yield from _pair(zk_server, tmp_path, monkeypatch, 1)


@pytest.fixture
def replication_pair2(zk_server, tmp_path, monkeypatch) -> Iterator[Replication]:
    """As ``replication_pair`` with two source region servers (one can die and the other claim)."""
    yield from _pair(zk_server, tmp_path, monkeypatch, 2)


def _pair(zk_server, tmp_path, monkeypatch, source_servers: int) -> Iterator[Replication]:
    from replication.cluster.embedded import start_cluster
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.layout import ZNodePaths
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    conf = _conf()
    tag = uuid.uuid4().hex[:8]
    source_key = f"127.0.0.1:{zk_server.port}:/src-{tag}"
    peer_key = f"127.0.0.1:{zk_server.port}:/dst-{tag}"
    peer = start_cluster(peer_key, str(tmp_path / "dst"), 1, conf=conf, name=f"dst-{tag}")
    try:
        TableRegistry(None, peer.root).create(
            TableDescriptor.of(TABLE, ColumnFamilyDescriptor("f"), ColumnFamilyDescriptor("g"))
        )
        source = start_cluster(source_key, str(tmp_path / "src"), source_servers, conf=conf, name=f"src-{tag}")
        try:
            TableRegistry(None, source.root).create(
                TableDescriptor.of(TABLE, ColumnFamilyDescriptor("f", scope=1), ColumnFamilyDescriptor("g"))
            )
            ReplicationPeerStorage(source.zk, ZNodePaths(conf, parent=f"/src-{tag}")).add_peer(
                "1", ReplicationPeerConfig(cluster_key=peer_key)
            )
            monkeypatch.setenv("AIRFLOW_CONN_HBREP_SOURCE", airflow_env.zk_connection_json(source_key))
            monkeypatch.setenv("HBREP__hbrep__work__dir", str(tmp_path / "cycles"))
            yield Replication(source, peer, source_key, peer_key)
        finally:
            source.stop()
    finally:
        peer.stop()


def wait_for_queue(pair: Replication, peer_id: str = "1", timeout: float = 20.0) -> None:
    """Wait until every source server has a queue for ``peer_id`` (registered by the peer watcher)."""
    import time

    from replication.zk.layout import ZNodePaths
    from replication.zk.queue_storage import ReplicationQueueStorage

    paths = ZNodePaths(pair.source.conf, parent=pair.source_key.rsplit(":", 1)[1])
    storage = ReplicationQueueStorage(pair.source.zk, paths)
    deadline = time.monotonic() + timeout
    while not all(storage.get_wals_in_queue(s, peer_id) for s in pair.source.servers):
        assert time.monotonic() < deadline, f"no queue for peer {peer_id} after {timeout}s"
        time.sleep(0.1)


def peer_rows(pair: Replication) -> dict[bytes, bytes]:
    """Row → value of f:q in the peer's table files after a flush (pyarrow, no Spark)."""
    import pyarrow.parquet as pq

    with pair.peer.client() as client:
        client.flush(TABLE)
    out: dict[bytes, bytes] = {}
    for path in sorted(Path(pair.peer.root, "data", "default", TABLE).rglob("*.parquet")):
        if path.name.startswith("."):
            continue
        for rec in pq.read_table(path).to_pylist():
            if rec["family"] == b"f" and rec["qualifier"] == b"q" and rec["type"] == 4:
                out[rec["row"]] = rec["value"]
    return out
