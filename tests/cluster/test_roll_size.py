"""The WAL roll size is ``hbase.regionserver.hlog.blocksize`` × ``hbase.regionserver.logroll.multiplier``
(AbstractFSWAL's logrollsize): the same writes make twice as many WALs at half the roll size, and every
rolled WAL closed at the first entry that took it past the roll size. Real region servers.

The roll itself is asynchronous, as in HBase (the append wakes the server's roller, LogRoller there): a
client writing faster than the roller runs may put a few more entries in the WAL first. So the writer here
waits, after an entry that took the WAL past the roll size, until the server has rolled (bounded)."""

from __future__ import annotations

import os
import time

import pytest

from replication.cluster.embedded import start_cluster
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType
from tests.cluster.helpers import wal_files

pytestmark = pytest.mark.slow

ENTRY_VALUE = 1000  # bytes of value per entry: an entry is a bit over 1 KiB
ROLL_WAIT_S = 30.0  # how long a roll the size asked for may take on a loaded machine


def _wait_for_roll_past(root: str, server: str, roll: int) -> None:
    """If the newest WAL of ``server`` is at least ``roll`` bytes, wait until a newer one starts."""
    paths = wal_files(root, server)
    if not paths or os.path.getsize(paths[-1]) < roll:
        return
    deadline = time.monotonic() + ROLL_WAIT_S
    while len(wal_files(root, server)) == len(paths):
        assert time.monotonic() < deadline, f"{paths[-1]} reached {roll} bytes and no roll followed"
        time.sleep(0.02)


def _rolled_sizes(cluster_key: str, root: str, cluster_conf, blocksize: int, multiplier: float) -> list[int]:
    conf = cluster_conf.with_overrides(
        {"hbase.regionserver.hlog.blocksize": blocksize, "hbase.regionserver.logroll.multiplier": multiplier}
    )
    with start_cluster(cluster_key, root, 1, conf=conf) as cluster:
        (server,) = cluster.servers
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", "f"))
        with cluster.client() as client:
            for i in range(130):
                cell = Cell(b"r%04d" % i, b"f", b"q", 1000 + i, int(CellType.PUT), b"v" * ENTRY_VALUE)
                client.mutate_on(server, "t", [cell])
                _wait_for_roll_past(root, server, int(blocksize * multiplier))
    paths = wal_files(root, server)  # the servers stopped: no WAL moves any more
    return [os.path.getsize(p) for p in paths[:-1]]  # the last one was still being written


def test_roll_size_is_blocksize_times_multiplier(cluster_key, tmp_path, cluster_conf):
    small = _rolled_sizes(cluster_key + "-s", str(tmp_path / "s"), cluster_conf, 32768, 0.5)  # 16 KiB
    by_block = _rolled_sizes(cluster_key + "-b", str(tmp_path / "b"), cluster_conf, 65536, 0.5)  # 32 KiB
    by_multiplier = _rolled_sizes(cluster_key + "-m", str(tmp_path / "m"), cluster_conf, 32768, 1.0)  # 32 KiB
    for sizes, roll in ((small, 16384), (by_block, 32768), (by_multiplier, 32768)):
        assert sizes, "no WAL rolled"
        assert all(roll <= size < roll + 2 * ENTRY_VALUE for size in sizes), (roll, sizes)
    assert len(small) >= 2 * len(by_block) >= 2 and len(by_block) == len(by_multiplier)
