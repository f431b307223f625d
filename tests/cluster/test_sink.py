"""The sink RPC: ReplicateWALEntry through SinkClient, idempotence, cluster ids kept, errors, token."""

from __future__ import annotations

import uuid

import pytest

from replication.cluster.errors import (
    NoSuchColumnFamilyOnPeer,
    SinkAuthError,
    SinkError,
    SinkUnavailable,
    TableNotFoundOnPeer,
)
from replication.cluster.info import cluster_token
from replication.cluster.sink_client import SinkClient
from replication.fs import LocalFileSystem
from replication.net import free_port
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey
from tests.cluster.helpers import wal_entries

pytestmark = pytest.mark.slow

SOURCE = uuid.UUID("12345678-1234-5678-1234-567812345678")
OTHER = uuid.UUID("87654321-4321-8765-4321-876543218765")


def _entry(table: bytes, cells: list[Cell], ids: list[uuid.UUID], seq: int = 7) -> tuple[WALKey, int, bytes]:
    key = WALKey(b"0" * 32, table, seq, 1_700_000_000_000, {b"f": 1}, ids)
    return key, len(cells), encode_cells(cells)


def _batch() -> list[tuple[WALKey, int, bytes]]:
    put = int(CellType.PUT)
    rows = [Cell(b"row%03d" % i, b"f", b"q", 1000 + i, put, b"v%d" % i) for i in range(50)]
    deletes = [
        Cell(b"row001", b"f", b"q", 2000, int(CellType.DELETE_COLUMN)),
        Cell(b"row002", b"f", b"", 2000, int(CellType.DELETE_FAMILY)),
    ]
    return [
        _entry(b"t", rows[:25], [SOURCE]),
        _entry(b"t", rows[25:], [SOURCE, OTHER]),
        _entry(b"t", deletes, [SOURCE]),
    ]


def _state(root: str) -> list[Cell]:
    return scan_cells(read_cells(LocalFileSystem(), root, "t"))


def test_batch_applied_twice_gives_the_same_table(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
    token = cluster_token(LocalFileSystem(), embedded.root)
    sink = embedded.servers[0]
    with SinkClient(sink, token) as client, embedded.client() as admin:
        client.replicate(_batch(), str(SOURCE))
        admin.flush("t")
        once = _state(embedded.root)
        client.replicate(_batch(), str(SOURCE))
        admin.flush("t")
        twice = _state(embedded.root)
    assert once == twice
    assert len(once) == 48  # 50 puts, row001's column and row002's family deleted
    assert {c.row for c in once}.isdisjoint({b"row001", b"row002"})
    # the edits went through the normal write path with the source cluster ids kept in the WAL keys
    entries = [e for s in embedded.servers for e in wal_entries(embedded.root, s)]
    ids = {tuple(e.key.cluster_ids) for e in entries}
    assert ids == {(SOURCE,), (SOURCE, OTHER)}
    assert all(e.key.scopes == {b"f": 1} for e in entries)  # scopes from the sink's own descriptor


def test_unknown_table_and_family_on_the_peer(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", "f"))
    token = cluster_token(LocalFileSystem(), embedded.root)
    put = int(CellType.PUT)
    with SinkClient(embedded.servers[1], token) as client:
        with pytest.raises(TableNotFoundOnPeer, match="table gone does not exist") as info:
            client.replicate([_entry(b"gone", [Cell(b"r", b"f", b"q", 1, put, b"v")], [SOURCE])], str(SOURCE))
        assert info.value.tables == ["gone"]
        with pytest.raises(NoSuchColumnFamilyOnPeer) as fam:
            client.replicate(
                [
                    _entry(b"t", [Cell(b"r", b"f", b"q", 1, put, b"v")], [SOURCE]),
                    _entry(b"t", [Cell(b"r", b"nope", b"q", 1, put, b"v")], [SOURCE]),
                ],
                str(SOURCE),
            )
        assert fam.value.families == [("t", "nope")]
    # the whole batch was refused: nothing of the good entry was written
    assert [e for s in embedded.servers for e in wal_entries(embedded.root, s)] == []


def test_a_damaged_cell_block_is_one_error_naming_the_entry(embedded):
    """The sink reads the cell block in place (replicate_wire); a bad one is refused as before, naming the
    entry, and nothing is written."""
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", "f"))
    token = cluster_token(LocalFileSystem(), embedded.root)
    good = _entry(b"t", [Cell(b"r", b"f", b"q", 1, int(CellType.PUT), b"v")], [SOURCE])
    key, count, cells = _entry(b"t", [Cell(b"s", b"f", b"q", 1, int(CellType.PUT), b"v")], [SOURCE])
    damaged = (key, count, b"\x00\x00\x00\x05" + cells[4:])  # a size too small for a cell
    with (
        SinkClient(embedded.servers[0], token) as client,
        pytest.raises(SinkError, match="replication entry 1: bad cell block") as info,
    ):
        client.replicate([good, damaged], str(SOURCE))
    assert "\n" not in str(info.value)
    assert [e for s in embedded.servers for e in wal_entries(embedded.root, s)] == []


def test_bad_token_and_unreachable_sink(embedded):
    with SinkClient(embedded.servers[0], "wrong-token") as client, pytest.raises(SinkAuthError, match="token"):
        client.replicate(_batch(), str(SOURCE))
    with SinkClient(f"127.0.0.1:{free_port()}", "x", timeout_s=2) as client, pytest.raises(SinkUnavailable):
        client.replicate(_batch(), str(SOURCE))


def test_region_server_binds_and_advertises_from_config(zk_server, tmp_path):
    """hbase.regionserver.ipc.address / hbase.regionserver.hostname (HBase's keys) decide bind and name."""
    import psutil

    from replication.cluster.embedded import server_pids, start_cluster
    from replication.config import Config

    key = f"127.0.0.1:{zk_server.port}:/hbase-bind-{tmp_path.name[-6:]}"
    conf = Config.load(env={}, overrides={"hbase.regionserver.hostname": "LocalHost"})
    with start_cluster(key, str(tmp_path / "root"), 1, conf=conf, name="bind") as cluster:
        (server,) = cluster.servers
        host, port, _ = server.split(",")
        assert host == "localhost"  # lower-cased, as ServerName does
        pid = server_pids(cluster.root)[server]
        listening = {c.laddr for c in psutil.Process(pid).net_connections(kind="tcp") if c.status == "LISTEN"}
        # the gRPC port and the HBase RPC listener's (advertised for HBase under the same host name)
        (hbase_name,) = cluster.zk.get_children(cluster.paths.hbase_rpc_rs)
        hbase_host, hbase_port, _ = hbase_name.split(",")
        assert hbase_host == "localhost"
        # gRPC may bind an IPv4-mapped IPv6 socket; either way only 127.0.0.1 is listened on
        assert {(addr.ip.removeprefix("::ffff:"), addr.port) for addr in listening} == {
            ("127.0.0.1", int(port)),
            ("127.0.0.1", int(hbase_port)),
        }
        with cluster.client() as client:
            assert client.live_servers() == [server]
