"""Bad WALs in real queues, met through ``hbrep ship --once`` and ``hbrep status replication``.

Each scenario is a recovered queue ``1-<dead server>`` under the source's live region server, holding one
crafted WAL (as failover would leave it): truncated, zero-length, corrupt in the middle, compressed with
a value codec hbrep lacks (LZO), deleted by hand, and one whose table the peer does not have. One ship
cycle runs over all of them; each test then checks its queue: the exact error, the positions, what reached the peer.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass

import pytest

from replication.fs import get_filesystem
from replication.proto import WAL_pb2
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.names import old_wal_dir, wal_dir, wal_file_name
from replication.wal.varint import delimited
from replication.wal.writer import PB_WAL_MAGIC, ProtobufLogWriter
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_storage import ReplicationQueueStorage
from tests.badinput.conftest import SMALL_CONF
from tests.badinput.helpers import error_line, hbrep

pytestmark = pytest.mark.slow

ENV = {f"HBREP__{k.replace('.', '__')}": v for k, v in SMALL_CONF.items()}
BASE_TS = 1_700_000_000_000


@dataclass
class Scenario:
    name: str
    dead: str
    wal: str
    path: str  # where the WAL file is (or was, for the deleted one)
    queue_id: str
    offsets: list[int]  # end offset of each whole entry written


def entry(table: bytes, row: str, seq: int) -> Entry:
    key = WALKey(b"0" * 32, table, seq, int(time.time() * 1000), {b"f1": 1})
    return Entry(key, [Cell(row.encode(), b"f1", b"q", BASE_TS + seq, int(CellType.PUT), f"v-{row}".encode())])


def write_wal(path: str, table: bytes, rows: list[str], *, close: bool = True) -> list[int]:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    writer = ProtobufLogWriter(path)
    offsets = [writer.length] + [writer.append(entry(table, row, i + 1)) for i, row in enumerate(rows)]
    writer.sync()
    writer.close() if close else writer.abort()
    return offsets


class Setup:
    """Two one-server clusters, peer 1, and the crafted queues (built once per module)."""

    def __init__(self, zk_server, tmp_path_factory, small_conf):
        from replication.cluster.embedded import start_cluster

        self.conf = small_conf
        ks = f"127.0.0.1:{zk_server.port}:/hbase-wa-{uuid.uuid4().hex[:8]}"
        kp = f"127.0.0.1:{zk_server.port}:/hbase-wb-{uuid.uuid4().hex[:8]}"
        self.source = start_cluster(ks, str(tmp_path_factory.mktemp("wa")), 1, conf=small_conf, name="wa")
        try:
            self.peer = start_cluster(kp, str(tmp_path_factory.mktemp("wb")), 1, conf=small_conf, name="wb")
        except BaseException:
            self.source.stop()
            raise
        self.key = ClusterKey.parse(ks)
        self.paths = ZNodePaths(small_conf, parent=self.key.znode_parent)
        self.replicator = self.source.servers[0]
        self.scenarios: dict[str, Scenario] = {}

    def stop(self) -> None:
        self.peer.stop()
        self.source.stop()

    def add(self, name: str, index: int, make) -> Scenario:  # make(path) -> offsets
        dead = f"dead{index}.example,16020,{BASE_TS + index}"
        wal = wal_file_name(dead, BASE_TS + index + 1)
        path = os.path.join(old_wal_dir(self.source.root), wal)
        offsets = make(path)
        scenario = Scenario(name, dead, wal, path, f"1-{dead}", offsets)
        with connected(self.key) as zk:
            ReplicationQueueStorage(zk, self.paths).add_wal(self.replicator, scenario.queue_id, wal)
        self.scenarios[name] = scenario
        return scenario

    def queues(self) -> dict:
        with connected(self.key) as zk:
            return ReplicationQueueStorage(zk, self.paths).snapshot().as_dict()


def truncated(path: str) -> list[int]:
    offsets = write_wal(path, b"t", [f"trunc{i}" for i in range(4)], close=False)
    with open(path, "r+b") as f:  # cut the last entry in half: a crashed writer
        f.truncate(offsets[3] + (offsets[4] - offsets[3]) // 2)
    return offsets


def zero_length(path: str) -> list[int]:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").close()
    return [0]


def corrupt(path: str) -> list[int]:
    offsets = write_wal(path, b"t", [f"corrupt{i}" for i in range(4)])
    with open(path, "r+b") as f:  # garbage over the second entry's WALKey length and key
        f.seek(offsets[1])
        f.write(b"\xff" * 12)
    return offsets


def compressed(path: str) -> list[int]:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    header = WAL_pb2.WALHeader(
        has_compression=True,
        has_tag_compression=False,
        has_value_compression=True,
        value_compression_algorithm=0,  # LZO: GPL, a codec hbrep does not read
        writer_cls_name="ProtobufLogWriter",
        cell_codec_cls_name="org.apache.hadoop.hbase.regionserver.wal.WALCellCodec",
    )
    with open(path, "wb") as f:
        f.write(PB_WAL_MAGIC + delimited(header.SerializeToString()) + b"\x00" * 64)
    return [0]


def deleted(path: str) -> list[int]:
    offsets = write_wal(path, b"t", ["gone0"])
    os.remove(path)  # an operator cleaned oldWALs/ by hand
    return offsets


def missing_table(path: str) -> list[int]:
    return write_wal(path, b"only_on_source", [f"mt{i}" for i in range(2)])


@pytest.fixture(scope="module")
def setup(zk_server, tmp_path_factory, small_conf):
    s = Setup(zk_server, tmp_path_factory, small_conf)
    try:
        for cluster in (s.source, s.peer):
            fs, root = get_filesystem(cluster.root)
            TableRegistry(fs, root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f1", scope=1)))
        fs, root = get_filesystem(s.source.root)
        TableRegistry(fs, root).create(TableDescriptor.of("only_on_source", ColumnFamilyDescriptor("f1", scope=1)))
        with connected(s.key) as zk:
            ReplicationPeerStorage(zk, s.paths).add_peer("1", ReplicationPeerConfig(cluster_key=s.peer.cluster_key))
        for index, (name, make) in enumerate(
            [
                ("truncated", truncated),
                ("zero", zero_length),
                ("corrupt", corrupt),
                ("compressed", compressed),
                ("deleted", deleted),
                ("missing_table", missing_table),
            ],
            start=1,
        ):
            s.add(name, index, make)
        s.before = s.queues()
        s.ship = hbrep("--cluster", str(s.key), "ship", "--once", "--in-process", env=ENV)
        s.after = s.queues()
        status = hbrep("--cluster", str(s.key), "status", "replication", "--json", env=ENV)
        assert status.returncode == 0, status.stderr
        s.status = {q["queue"]: q for q in json.loads(status.stdout)["queues"]}
        yield s
    finally:
        s.stop()


def ship_error(setup: Setup, scenario: Scenario) -> str:
    """The line ``hbrep ship --once`` printed on stderr for the scenario's queue."""
    prefix = f"queue {setup.replicator}/{scenario.queue_id} "
    lines = [line for line in setup.ship.stderr.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, setup.ship.stderr
    return lines[0][len(prefix) :]


def assert_stuck(setup: Setup, scenario: Scenario, status: str, error: str) -> None:
    """The ship reported it, the position did not move, and status shows the queue stuck with the error."""
    assert setup.ship.returncode == 3, setup.ship.stderr
    assert ship_error(setup, scenario) == f"{status.upper()}: {error}"
    queue = f"{setup.replicator}/{scenario.queue_id}"
    assert setup.after[setup.replicator][scenario.queue_id] == setup.before[setup.replicator][scenario.queue_id]
    reported = setup.status[queue]
    assert (reported["status"], reported["stuck"], reported["error"]) == (status, True, error)
    assert reported["wals"] == {scenario.wal: 0}


def peer_rows(setup: Setup, prefix: str) -> list[str]:
    from replication.tables.semantics import scan_cells
    from replication.tables.table_files import read_cells

    with setup.peer.client() as client:
        client.flush("t")
    fs, root = get_filesystem(setup.peer.root)
    return sorted(c.row.decode() for c in scan_cells(read_cells(fs, root, "t")) if c.row.decode().startswith(prefix))


def test_truncated_wal_of_a_dead_server_ships_up_to_the_last_whole_entry(setup):
    scenario = setup.scenarios["truncated"]
    assert scenario.queue_id not in setup.after[setup.replicator]  # drained recovered queue: removed
    assert peer_rows(setup, "trunc") == ["trunc0", "trunc1", "trunc2"]  # the half entry never ships
    assert f"queue {setup.replicator}/{scenario.queue_id} " not in setup.ship.stderr


def test_zero_length_wal_leaves_the_queue_stuck(setup):
    scenario = setup.scenarios["zero"]
    error = (
        f"WAL {scenario.path} of queue {setup.replicator}/{scenario.queue_id} is zero-length; set "
        "replication.source.eof.autorecovery=true to drop it from the queue"
    )
    assert_stuck(setup, scenario, "stuck", error)


def test_corrupt_wal_is_stuck_at_the_bad_offset(setup):
    scenario = setup.scenarios["corrupt"]
    error = (
        f"{scenario.path}: corrupt entry at offset {scenario.offsets[1]}: "
        "the WALKey length is not a varint (more than 10 bytes)"
    )
    assert_stuck(setup, scenario, "stuck", error)
    assert peer_rows(setup, "corrupt") == []  # the position stays before the corruption: nothing half-shipped


def test_compressed_wal_with_value_compression_is_refused(setup):
    scenario = setup.scenarios["compressed"]
    error = (
        f"{scenario.path}: WAL value compression with LZO is not supported "
        "(hbrep reads GZ, NONE, SNAPPY, LZ4, BZIP2, ZSTD)"
    )
    assert_stuck(setup, scenario, "stuck", error)


def test_wal_deleted_by_hand_leaves_the_queue_stuck(setup):
    scenario = setup.scenarios["deleted"]
    error = (
        f"WAL {scenario.wal} of queue {setup.replicator}/{scenario.queue_id} is in none of WALs/, oldWALs/ or "
        f"the dead servers' directories under {setup.source.root}"
    )
    assert_stuck(setup, scenario, "stuck", error)
    assert wal_dir(setup.source.root, scenario.dead)  # the owner's directory was one of the places looked at


def test_peer_without_the_table_fails_the_queue_naming_it(setup):
    scenario = setup.scenarios["missing_table"]
    error = ship_error(setup, scenario)
    assert error.startswith("FAILED: ") and "only_on_source" in error, error
    queue = setup.status[f"{setup.replicator}/{scenario.queue_id}"]
    assert queue["status"] == "failed" and queue["stuck"] and "only_on_source" in queue["error"]
    assert setup.after[setup.replicator][scenario.queue_id] == setup.before[setup.replicator][scenario.queue_id]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"garbage", "7 bytes that are neither PBUF, an 8-byte long nor a decimal"),
        (b"\xff" * 8, "negative position -1 (8-byte long)"),
        (b"PBUF\xff\xff", "bad ReplicationHLogPosition protobuf after PBUF"),
    ],
)
def test_garbage_in_a_position_znode_is_reported_with_the_znode(setup, data, why):
    scenario = setup.scenarios["zero"]
    znode = setup.paths.wal(setup.replicator, scenario.queue_id, scenario.wal)
    with connected(setup.key) as zk:
        original, _ = zk.get(znode)
        zk.set(znode, data)
        try:
            c = ("--cluster", str(setup.key))
            # The ship's incremental snapshot re-reads a queue when its journal says so, and everything at
            # least every full interval; a hand edit (no journal entry) shows at the next full read, which
            # 0 forces here. Until then the version-guarded commit cannot overwrite the edited znode.
            full = {**ENV, "HBREP__hbrep__replication__snapshot__full__interval__ms": "0"}
            for args in (("queues",), ("status", "replication", "--json"), ("ship", "--once")):
                line = error_line(hbrep(*c, *args, env=full))
                assert line.startswith(f"hbrep: error: {znode}: {why}"), (args, line)
            assert zk.get(znode)[0] == data  # nothing rewrote it (no silent restart from 0)
            assert zk.exists(setup.paths.lease("1")) is None  # the failed ship left no lease
        finally:
            zk.set(znode, original)
    assert setup.queues() == setup.after  # every other queue and position is as the last cycle left it
