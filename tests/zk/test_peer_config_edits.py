"""The peer-configuration edits with HBase's merge rules and refusals (ReplicationPeerConfigUtil,
ReplicationPeerManager.checkPeerConfig)."""

from __future__ import annotations

import pytest

from replication.zk import peer_config_edits as edits
from replication.zk.peer_storage import ReplicationPeerConfig


def _only(**kwargs) -> ReplicationPeerConfig:
    return ReplicationPeerConfig("h:2181:/hbase", replicate_all=False, **kwargs)


def test_append_merges_families_and_every_family_wins():
    config = _only(table_cfs={"t1": ["a"], "t2": []})
    merged = edits.append_table_cfs(config, {"t1": ["b"], "t2": ["x"], "ns:t3": []})
    assert merged.table_cfs == {"t1": ["a", "b"], "t2": [], "ns:t3": []}


def test_remove_follows_hbases_rules():
    config = _only(table_cfs={"t1": ["a", "b"], "t2": []})
    assert edits.remove_table_cfs(config, {"t1": ["a"]}, "2").table_cfs == {"t1": ["b"], "t2": []}
    assert edits.remove_table_cfs(config, {"t2": []}, "2").table_cfs == {"t1": ["a", "b"]}
    with pytest.raises(edits.BadPeerConfig, match=r"^No table: t9 in table-cfs config of peer: 2$"):
        edits.remove_table_cfs(config, {"t9": []}, "2")
    with pytest.raises(edits.BadPeerConfig, match="Cannot remove table: t1 which has specified cfs"):
        edits.remove_table_cfs(config, {"t1": []}, "2")
    with pytest.raises(edits.BadPeerConfig, match="Cannot remove cf of table: t2 which doesn't specify cfs"):
        edits.remove_table_cfs(config, {"t2": ["a"]}, "2")


def test_check_refuses_what_hbase_refuses():
    with pytest.raises(edits.BadPeerConfig, match="Need clean namespaces or table-cfs config firstly"):
        edits.check_peer_config(ReplicationPeerConfig("h:2181:/hbase", replicate_all=True, namespaces={"ns"}))
    with pytest.raises(edits.BadPeerConfig, match="Need clean exclude-namespaces or exclude-table-cfs"):
        edits.check_peer_config(_only(exclude_namespaces={"ns"}))
    with pytest.raises(edits.BadPeerConfig, match="Table-cfs ns:t1 is conflict with namespaces ns"):
        edits.check_peer_config(_only(namespaces={"ns"}, table_cfs={"ns:t1": []}))
    edits.check_peer_config(_only(namespaces={"ns"}, table_cfs={"other:t1": []}))


def test_get_peer_config_string():
    config = _only(table_cfs={"t1": ["a"]}, namespaces={"ns"}, bandwidth=10, serial=True)
    assert edits.peer_config_string(config) == (
        "clusterKey=h:2181:/hbase,replicationEndpointImpl=,replicateAllUserTables=false,namespaces=ns,"
        "tableCFs=default.t1:a,bandwidth=10,serial=true"
    )
