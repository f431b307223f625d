"""The HBase shell's peer-configuration and table-replication commands on a real ZooKeeper and real
embedded clusters: each change read back as stored (HBase's protobuf), each refusal one line."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
from support import create_table

from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

pytestmark = pytest.mark.slow


def hbrep(key, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", "--cluster", str(key), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def ok(key, *args: str) -> str:
    done = hbrep(key, *args)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def config(key, peer: str) -> dict:
    return json.loads(ok(key, "get_peer_config", peer, "--json"))


def one_line_error(key, *args: str) -> str:
    done = hbrep(key, *args)
    assert done.returncode != 0, args
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_table_cfs_namespaces_and_the_rules(pair):
    key, peer = pair.source_key, f"p{uuid.uuid4().hex[:5]}"
    ok(key, "add_peer", peer, str(pair.peer_key), "--table-cfs", "t1:a", "--state", "DISABLED")
    ok(key, "append_peer_tableCFs", peer, "t1:b;ns1:t2:")
    assert config(key, peer)["table_cfs"] == {"t1": ["a", "b"], "ns1:t2": []}
    assert ok(key, "show_peer_tableCFs", peer).strip() == "ns1.t2;default.t1:a,b"  # sorted as TableNames
    ok(key, "remove_peer_tableCFs", peer, "t1:a")
    assert config(key, peer)["table_cfs"] == {"t1": ["b"], "ns1:t2": []}
    assert one_line_error(key, "remove_peer_tableCFs", peer, "t9") == (
        f"hbrep: error: No table: t9 in table-cfs config of peer: {peer}"
    )
    assert one_line_error(key, "set_peer_namespaces", peer, "ns1") == (
        "hbrep: error: Table-cfs ns1:t2 is conflict with namespaces ns1 in peer config (lists)"
    )
    ok(key, "set_peer_namespaces", peer, "ns5,ns6")
    ok(key, "append_peer_namespaces", peer, "ns7")
    ok(key, "remove_peer_namespaces", peer, "ns5")
    assert sorted(config(key, peer)["namespaces"]) == ["ns6", "ns7"]
    assert one_line_error(key, "set_peer_replicate_all", peer, "true") == (
        "hbrep: error: Need clean namespaces or table-cfs config firstly when you want replicate all cluster"
    )
    assert one_line_error(key, "set_peer_exclude_namespaces", peer, "ns9").startswith(
        "hbrep: error: Need clean exclude-namespaces or exclude-table-cfs config firstly"
    )
    ok(key, "set_peer_tableCFs", peer, "")
    ok(key, "set_peer_namespaces", peer, "")
    ok(key, "set_peer_replicate_all", peer, "true")
    ok(key, "set_peer_exclude_tableCFs", peer, "t3:c")
    ok(key, "set_peer_exclude_namespaces", peer, "ns9")
    stored = config(key, peer)
    assert stored["replicate_all"] is True and stored["exclude_table_cfs"] == {"t3": ["c"]}
    assert stored["exclude_namespaces"] == ["ns9"] and stored["table_cfs"] is None
    rows = {r["PEER_ID"]: r for r in json.loads(ok(key, "list_peers", "--json"))}
    assert rows[peer]["REPLICATE_ALL"] == "true" and rows[peer]["TABLE_CFS"] == "default.t3:c"
    ok(key, "remove_peer", peer)


def test_bandwidth_serial_config_and_bad_values(pair):
    key, peer = pair.source_key, f"p{uuid.uuid4().hex[:5]}"
    ok(key, "add_peer", peer, str(pair.peer_key), "--state", "DISABLED")
    ok(key, "set_peer_bandwidth", peer, "2048")
    ok(key, "set_peer_serial", peer, "true")
    ok(key, "update_peer_config", peer, "--config", "hbrep.peer.protocol=hbrep", "--config", "x.y=1")
    ok(key, "update_peer_config", peer, "--config", "x.y=2")
    stored = config(key, peer)
    assert stored["bandwidth"] == 2048 and stored["serial"] is True
    assert stored["configuration"] == {"hbrep.peer.protocol": "hbrep", "x.y": "2"}
    text = ok(key, "get_peer_config", peer)
    assert text.splitlines()[0].startswith(f"clusterKey={pair.peer_key},") and "bandwidth=2048,serial=true" in text
    assert one_line_error(key, "set_peer_bandwidth", peer, "lots").startswith("hbrep: error: bandwidth must be")
    assert one_line_error(key, "set_peer_serial", peer, "maybe") == "hbrep: error: expected true or false, not 'maybe'"
    assert one_line_error(key, "set_peer_bandwidth", "nope", "1") == "hbrep: error: peer nope does not exist"
    assert config(key, peer)["bandwidth"] == 2048  # nothing half-written by the refusals
    ok(key, "remove_peer", peer)


def test_enable_table_replication_creates_the_table_on_the_peer(pair):
    key, peer = pair.source_key, f"p{uuid.uuid4().hex[:5]}"
    table = f"t_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, table, ("a", 0), ("b", 0))
    ok(key, "add_peer", peer, str(pair.peer_key), "--state", "DISABLED")
    try:
        assert table not in ok(key, "list_replicated_tables")
        out = ok(key, "enable_table_replication", table)
        assert f"table {table} created on peer {peer}" in out
        peer_desc = TableRegistry(None, pair.peer.root).get(table)
        assert sorted(peer_desc.families) == ["a", "b"]
        listed = json.loads(ok(key, "list_replicated_tables", f"{table}.*", "--json"))
        assert listed == [{"table": table, "family": f, "replication_type": "GLOBAL"} for f in ("a", "b")]
        ok(key, "disable_table_replication", table)
        assert json.loads(ok(key, "list_replicated_tables", f"{table}.*", "--json")) == []
        # a peer table with other families: refused, and nothing changed on the source
        other = f"t_{uuid.uuid4().hex[:6]}"
        create_table(pair.source, other, ("a", 0))
        TableRegistry(None, pair.peer.root).create(TableDescriptor.of(other, ColumnFamilyDescriptor("z")))
        line = one_line_error(key, "enable_table_replication", other)
        assert line.startswith(f"hbrep: error: Table {other} exists in peer cluster {peer}, but the table descriptors")
        assert json.loads(ok(key, "list_replicated_tables", f"{other}.*", "--json")) == []
        assert one_line_error(key, "enable_table_replication", "no_such").startswith("hbrep: error:")
    finally:
        ok(key, "remove_peer", peer)
