"""The region servers' HBase RPC listener (replication/cluster/hbase_rpc/server.py) with hbrep's own HBase RPC
client (HBaseSinkClient) as the caller: found through ``<parent>/hbrep-hbase-rpc``, edits applied by the
same sink as the gRPC path (cluster ids kept in the WAL keys), errors back as HBase's exceptions."""

from __future__ import annotations

import socket
import struct
import uuid

import pytest

from replication.cluster.errors import NoSuchColumnFamilyOnPeer, TableNotFoundOnPeer
from replication.cluster.hbase_registry import hbase_cluster_key
from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC
from replication.cluster.hbase_rpc.framing import decode_response, encode_request
from replication.cluster.hbase_rpc.preamble import connection_start, preamble
from replication.cluster.hbase_rpc.sasl import sasl_token, switch_to_simple_reply
from replication.cluster.hbase_rpc.sink_client import HBaseSinkClient
from replication.fs import LocalFileSystem
from replication.proto import Admin_pb2
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey
from replication.zk import codec
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from tests.cluster.helpers import wal_entries

pytestmark = pytest.mark.slow

SOURCE = uuid.UUID("12345678-1234-5678-1234-567812345678")
OTHER = uuid.UUID("87654321-4321-8765-4321-876543218765")
PUT = int(CellType.PUT)


def _entry(table: bytes, cells: list[Cell], ids: list[uuid.UUID]) -> tuple[WALKey, int, bytes]:
    key = WALKey(b"0" * 32, table, 7, 1_700_000_000_000, {b"f": 1}, ids)
    return key, len(cells), encode_cells(cells)


def _hbase_servers(embedded) -> list[str]:
    return sorted(embedded.zk.get_children(embedded.paths.hbase_rpc_rs))


def test_each_region_server_registers_its_hbase_rpc_listener_for_hbase(embedded):
    hbase_names = _hbase_servers(embedded)
    assert len(hbase_names) == len(embedded.servers) == 2
    # same host and start code as the server's own name, another port (the HBase RPC listener's)
    ours = {(h, code): port for h, port, code in (s.split(",") for s in embedded.servers)}
    for name in hbase_names:
        host, port, code = name.split(",")
        assert (host, code) in ours and port != ours[(host, code)]
    # the cluster id copy is the cluster's own id, in the PBUF form HBase's ZKClusterId reads
    data, _ = embedded.zk.get(embedded.paths.hbase_rpc_hbaseid)
    assert codec.parse_cluster_id(data) == read_cluster_id(embedded.zk, embedded.paths)
    assert data.startswith(b"PBUF")
    key = ClusterKey.parse(hbase_cluster_key(ClusterKey.parse(embedded.cluster_key), embedded.paths))
    assert key.znode_parent == f"{ClusterKey.parse(embedded.cluster_key).znode_parent}/hbrep-hbase-rpc"


def test_replicate_over_hbase_rpc_applies_through_the_sink_with_cluster_ids_kept(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
    rows = [Cell(b"row%03d" % i, b"f", b"q", 1000 + i, PUT, b"v%d" % i) for i in range(40)]
    deletes = [Cell(b"row001", b"f", b"q", 2000, int(CellType.DELETE_COLUMN))]
    batch = [
        _entry(b"t", rows[:20], [SOURCE]),
        _entry(b"t", rows[20:], [SOURCE, OTHER]),
        _entry(b"t", deletes, [SOURCE]),
    ]
    for codec_class in (None, KEY_VALUE_CODEC):  # KeyValueCodecWithTags (HBase's default) and KeyValueCodec
        for name in _hbase_servers(embedded):
            extra = {"codec_class": codec_class} if codec_class else {}
            with HBaseSinkClient(name, 10.0, **extra) as client:
                client.replicate(batch, str(SOURCE))
    with embedded.client() as admin:
        admin.flush("t")
    cells = scan_cells(read_cells(LocalFileSystem(), embedded.root, "t"))
    expected = {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in rows if c.row != b"row001"}
    assert {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells} == expected
    entries = [e for s in embedded.servers for e in wal_entries(embedded.root, s)]
    assert {tuple(e.key.cluster_ids) for e in entries} == {(SOURCE,), (SOURCE, OTHER)}


def test_missing_table_and_family_come_back_as_hbase_exceptions(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", "f"))
    name = _hbase_servers(embedded)[0]
    with HBaseSinkClient(name, 10.0) as client:
        with pytest.raises(TableNotFoundOnPeer, match="TableNotFoundException") as info:
            client.replicate([_entry(b"gone", [Cell(b"r", b"f", b"q", 1, PUT, b"v")], [SOURCE])], str(SOURCE))
        assert info.value.tables == ["gone"]
        with pytest.raises(NoSuchColumnFamilyOnPeer) as fam:
            client.replicate([_entry(b"t", [Cell(b"r", b"zz", b"q", 1, PUT, b"v")], [SOURCE])], str(SOURCE))
        assert fam.value.families == [("t", "zz")]
        # the connection stays usable after an exception: a good call on it goes through
        client.replicate([_entry(b"t", [Cell(b"r", b"f", b"q", 1, PUT, b"v")], [SOURCE])], str(SOURCE))


def _raw(name: str, data: bytes) -> bytes:
    """Send ``data`` on a new connection to ``name``; everything the server wrote before closing."""
    host, port, _ = name.split(",")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_refused_connections_and_methods_get_hbase_exceptions(embedded):
    name = _hbase_servers(embedded)[0]
    # another service: call id -1 (connection level) with UnknownServiceException, then the server closes
    answer = _raw(name, connection_start("ClientService", KEY_VALUE_CODEC, "u"))
    (length,) = struct.unpack(">i", answer[:4])
    response = decode_response(answer[4 : 4 + length])
    assert response.call_id == 0xFFFFFFFF
    assert response.exception.exception_class_name == "org.apache.hadoop.hbase.ipc.UnknownServiceException"
    # Kerberos (auth 81) at a listener without Kerberos: "switch to SIMPLE", as HBase's SIMPLE server answers
    host, port, _ = name.split(",")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(preamble(81) + sasl_token(b"an AP-REQ"))
        assert _recv(sock, 8) == switch_to_simple_reply()
    # DIGEST (auth 82, a delegation token) is refused
    answer = _raw(name, preamble(82))
    assert "authentication code 82 is not supported" in decode_response(answer[4:]).exception.stack_trace
    # not HBase's RPC at all
    answer = _raw(name, b"GET / HTTP/1.1\r\n\r\n")
    assert decode_response(answer[4:]).exception.exception_class_name.endswith("FatalConnectionException")
    # a method other than ReplicateWALEntry: UnsupportedOperationException for that call, connection open
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(connection_start("AdminService", KEY_VALUE_CODEC, "u"))
        sock.sendall(encode_request(5, "GetRegionInfo", Admin_pb2.ReplicateWALEntryRequest()))
        sock.sendall(encode_request(6, "ReplicateWALEntry", Admin_pb2.ReplicateWALEntryRequest()))
        answers = []
        for _ in range(2):
            (length,) = struct.unpack(">i", _recv(sock, 4))
            answers.append(decode_response(_recv(sock, length)))
    assert answers[0].call_id == 5
    assert answers[0].exception.exception_class_name == "java.lang.UnsupportedOperationException"
    assert answers[1].call_id == 6 and answers[1].exception is None


def _recv(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, "the server closed the connection"
        data += chunk
    return data


def test_the_listener_can_be_turned_off(cluster_key, tmp_path, cluster_conf):
    from replication.cluster.embedded import start_cluster
    from replication.config import Config

    conf = Config.load(env={}, overrides={**cluster_conf.as_dict(), "hbrep.regionserver.hbase.rpc.enabled": "false"})
    cluster = start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=conf, name="off")
    try:
        assert cluster.servers and not cluster.zk.exists(cluster.paths.hbase_rpc_rs)
    finally:
        cluster.stop()


def test_a_taken_hbase_rpc_port_stops_the_region_server_with_one_line_naming_it(cluster_key, tmp_path, cluster_conf):
    from replication.cluster.embedded import start_cluster
    from replication.cluster.errors import ClusterError
    from replication.config import Config

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        conf = Config.load(env={}, overrides={**cluster_conf.as_dict(), "hbrep.regionserver.hbase.rpc.port": port})
        with pytest.raises(ClusterError, match=rf"could not bind the HBase RPC port 127\.0\.0\.1:{port}"):
            start_cluster(cluster_key, str(tmp_path / "root"), 1, conf=conf, name="taken")
