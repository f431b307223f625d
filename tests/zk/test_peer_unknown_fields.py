"""Peer rewrites keep what hbrep does not model, byte for byte: the peer data map
(``ReplicationPeerConfig.getPeerData()``, field 3), HBase 3's ``remoteWALDir`` (field 12, synchronous
replication; unknown to hbrep's proto) and any later field. The message is parsed whole, only the edited
fields change, and it is serialized again; a message in field-number order (as HBase's Java writes it)
comes back unchanged when nothing changed."""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replication.proto import HBase_pb2, Replication_pb2
from replication.zk import codec
from replication.zk import peer_config_edits as edits
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _unknown_field(number: int, wire: int, payload: int | bytes) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        return key + _varint(payload)  # type: ignore[arg-type]
    if wire == 1:
        return key + struct.pack("<Q", payload)  # type: ignore[arg-type]
    if wire == 5:
        return key + struct.pack("<I", payload)  # type: ignore[arg-type]
    return key + _varint(len(payload)) + payload  # type: ignore[arg-type]


def _payload(wire: int):
    if wire == 0:
        return st.integers(0, 2**64 - 1)
    if wire == 1:
        return st.integers(0, 2**64 - 1)
    if wire == 5:
        return st.integers(0, 2**32 - 1)
    return st.binary(max_size=20)


UNKNOWN = st.lists(
    st.tuples(st.integers(13, 5000), st.sampled_from([0, 1, 2, 5])).flatmap(
        lambda nw: st.tuples(st.just(nw[0]), st.just(nw[1]), _payload(nw[1]))
    ),
    max_size=4,
)


@st.composite
def java_peer_bytes(draw) -> bytes:
    """``PBUF`` + a ReplicationPeer as HBase writes one: known fields in number order, then
    remoteWALDir (12) and later fields hbrep's proto does not know."""
    peer = Replication_pb2.ReplicationPeer(clusterkey=draw(st.sampled_from(["zk1:2181:/hbase", "a,b,c:2181:/p"])))
    if draw(st.booleans()):
        peer.replicationEndpointImpl = "org.apache.hadoop.hbase.replication.regionserver.TestEndpoint"
    data_map = draw(st.dictionaries(st.binary(min_size=1, max_size=8), st.binary(max_size=12), max_size=3))
    for key, value in data_map.items():
        peer.data.add(first=key, second=value)
    for name, value in draw(st.dictionaries(NAMES, NAMES, max_size=3)).items():
        peer.configuration.add(name=name, value=value)
    replicate_all = draw(st.booleans())
    for table in [] if replicate_all else draw(st.lists(NAMES, max_size=2, unique=True)):  # HBase: not with all
        entry = peer.table_cfs.add(table_name=HBase_pb2.TableName(namespace=b"default", qualifier=table.encode()))
        entry.families.extend(f.encode() for f in draw(st.lists(NAMES, max_size=2, unique=True)))
    peer.bandwidth = draw(st.integers(0, 2**40))
    peer.replicate_all = replicate_all
    peer.serial = draw(st.booleans())
    body = peer.SerializeToString()
    if draw(st.booleans()):
        body += _unknown_field(12, 2, draw(st.sampled_from([b"hdfs://nn:8020/remoteWALs", b"/remote"])))
    for number, wire, payload in sorted(draw(UNKNOWN), key=lambda f: f[0]):
        body += _unknown_field(number, wire, payload)
    return codec.PB_MAGIC + body


def _unmodelled(data: bytes) -> tuple[list, bytes]:
    """(the data map, the bytes of every field hbrep's proto does not know) of a peer's bytes."""
    peer = Replication_pb2.ReplicationPeer()
    peer.ParseFromString(data[len(codec.PB_MAGIC) :])
    known = Replication_pb2.ReplicationPeer()
    known.CopyFrom(peer)
    known.DiscardUnknownFields()
    return [(p.first, p.second) for p in peer.data], peer.SerializeToString()[len(known.SerializeToString()) :]


@given(java_peer_bytes())
def test_reading_and_writing_back_is_byte_for_byte(data):
    assert ReplicationPeerConfig.from_bytes(data).to_bytes() == data


@given(java_peer_bytes(), st.integers(0, 2**40), st.dictionaries(NAMES, NAMES, min_size=1, max_size=2))
def test_an_edit_changes_only_the_edited_fields(data, bandwidth, entries):
    read = ReplicationPeerConfig.from_bytes(data)
    edited = edits.update_configuration(edits.set_bandwidth(read, bandwidth), entries)
    written = edited.to_bytes()
    assert _unmodelled(written) == _unmodelled(data)  # data map, remoteWALDir and later fields as they were
    again = ReplicationPeerConfig.from_bytes(written)
    assert again == edited and again.peer_data == read.peer_data
    before = Replication_pb2.ReplicationPeer()
    before.ParseFromString(data[4:])
    after = Replication_pb2.ReplicationPeer()
    after.ParseFromString(written[4:])
    for name in ("clusterkey", "replicationEndpointImpl", "data", "table_cfs", "namespaces", "replicate_all", "serial"):
        assert getattr(after, name) == getattr(before, name), name
    assert after.bandwidth == bandwidth
    assert {p.name: p.value for p in after.configuration} == {**{p.name: p.value for p in before.configuration},
                                                              **entries}  # fmt: skip


def test_a_new_peer_has_no_unmodelled_fields():
    config = ReplicationPeerConfig("zk1:2181:/hbase", bandwidth=5)
    assert config.peer_data == {} and _unmodelled(config.to_bytes()) == ([], b"")


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(data=java_peer_bytes())
def test_edit_peer_config_on_zookeeper_keeps_them(zkc, paths, data):
    """Through hbrep's rewrite path (``edit_peer_config``, version-guarded set) on a real ZooKeeper."""
    storage = ReplicationPeerStorage(zkc, paths)
    path = paths.peer("9")
    if zkc.exists(path):
        zkc.delete(path, recursive=True)
    zkc.create(path, data, makepath=True)
    zkc.create(paths.peer_state("9"), codec.peer_state_to_bytes(True))
    stored = edits.edit_peer_config(storage, "9", lambda c: edits.set_bandwidth(c, c.bandwidth + 1))
    written, _ = zkc.get(path)
    assert _unmodelled(written) == _unmodelled(data)
    assert ReplicationPeerConfig.from_bytes(written) == stored
    stored = edits.edit_peer_config(storage, "9", lambda c: edits.set_bandwidth(c, c.bandwidth - 1))
    assert zkc.get(path)[0] == data  # the edit undone: the very bytes HBase wrote
