"""The verify job through spark-submit and the ``hbrep verify`` / ``hbrep quality`` commands end to end:
cluster info and the peer are real znodes, table files are real Parquet, Spark and GX are real."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from replication.checks.verify import resolve_target
from replication.cli import main
from replication.cluster.info import ClusterInfo, write_cluster_info
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor as CF
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.table_files import write_cells
from replication.wal.model import Cell
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import PeerNotFound, ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow
FS = LocalFileSystem()
PUT = 4
TABLE = "t1"


@pytest.fixture
def two_clusters(zk_server, cluster_key, tmp_path):
    """Source and peer clusters recorded in ZooKeeper (ClusterInfo), peer "1" on the source, a table on both."""
    source_key = ClusterKey.parse(cluster_key)
    peer_key = ClusterKey.parse(cluster_key + "-peer")
    roots = {}
    zk = KazooClient(hosts=zk_server.hosts)
    zk.start(timeout=15)
    conf = Config.load(env={})
    try:
        for name, key in (("source", source_key), ("peer", peer_key)):
            root = str(tmp_path / name)
            roots[name] = root
            paths = ZNodePaths(conf, parent=key.znode_parent)
            write_cluster_info(zk, paths, ClusterInfo(name, root, key.znode_parent))
            TableRegistry(FS, root).create(TableDescriptor.of(TABLE, CF("f", 1)))
        ReplicationPeerStorage(zk, ZNodePaths(conf, parent=source_key.znode_parent)).add_peer(
            "1", ReplicationPeerConfig(cluster_key=str(peer_key))
        )
        target = resolve_target(zk, source_key, conf, "1")
        assert (target.source_root, target.peer_root, target.peer_id) == (roots["source"], roots["peer"], "1")
        by_key = resolve_target(zk, source_key, conf, str(peer_key))
        assert by_key.peer_root == roots["peer"] and by_key.peer_id is None
        with pytest.raises(PeerNotFound, match="peer 9 does not exist"):
            resolve_target(zk, source_key, conf, "9")
        yield source_key, peer_key, roots
    finally:
        zk.stop()
        zk.close()


def flush(root: str, cells: list[Cell], seq0: int) -> None:
    write_cells(FS, root, TABLE, "r1", [(c, seq0 + i) for i, c in enumerate(cells)], seq0 + len(cells))


def table_cells(n: int) -> list[Cell]:
    return [Cell(f"row{i:03d}".encode(), b"f", b"q", 100 + i, PUT, b"v%d" % i) for i in range(n)]


def test_verify_command_through_spark_submit(two_clusters, capsys, tmp_path, monkeypatch):
    source_key, _, roots = two_clusters
    monkeypatch.setenv("HBREP__hbrep__state__dir", str(tmp_path / "state"))
    flush(roots["source"], table_cells(6), 1)
    flush(roots["peer"], table_cells(5), 1)  # row005 not replicated
    flush(roots["peer"], [Cell(b"row002", b"f", b"q", 102, PUT, b"changed")], 10)
    code = main(["--cluster", str(source_key), "verify", "1", TABLE, "--verbose", "--fail-on-bad"])
    out = capsys.readouterr().out.splitlines()
    assert code == 2
    assert out[:5] == [
        "GOODROWS=4",
        "BADROWS=2",
        "ONLY_IN_SOURCE_TABLE_ROWS=1",
        "ONLY_IN_PEER_TABLE_ROWS=0",
        "CONTENT_DIFFERENT_ROWS=1",
    ]
    assert out[5:] == ["CONTENT_DIFFERENT_ROWS: row002", "ONLY_IN_SOURCE_TABLE_ROWS: row005"]


def test_verify_and_quality_commands_in_process(two_clusters, capsys, tmp_path, monkeypatch, spark):
    source_key, peer_key, roots = two_clusters
    monkeypatch.setenv("HBREP__hbrep__state__dir", str(tmp_path / "state"))
    flush(roots["source"], table_cells(7), 1)
    flush(roots["peer"], table_cells(7), 1)
    code = main(["--cluster", str(source_key), "verify", str(peer_key), TABLE, "--in-process", "--json",
                 "--starttime", "102", "--fail-on-bad"])  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["counters"]["GOODROWS"] == 5 and result["counters"]["BADROWS"] == 0
    assert result["peer"] == str(peer_key)
    # --stoptime, the reference guide's spelling of --endtime: rows 102 and 103 only
    code = main(["--cluster", str(source_key), "verify", "1", TABLE, "--in-process", "--json",
                 "--starttime", "102", "--stoptime", "104"])  # fmt: skip
    assert code == 0
    assert json.loads(capsys.readouterr().out)["counters"]["GOODROWS"] == 2
    code = main(["--cluster", str(source_key), "verify", "1", TABLE, "--stoptime", "104", "--endtime", "105"])
    assert code == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "hbrep: error: --stoptime 104 and --endtime 105 differ (they are one option)"
    ]

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"tables": {TABLE: {"columns": {"f:q": {"regex": "^v[0-9]+$", "not_null": True}}}}}))
    code = main(["--cluster", str(source_key), "quality", TABLE, "--peer", "1", "--rules", str(rules)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("suite hbrep_1_t1: PASSED (source rows 7, peer rows 7)")
    docs = out.strip().splitlines()[-1].removeprefix("Data Docs: ")
    assert docs.startswith(str(tmp_path / "state" / "quality")) and docs.endswith("index.html")

    flush(roots["source"], [Cell(b"row100", b"f", b"q", 5, PUT, b"v")], 50)
    code = main(["--cluster", str(source_key), "quality", TABLE, "--peer", "1", "--json", "--fail-on-bad"])
    report = json.loads(capsys.readouterr().out)
    assert code == 2 and not report["success"]
    assert (report["source_rows"], report["peer_rows"]) == (8, 7)
