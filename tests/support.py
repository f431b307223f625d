"""Helpers shared by integration tests (importable as ``support``: pytest puts tests/ on sys.path)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import CycleReport, run_cycle
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.spark_views import scan
from replication.wal.model import Cell, CellType
from replication.zk.client import connected
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_snapshot import QueueSnapshot
from replication.zk.queue_storage import ReplicationQueueStorage


def create_table(cluster, name: str, *families: tuple[str, int]) -> None:
    """Create ``name`` with (family, scope) pairs in an embedded cluster's root."""
    fs, root = get_filesystem(cluster.root)
    TableRegistry(fs, root).create(TableDescriptor.of(name, *[ColumnFamilyDescriptor(f, scope=s) for f, s in families]))


def table_state(spark, cluster, table: str, families=None) -> list[tuple]:
    """Flush, then the table as a scan returns it: sorted (row, family, qualifier, ts, type, value)."""
    with cluster.client() as client:
        client.flush(table)
    rows = scan(spark, cluster.root, table, families=families).collect()
    return sorted(
        (bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, r.type, bytes(r.value)) for r in rows
    )


def add_peer(pair, peer_id: str, peer_key=None, enabled: bool = True, **config) -> None:
    """Add ``peer_id`` on the pair's source, pointing at ``peer_key`` (default the pair's peer)."""
    with connected(pair.source_key) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)).add_peer(
            peer_id, ReplicationPeerConfig(cluster_key=str(peer_key or pair.peer_key), **config), enabled=enabled
        )


def set_peer_state(pair, peer_id: str, enabled: bool) -> None:
    with connected(pair.source_key) as zk:
        ReplicationPeerStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)).set_peer_state(
            peer_id, enabled
        )


def cycle(pair, spark, **kwargs) -> CycleReport:
    """One ship cycle of the pair's source, the Spark job in the shared session."""
    with connected(pair.source_key) as zk:
        return run_cycle(zk, pair.source_key, pair.conf, runner=runner_for(pair.conf, spark), **kwargs)


def queue_snapshot(pair) -> QueueSnapshot:
    with connected(pair.source_key) as zk:
        return ReplicationQueueStorage(zk, ZNodePaths(pair.conf, parent=pair.source_key.znode_parent)).snapshot()


def write_load(cluster, table: str, stop: threading.Event, acked: list[bytes]) -> None:
    """Write batches of 20 rows until stopped; record the rows of every acknowledged batch."""
    with cluster.client() as client:
        batch_no = 0
        while not stop.is_set():
            rows = [f"b{batch_no:05d}-{i:02d}".encode() for i in range(20)]
            client.batch(table, [Cell(r, b"f1", b"q", 1_000_000 + batch_no, CellType.PUT, r) for r in rows])
            acked.extend(rows)
            batch_no += 1


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The one stderr line of a command that failed (asserting it failed and printed exactly one line)."""
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# The variables of this process's Kerberos library: hbrep's in-process logins (replication/kerberos.py) set them
KRB5_VARIABLES = ("KRB5_CONFIG", "KRB5CCNAME", "KRB5_CLIENT_KTNAME", "KRB5_KDC_PROFILE")


@contextlib.contextmanager
def kerberos_environment(krb5_conf: Path) -> Iterator[None]:
    """This process's Kerberos library on the realm of ``krb5_conf`` (``KRB5_CONFIG``); on exit each of
    :data:`KRB5_VARIABLES` as it was before, whatever the logins in between set."""
    saved = {name: os.environ.get(name) for name in KRB5_VARIABLES}
    os.environ["KRB5_CONFIG"] = str(krb5_conf)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
