"""What hbrep sends the master and reads back: a peer config as HBase's ReplicationPeer message (the
znode's protobuf without PBUF), and a table as TableSchema; Hypothesis over the configs and names
HBase accepts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replication.hbase.peer_convert import peer_from_pb, peer_to_pb
from replication.hbase.table_schemas import descriptor_of, family_schema, schema_of, scope_of, with_scope
from replication.proto import Replication_pb2
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor
from replication.zk import codec
from replication.zk.peer_storage import ReplicationPeerConfig

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
families = st.lists(names, min_size=1, max_size=3, unique=True)
table_cfs = st.dictionaries(st.one_of(names, st.builds(lambda n, t: f"{n}:{t}", names, names)),
                            st.lists(names, max_size=2, unique=True), max_size=3)  # fmt: skip
configs = st.builds(
    ReplicationPeerConfig,
    cluster_key=st.builds(lambda h, p: f"{h}:{p}:/hbase", names, st.integers(1, 65535)),
    replicate_all=st.booleans(),
    table_cfs=st.one_of(st.none(), table_cfs.filter(bool)),
    namespaces=st.one_of(st.none(), st.sets(names, min_size=1, max_size=3)),
    exclude_table_cfs=st.one_of(st.none(), table_cfs.filter(bool)),
    exclude_namespaces=st.one_of(st.none(), st.sets(names, min_size=1, max_size=3)),
    bandwidth=st.integers(0, 2**40),
    serial=st.booleans(),
    configuration=st.dictionaries(names, names, max_size=3),
    replication_endpoint_impl=st.one_of(st.none(), st.just("org.example.Endpoint")),
)


def _normal(config: ReplicationPeerConfig) -> ReplicationPeerConfig:
    """What the znode codec keeps: ``default:t`` spelled ``t``, families in order."""
    return ReplicationPeerConfig.from_bytes(config.to_bytes())


@given(configs)
def test_a_peer_config_survives_the_master_message_and_is_the_znodes_protobuf(config):
    pb = peer_to_pb(config)
    assert codec.PB_MAGIC + pb.SerializeToString() == config.to_bytes()
    assert peer_from_pb(pb) == _normal(config)
    again = Replication_pb2.ReplicationPeer()
    again.ParseFromString(pb.SerializeToString())
    assert peer_from_pb(again) == _normal(config)


@given(st.one_of(names, st.builds(lambda n, t: f"{n}:{t}", names, names)), families, st.integers(0, 1),
       st.integers(1, 10))  # fmt: skip
def test_a_table_survives_its_schema_and_scope_changes_keep_other_attributes(table, fams, scope, versions):
    desc = TableDescriptor.of(table, *(ColumnFamilyDescriptor(f, scope=scope, max_versions=versions) for f in fams))
    schema = schema_of(desc)
    assert descriptor_of(schema) == desc
    flipped = with_scope(schema, 1 - scope)
    assert {scope_of(f) for f in flipped.column_families} == {1 - scope}
    assert descriptor_of(flipped).max_versions_by_family() == desc.max_versions_by_family()
    assert family_schema(flipped, fams[0], table).name == fams[0].encode()
