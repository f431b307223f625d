"""Bad peer ids, cluster keys, table-cfs and server names: one exact line each, no znode written."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from tests.badinput.helpers import error_line, hbrep

ID_RULE = "it must be non-empty, without '-', '/' or blanks"
KEY_FORM = "expected quorum:port:/parent, e.g. zk1,zk2:2181:/hbase"
PARENT_RULE = "must start with '/' and not end with '/'"


@pytest.fixture
def admin(zk_server):
    client = KazooClient(hosts=zk_server.hosts)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


def replication_tree(admin: KazooClient, cluster_key: str) -> dict[str, bytes]:
    """Every znode under the cluster's replication node, with its data ({} when there is none)."""
    paths = ZNodePaths(parent=ClusterKey.parse(cluster_key).znode_parent)
    found: dict[str, bytes] = {}

    def walk(path: str) -> None:
        if admin.exists(path) is None:
            return
        found[path] = admin.get(path)[0]
        for child in admin.get_children(path):
            walk(f"{path}/{child}")

    walk(paths.replication)
    return found


@pytest.mark.parametrize("peer_id", ["a-b", "", "a/b", "a b", "1-2-3"])
def test_bad_peer_ids(cluster_key, admin, peer_id):
    result = hbrep("--cluster", cluster_key, "add_peer", peer_id, "zk9:2181:/hbase-b")
    assert error_line(result) == f"hbrep: error: bad peer id {peer_id!r}: {ID_RULE}"
    assert replication_tree(admin, cluster_key) == {}


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("zk9:/hbase-b", KEY_FORM),
        ("", KEY_FORM),
        ("zk9:2181:hbase", f"znode parent 'hbase' {PARENT_RULE}"),
        ("zk9:2181:/hbase/", f"znode parent '/hbase/' {PARENT_RULE}"),
        ("zk9:99999:/hbase", "client port '99999' is not a port number"),
        ("zk9:21x1:/hbase", "client port '21x1' is not a port number"),
        ("zk 9:2181:/hbase", "bad quorum host 'zk 9'"),
        ("zk9,:2181:/hbase", "bad quorum host ''"),
        ("zk9:0,zk8:2181:/hbase", "bad port in quorum entry 'zk9:0'"),
    ],
)
def test_bad_cluster_keys_of_a_peer(cluster_key, admin, key, why):
    result = hbrep("--cluster", cluster_key, "add_peer", "1", key)
    assert error_line(result) == f"hbrep: error: bad cluster key {key!r}: {why}"
    assert replication_tree(admin, cluster_key) == {}


def test_bad_cluster_key_given_to_hbrep_itself():
    for args in (("--cluster", "nonsense", "list_peers"), ("--cluster", "h:2181:/x/", "queues")):
        result = hbrep(*args)
        key = args[1]
        why = KEY_FORM if key == "nonsense" else f"znode parent '/x/' {PARENT_RULE}"
        assert error_line(result) == f"hbrep: error: bad cluster key {key!r}: {why}"
    env = {"HBREP_CLUSTER": "zk1:2181"}
    expected = f"hbrep: error: bad cluster key 'zk1:2181': {KEY_FORM}"
    assert error_line(hbrep("status", "replication", env=env)) == expected


def test_bad_table_cfs_and_namespaces(cluster_key, admin):
    c = ("--cluster", cluster_key, "add_peer", "1", "zk9:2181:/hbase-b")
    cases = {
        "bad:t:x:y": "expected [ns:]table[:cf1,cf2]",
        "t*:f": "illegal table name 't*': qualifier may only contain [A-Za-z0-9_.-]",
        "t1:.f": "illegal column family '.f' of table t1: starts with '.'",
        "ns:t:f;x y": "illegal table name 'x y': qualifier may only contain [A-Za-z0-9_.-]",
    }
    for spec, why in cases.items():
        bad_part = spec.split(";")[-1]
        assert error_line(hbrep(*c, "--table-cfs", spec)) == f"hbrep: error: bad table-cfs entry {bad_part!r}: {why}"
    line = error_line(hbrep(*c, "--namespaces", "ns1,n s"))
    assert line == "hbrep: error: bad namespace 'n s': it may only contain [A-Za-z0-9_]"
    assert replication_tree(admin, cluster_key) == {}


def test_peer_commands_on_missing_or_existing_peers(cluster_key, admin):
    c = ("--cluster", cluster_key)
    assert hbrep(*c, "add_peer", "1", "zk9:2181:/hbase-b", "--state", "DISABLED").returncode == 0
    before = replication_tree(admin, cluster_key)
    assert error_line(hbrep(*c, "add_peer", "1", "zk8:2181:/other")) == "hbrep: error: peer 1 already exists"
    for command in ("enable_peer", "disable_peer", "remove_peer"):
        assert error_line(hbrep(*c, command, "7")) == "hbrep: error: peer 7 does not exist"
    assert replication_tree(admin, cluster_key) == before  # the existing peer is untouched
    rows = json.loads(hbrep(*c, "list_peers", "--json").stdout)
    assert [(r["PEER_ID"], r["CLUSTER_KEY"], r["STATE"]) for r in rows] == [("1", "zk9:2181:/hbase-b", "DISABLED")]


def test_bad_server_names_for_a_claim(cluster_key, admin):
    c = ("--cluster", cluster_key, "failover", "claim")
    assert error_line(hbrep(*c, "nonsense", "--by", "h,1,2")) == (
        "hbrep: error: bad server name 'nonsense': expected host,port,startcode"
    )
    assert error_line(hbrep(*c, "h,1,2", "--by", "h,x,2")) == (
        "hbrep: error: bad server name 'h,x,2': port and startcode must be numbers"
    )
    assert replication_tree(admin, cluster_key) == {}
