"""Fuzz targets: hbrep's parsers of outside bytes, and the seeds (real files) their corpora start from.

Each target takes bytes and must end in a result or one of hbrep's own errors (``HbrepError``); any
other exception is a defect. Used by the bounded hypothesis runs in ``make test``
(``test_fuzz_parsers.py``) and by ``make fuzz`` (atheris, ``atheris_main.py``).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from google.protobuf.message import DecodeError
from shared_fixtures import hlog_fixtures_dir

from replication.cluster.hbase_rpc.framing import FrameError
from replication.cluster.hbase_rpc.framing import decode_request as decode_rpc_request
from replication.cluster.hbase_rpc.framing import encode_request as encode_rpc_request
from replication.cluster.info import ClusterInfo
from replication.cluster.sink import decode_request
from replication.config import Config, read_site_xml, write_site_xml
from replication.errors import HbrepError
from replication.proto import Admin_pb2
from replication.wal.cell_codec import encode_cells
from replication.wal.key_codec import key_to_pb
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.reader import open_wal
from replication.wal.value_codecs import SUPPORTED
from replication.wal.writer import ProtobufLogWriter, WALCompression
from replication.zk import codec, journal
from replication.zk.peer_storage import ReplicationPeerConfig

REPO = Path(__file__).resolve().parents[2]
_SCRATCH = Path(tempfile.mkdtemp(prefix="hbrep-fuzz-"))


def _scratch_file(data: bytes, name: str) -> str:
    path = _SCRATCH / f"{name}-{os.getpid()}"
    path.write_bytes(data)
    return str(path)


# -- targets ------------------------------------------------------------------------------------
def wal_file(data: bytes) -> int:
    """A WAL file (protobuf ``PWAL``, compressed, or 0.94 SequenceFile) read to its end; entries read."""
    count = 0
    with open_wal(_scratch_file(data, "wal")) as reader:
        for read in reader:
            count += len(read.entry.cells)
    return count


def sink_request(data: bytes) -> int:
    """A ReplicateWALEntry request as the sink decodes it (the bytes gRPC already parsed as protobuf)."""
    request = Admin_pb2.ReplicateWALEntryRequest()
    try:
        request.ParseFromString(data)
    except Exception:  # not protobuf at all: gRPC refuses it before hbrep sees it
        return -1
    spans: list = []
    return len(decode_request(request, spans))


def hbase_rpc_request(data: bytes) -> int:
    """A request frame on hbrep's HBase RPC listener (after its int32 length), decoded as the listener does
    before the sink: a frame it cannot split or a message that is not a request closes the connection
    or answers an IOException (-1 here); the rest goes through the sink's decoding."""
    try:
        frame = decode_rpc_request(data)
    except FrameError:
        return -1
    request = Admin_pb2.ReplicateWALEntryRequest()
    try:
        request.ParseFromString(frame.message)
    except DecodeError:
        return -1
    request.cell_block = frame.cell_block
    return len(decode_request(request, []))


def znode_value(data: bytes) -> int:
    """Every znode value hbrep reads: positions, peer state, locks, cluster id, peers, cluster info, journal."""
    parsed = 0
    for parse in (
        codec.parse_position,
        codec.parse_peer_state,
        codec.parse_lock,
        codec.parse_cluster_id,
        ReplicationPeerConfig.from_bytes,
        lambda d: ClusterInfo.from_json(d, "/hbase/hbrep-cluster"),
        lambda d: journal.decode(1, d),
    ):
        try:
            parse(data)
            parsed += 1
        except HbrepError:
            pass
    return parsed


def site_xml(data: bytes) -> int:
    """An hbase-site.xml read and validated as ``Config.load`` does; properties read."""
    path = _scratch_file(data, "site.xml")
    values = read_site_xml(path)
    Config.load(path, env={})
    return len(values)


TARGETS: dict[str, Callable[[bytes], int]] = {
    "wal_file": wal_file,
    "sink_request": sink_request,
    "hbase_rpc_request": hbase_rpc_request,
    "znode_value": znode_value,
    "site_xml": site_xml,
}


# -- seeds --------------------------------------------------------------------------------------
def _entries() -> list[Entry]:
    cluster = uuid.UUID("8d1f6a2e-4c1b-4a4e-9e0e-6f1b2c3d4e5f")
    result = []
    for i in range(3):
        key = WALKey(f"{i:032x}".encode(), b"ns:t1", 10 + i, 1_700_000_000_000 + i, {b"f": 1}, [cluster])
        cells = [
            Cell(f"row{i}".encode(), b"f", b"q", 1_700_000_000_000, int(CellType.PUT), b"value" * (i + 1)),
            Cell(f"row{i}".encode(), b"f", b"d", 1_700_000_000_001, int(CellType.DELETE_COLUMN), b"", b"\x01\x00\x01t"),
        ]
        result.append(Entry(key, cells))
    return result


def seeds(target: str) -> list[bytes]:
    """The corpus a target starts from: real files where hbrep reads real files."""
    if target == "wal_file":
        hlogs = hlog_fixtures_dir()
        found = [p.read_bytes() for p in sorted(hlogs.rglob("*")) if p.is_file()]  # written by HBase 0.94
        assert len(found) >= 8, hlogs
        for writer in ("ProtobufLogWriter", "AsyncProtobufLogWriter"):
            path = _SCRATCH / f"seed-{writer}"
            path.unlink(missing_ok=True)
            with ProtobufLogWriter(str(path), writer_cls_name=writer) as wal:
                for entry in _entries():
                    wal.append(entry)
            found.append(path.read_bytes())
        # compressed WALs: tag compression (of well-formed tags), and value compression with each codec
        tagged = [
            Entry(e.key, [replace(c, tags=b"\x00\x02\x01t" if c.tags else b"") for c in e.cells]) for e in _entries()
        ]
        for values in (None, *SUPPORTED):
            path = _SCRATCH / f"seed-compressed-{values}"
            path.unlink(missing_ok=True)
            with ProtobufLogWriter(str(path), compression=WALCompression(values=values)) as wal:
                for entry in tagged + tagged:  # twice: the second time from the dictionaries
                    wal.append(entry)
            found.append(path.read_bytes())
        return found
    if target == "sink_request":
        request = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId=str(uuid.uuid4()))
        blocks = []
        for entry in _entries():
            request.entry.add(associated_cell_count=len(entry.cells)).key.CopyFrom(
                key_to_pb(entry.key, len(entry.cells))
            )
            blocks.append(encode_cells(entry.cells))
        request.cell_block = b"".join(blocks)
        return [request.SerializeToString(), Admin_pb2.ReplicateWALEntryRequest().SerializeToString()]
    if target == "hbase_rpc_request":  # what HBase's client sends: the same request, cells in the cell block
        (whole,) = [r for r in seeds("sink_request") if r]
        request = Admin_pb2.ReplicateWALEntryRequest.FromString(whole)
        block = request.cell_block
        request.ClearField("cell_block")
        return [encode_rpc_request(0, "ReplicateWALEntry", request, block, 60000)[4:]]
    if target == "znode_value":
        peer = ReplicationPeerConfig("zk1,zk2:2181:/hbase", replicate_all=False, table_cfs={"t1": ["f"]},
                                     namespaces={"ns"}, configuration={"k": "v"}).to_bytes()  # fmt: skip
        return [
            codec.position_to_bytes(12345),
            (4096).to_bytes(8, "big"),
            b"98765",
            codec.peer_state_to_bytes(True),
            b"ENABLED",
            codec.lock_to_bytes("rs1,16020,1"),
            codec.cluster_id_to_bytes(uuid.UUID(int=7)),
            peer,
            b"zk1:2181:/hbase",
            ClusterInfo("a", "/tmp/a", "/hbase").to_json(),
            journal.encode(["rs1,1,1/1", "rs2,2,2"], 1),
        ]
    if target == "site_xml":
        path = _SCRATCH / "seed-site.xml"
        write_site_xml(path, {"replication.source.ratio": "0.5", "hbrep.zk.auth": "u:p",
                              "zookeeper.znode.parent": "/hbase", "hbase.rpc.timeout": "60000"})  # fmt: skip
        shipped = REPO / "docker" / "hbase-site.xml"
        return [path.read_bytes()] + ([shipped.read_bytes()] if shipped.exists() else [])
    raise KeyError(target)
