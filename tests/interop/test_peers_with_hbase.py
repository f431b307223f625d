"""Peers both ways with a running real HBase 2.6 (issue 43): a peer HBase's Admin API adds is what hbrep
lists, and every hbrep peer command on a real HBase goes through its master's procedures
(replication/hbase/master_admin.py), so HBase's own Admin (the AdminTool judge: listReplicationPeers,
getReplicationPeerConfig, isReplicationPeerEnabled) sees each change at once, with no restart, and
HBase's region servers act on it at once: `hbrep enable_peer` makes HBase ship every row (those
written while the peer was disabled included) into an hbrep cluster's HBase-RPC sink.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import replace

import pytest
from interop.helpers import (
    assert_every_cell_arrives,
    assert_hbrep_wal_keeps_hbase_cluster_id,
    create_on_both,
    hbase_table_cells,
    hbrep,
    hbrep_json,
    hbrep_table_cells,
    write_through_thrift,
)

from replication.cluster.hbase_registry import hbase_cluster_key
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_config_edits import edit_peer_config
from replication.zk.peer_storage import ReplicationPeerStorage

pytestmark = pytest.mark.slow

# how long a running HBase is watched not shipping a disabled peer (many of its shipper's sleeps,
# replication.source.sleepforretries = 1 s; HBase ships within seconds once enabled)
DISABLED_WINDOW_S = 10


def _hbase_config(peer: dict) -> dict:
    """getReplicationPeerConfig as the fields hbrep's ReplicationPeerConfig holds."""
    c = peer["config"]
    return {
        "cluster_key": c["cluster_key"],
        "replicate_all": c["replicate_all"],
        "table_cfs": c["table_cfs"] or None,
        "namespaces": set(c["namespaces"]) if c["namespaces"] else None,
        "exclude_table_cfs": c["exclude_table_cfs"] or None,
        "exclude_namespaces": set(c["exclude_namespaces"]) if c["exclude_namespaces"] else None,
        "bandwidth": c["bandwidth"],
        "serial": c["serial"],
        "configuration": c["configuration"],
        "replication_endpoint_impl": c["endpoint"],
    }


def _hbrep_config(cluster: str, peer_id: str) -> tuple[dict, bool]:
    key = ClusterKey.parse(cluster)
    with connected(key) as zk:
        storage = ReplicationPeerStorage(zk, ZNodePaths(parent=key.znode_parent))
        config, enabled = storage.get_peer_config(peer_id), storage.is_peer_enabled(peer_id)
    fields = {k: v for k, v in vars(config).items() if not k.startswith("_")} if hasattr(config, "__dict__") else {}
    for name in ("table_cfs", "exclude_table_cfs"):  # HBase names default-namespace tables without "default:"
        fields[name] = {t.removeprefix("default:"): sorted(c) for t, c in (fields[name] or {}).items()} or None
    return fields, enabled


def _peers(real_hbase, *ids: str) -> dict[str, dict]:
    return {p["id"]: p for p in real_hbase.admin("peers") if p["id"] in ids}


def test_peers_added_through_hbase_admin_are_listed_by_hbrep_exactly(real_hbase):
    cluster = real_hbase.layout().cluster_key
    some, every = f"s{uuid.uuid4().hex[:6]}", f"e{uuid.uuid4().hex[:6]}"
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    real_hbase.admin("add-peer", json.dumps({
        "id": some, "cluster_key": elsewhere, "enabled": False, "replicate_all": False,
        "table_cfs": {"t1": ["a", "b"], "ns1:t2": [], "ns1:t3": ["x"]}, "namespaces": ["ns9", "ns8"],
        "bandwidth": 2048, "serial": True,
    }))  # fmt: skip
    real_hbase.admin("add-peer", json.dumps({
        "id": every, "cluster_key": elsewhere + "2", "enabled": True, "replicate_all": True,
        "exclude_table_cfs": {"t1": ["a"], "ns2:t4": []}, "exclude_namespaces": ["nsx"],
    }))  # fmt: skip
    try:
        hbase = _peers(real_hbase, some, every)
        listed = {row["PEER_ID"]: row for row in hbrep_json("list_peers", cluster=cluster)}
        for peer_id in (some, every):
            assert listed[peer_id] == hbase[peer_id]["shell_row"]  # the HBase shell's list_peers row
            ours, enabled = _hbrep_config(cluster, peer_id)
            assert ours == _hbase_config(hbase[peer_id]) and enabled == hbase[peer_id]["is_enabled"]
        assert listed[some]["STATE"] == "DISABLED" and listed[every]["STATE"] == "ENABLED"
        # a state change made through HBase is seen by hbrep at once
        real_hbase.admin("enable-peer", some)
        assert {r["PEER_ID"]: r["STATE"] for r in hbrep_json("list_peers", cluster=cluster)}[some] == "ENABLED"
    finally:
        real_hbase.admin("remove-peer", some)
        real_hbase.admin("remove-peer", every)
    assert not {some, every} & {row["PEER_ID"] for row in hbrep_json("list_peers", cluster=cluster)}


def test_peer_added_by_hbrep_is_read_back_by_hbase_admin_exactly(real_hbase):
    cluster = real_hbase.layout().cluster_key
    peer_id = f"h{uuid.uuid4().hex[:6]}"
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    hbrep("add_peer", peer_id, elsewhere, "--state", "DISABLED", "--table-cfs", "t1:a,b;ns1:t2:;ns1:t3:x",
          "--namespaces", "ns8,ns9", "--bandwidth", "4096", "--serial", cluster=cluster)  # fmt: skip
    ours, _ = _hbrep_config(cluster, peer_id)
    try:
        hbase = _peers(real_hbase, peer_id)[peer_id]  # at once: no restart
        assert hbase["enabled"] is False and hbase["is_enabled"] is False
        assert hbase["config"] == hbase["listed_config"]  # listReplicationPeers == getReplicationPeerConfig
        assert _hbase_config(hbase) == ours
        assert _hbase_config(hbase) | {"table_cfs": None, "namespaces": None} == {
            "cluster_key": elsewhere, "replicate_all": False, "table_cfs": None, "namespaces": None,
            "exclude_table_cfs": None, "exclude_namespaces": None, "bandwidth": 4096, "serial": True,
            "configuration": {}, "replication_endpoint_impl": None,
        }  # fmt: skip
        assert hbase["config"]["table_cfs"] == {"t1": ["a", "b"], "ns1:t2": [], "ns1:t3": ["x"]}
        assert hbase["config"]["namespaces"] == ["ns8", "ns9"]
        assert hbase["shell_row"] == {r["PEER_ID"]: r for r in hbrep_json("list_peers", cluster=cluster)}[peer_id]
        # HBase's region servers track the peer (a queue per server, disabled peers too), and every
        # one of them applies the enable (its source's shipper then runs; shipping to a real peer
        # cluster is issue 21's: no HBase-RPC sink runs here).
        queues = real_hbase.admin("queues")
        live = set(real_hbase.admin("servers"))
        assert live and all(peer_id in queues[server] for server in live)
        hbrep("enable_peer", peer_id, cluster=cluster)
        assert _peers(real_hbase, peer_id)[peer_id]["is_enabled"] is True
        deadline = time.monotonic() + 60
        wanted = f"Received a peer change event, peerId={peer_id}, type=ENABLE_PEER"
        rs_logs = [log for log in real_hbase.log_files() if log.name.startswith("rs")]
        while not all(wanted in log.read_text(errors="replace") for log in rs_logs):
            assert time.monotonic() < deadline, f"not every region server enabled {peer_id}: {rs_logs}"
            time.sleep(1)
    finally:
        hbrep("remove_peer", peer_id, cluster=cluster)
    assert peer_id not in _peers(real_hbase, peer_id)


def test_peer_config_edited_by_hbreps_shell_commands_is_what_hbase_reads(real_hbase):
    """Issues 23 and 43: after set_peer_replicate_all / exclude lists / bandwidth / serial /
    update_peer_config (each the master's UpdateReplicationPeerConfig procedure), HBase's Admin API reads
    the same configuration at once."""
    cluster = real_hbase.layout().cluster_key
    peer_id = f"e{uuid.uuid4().hex[:6]}"
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    hbrep("add_peer", peer_id, elsewhere, "--state", "DISABLED", "--table-cfs", "t1:a", cluster=cluster)
    hbrep("append_peer_tableCFs", peer_id, "t1:b;ns1:t2:", cluster=cluster)
    hbrep("set_peer_tableCFs", peer_id, "", cluster=cluster)
    hbrep("set_peer_replicate_all", peer_id, "true", cluster=cluster)
    hbrep("set_peer_exclude_tableCFs", peer_id, "t3:c;ns2:t4:", cluster=cluster)
    hbrep("set_peer_exclude_namespaces", peer_id, "ns7", cluster=cluster)
    hbrep("append_peer_exclude_namespaces", peer_id, "ns8,ns9", cluster=cluster)
    hbrep("remove_peer_exclude_namespaces", peer_id, "ns8,ns9", cluster=cluster)
    hbrep("append_peer_exclude_tableCFs", peer_id, "t5", cluster=cluster)
    hbrep("remove_peer_exclude_tableCFs", peer_id, "t5", cluster=cluster)
    hbrep("set_peer_bandwidth", peer_id, "8192", cluster=cluster)
    hbrep("set_peer_serial", peer_id, "true", cluster=cluster)
    hbrep("update_peer_config", peer_id, "--config", "x.y=1", cluster=cluster)
    ours, _ = _hbrep_config(cluster, peer_id)
    try:
        hbase = _peers(real_hbase, peer_id)[peer_id]
        assert _hbase_config(hbase) == ours
        assert hbrep_json("list_peer_configs", cluster=cluster)[peer_id]["bandwidth"] == 8192
        assert hbase["config"]["replicate_all"] is True and hbase["config"]["exclude_table_cfs"] == {
            "t3": ["c"], "ns2:t4": []
        }  # fmt: skip
        assert hbase["config"]["exclude_namespaces"] == ["ns7"] and hbase["config"]["bandwidth"] == 8192
        assert hbase["config"]["serial"] is True and hbase["config"]["configuration"] == {"x.y": "1"}
    finally:
        real_hbase.admin("remove-peer", peer_id)


def test_a_peer_hbrep_enables_ships_every_row_from_hbase_at_once(hbrep_sink, real_hbase):
    """A peer `hbrep add_peer` adds DISABLED, naming the hbrep cluster's HBase-RPC key: rows written while
    it is disabled stay on HBase; `hbrep enable_peer` is the master's EnablePeerProcedure, so HBase's
    master reports it enabled at once and its region servers ship every cell; `hbrep disable_peer` stops
    the shipping at once (rows written after it stay on HBase until the peer is enabled again). hbrep's
    WAL keys keep HBase's cluster id."""
    cluster = real_hbase.layout().cluster_key
    tag = uuid.uuid4().hex[:6]
    peer_id, table = f"a{tag}", f"enabled_{tag}"
    peer_key = hbase_cluster_key(hbrep_sink.key, hbrep_sink.paths)
    create_on_both(hbrep_sink, real_hbase, table)
    hbrep("add_peer", peer_id, peer_key, "--state", "DISABLED", "--table-cfs", table, cluster=cluster)
    try:
        hbase = _peers(real_hbase, peer_id)[peer_id]
        assert hbase["is_enabled"] is False and hbase["config"]["cluster_key"] == peer_key
        assert hbase["config"]["table_cfs"] == {table: []}
        expected = write_through_thrift(real_hbase, table, 200)
        assert hbase_table_cells(real_hbase, table) == expected
        time.sleep(DISABLED_WINDOW_S)
        assert hbrep_table_cells(hbrep_sink, table) == set(), f"{table}: shipped while the peer was disabled"
        hbrep("enable_peer", peer_id, cluster=cluster)
        assert _peers(real_hbase, peer_id)[peer_id]["is_enabled"] is True  # the master knows at once
        assert_every_cell_arrives(hbrep_sink, table, expected)
        # and shipping stops at once: hbrep disable_peer is the master's DisablePeerProcedure
        hbrep("disable_peer", peer_id, cluster=cluster)
        assert _peers(real_hbase, peer_id)[peer_id]["is_enabled"] is False
        late = {(b"late%03d" % i, b"a", b"q", 50, b"late%d" % i) for i in range(50)}
        connection = real_hbase.happybase_connection()
        try:
            with connection.table(table).batch(timestamp=50) as batch:
                for row, _family, _qualifier, _ts, value in sorted(late):
                    batch.put(row, {b"a:q": value})
        finally:
            connection.close()
        time.sleep(DISABLED_WINDOW_S)
        assert not late & hbrep_table_cells(hbrep_sink, table), f"{table}: shipped after disable_peer"
        hbrep("enable_peer", peer_id, cluster=cluster)
        assert_every_cell_arrives(hbrep_sink, table, expected | late)
        expected = expected | late
    finally:
        hbrep("remove_peer", peer_id, cluster=cluster)
    assert peer_id not in _peers(real_hbase, peer_id)
    assert_hbrep_wal_keeps_hbase_cluster_id(hbrep_sink, real_hbase, table, expected)


def _unmodelled(data: bytes) -> tuple[list, bytes]:
    """(the peer data map, the bytes of the fields hbrep's proto does not know, remoteWALDir among them)."""
    from replication.proto import Replication_pb2
    from replication.zk import codec

    data = codec.strip_metadata(data) or b""  # HBase's znodes start with ZooKeeper metadata before PBUF
    peer = Replication_pb2.ReplicationPeer()
    peer.ParseFromString(data[len(codec.PB_MAGIC) :])
    known = Replication_pb2.ReplicationPeer()
    known.CopyFrom(peer)
    known.DiscardUnknownFields()
    return [(p.first, p.second) for p in peer.data], peer.SerializeToString()[len(known.SerializeToString()) :]


def test_a_peer_hbrep_rewrites_keeps_hbases_peer_data_and_later_fields(real_hbase):
    """Issue 44: what hbrep does not model survives its rewrites byte for byte. HBase's Admin API adds a peer
    with a peer data map (``ReplicationPeerConfig.getPeerData()``); ``remoteWALDir`` (field 12, HBase 3's
    synchronous replication, which HBase 2.6 does not have) and a later field are appended to its znode as a
    newer HBase would write them; hbrep's shell commands rewrite its bandwidth and configuration, which keeps
    both fields' bytes; after a restart HBase's own parser (getReplicationPeerConfig) reads the rewritten
    peer: the data map unchanged, the edits applied."""
    cluster = real_hbase.layout().cluster_key
    key = ClusterKey.parse(cluster)
    peer_id = f"w{uuid.uuid4().hex[:6]}"
    elsewhere = f"127.0.0.1:{real_hbase.layout().zk_port}:/hbase-elsewhere"
    peer_data = {"hbrep.test.k1": "v1", "k2": ""}
    real_hbase.admin("add-peer", json.dumps({
        "id": peer_id, "cluster_key": elsewhere, "enabled": False, "replicate_all": False,
        "table_cfs": {f"t_{peer_id}": []}, "peer_data": peer_data,
    }))  # fmt: skip
    try:
        path = ZNodePaths(parent=key.znode_parent).peer(peer_id)
        remote_wal_dir = b"hdfs://nn:8020/remote-wals"
        later = bytes([0x98, 0x06, 0x2A])  # field 99, varint 42
        with connected(key) as zk:
            written_by_hbase, _ = zk.get(path)
            assert _unmodelled(written_by_hbase)[0] == [(k.encode(), v.encode()) for k, v in peer_data.items()]
            newer = written_by_hbase + bytes([0x62, len(remote_wal_dir)]) + remote_wal_dir + later
            zk.set(path, newer)
        # hbrep's own rewrite of a peer znode (what it does on its own clusters; on a live HBase its commands go
        # through the master, issue 49): the bandwidth, then the configuration, as set_peer_bandwidth and
        # update_peer_config edit them; the master reads the znode again when it restarts
        with connected(key) as zk:
            storage = ReplicationPeerStorage(zk, ZNodePaths(parent=key.znode_parent))
            edit_peer_config(storage, peer_id, lambda c: replace(c, bandwidth=2048))
            edit_peer_config(storage, peer_id, lambda c: replace(c, configuration={**c.configuration, "x.y": "1"}))
            rewritten, _ = zk.get(path)
        assert rewritten != newer and _unmodelled(rewritten) == _unmodelled(newer)
        assert _unmodelled(rewritten)[1] == bytes([0x62, len(remote_wal_dir)]) + remote_wal_dir + later
        real_hbase.restart()
        hbase = _peers(real_hbase, peer_id)[peer_id]["config"]
        assert hbase["peer_data"] == peer_data
        assert hbase["bandwidth"] == 2048 and hbase["configuration"] == {"x.y": "1"}
        assert hbase["table_cfs"] == {f"t_{peer_id}": []} and hbase["replicate_all"] is False
    finally:
        real_hbase.admin("remove-peer", peer_id)
