"""The real-HBase component's checks that need no HBase JVM: its configuration and its refusals."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from replication.cli import main
from replication.devstack.hbase import HBaseError, HBaseLayout, RealHBase, site_values
from replication.net import free_port


def test_site_is_pseudo_distributed_on_loopback_with_protobuf_wals(tmp_path: Path):
    layout = HBaseLayout("127.0.0.1", 2181, "/hbase-real", 1, [2, 3], 4)
    site = site_values(tmp_path, layout)
    assert site["hbase.cluster.distributed"] == "true" and site["zookeeper.znode.parent"] == "/hbase-real"
    assert site["hbase.zookeeper.quorum"] == "127.0.0.1" and site["hbase.zookeeper.property.clientPort"] == "2181"
    assert site["hbase.rootdir"] == (tmp_path / "hbase").as_uri()
    assert site["hbase.wal.provider"] == "filesystem" and site["hbase.unsafe.stream.capability.enforce"] == "false"
    assert site["hbase.master.info.port"] == site["hbase.regionserver.info.port"] == "-1"
    assert site["hbase.master.ipc.address"] == site["hbase.regionserver.ipc.address"] == "127.0.0.1"
    assert site["hbase.master.port"] == "1" and site["hbase.regionserver.thrift.port"] == "4"
    assert site["hbase.replication"] == "true"


def test_a_root_dir_on_hdfs_goes_into_the_site_and_a_bad_one_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    layout = HBaseLayout("127.0.0.1", 2181, "/hbase-real", 1, [2], 4, rootdir="hdfs://127.0.0.1:9000/hbase")
    assert site_values(tmp_path, layout)["hbase.rootdir"] == "hdfs://127.0.0.1:9000/hbase"
    args = ["--cluster", "127.0.0.1:1:/x", "hbase", "start", "--root", str(tmp_path / "h"), "--rootdir", "hbase"]
    assert main(args) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "hbrep: error: --rootdir must be an hdfs:// or file:/ URI, not 'hbase'"
    ]
    assert not (tmp_path / "h").exists()


def test_start_without_zookeeper_is_one_clear_error_and_leaves_nothing(tmp_path: Path):
    port = free_port()
    with pytest.raises(HBaseError, match=rf"ZooKeeper does not answer at 127.0.0.1:{port}"):
        RealHBase(tmp_path / "h").start(f"127.0.0.1:{port}:/hbase-real")
    assert not (tmp_path / "h").exists()


def test_start_refuses_a_parent_another_hbase_owns(tmp_path: Path, zk_server):
    from kazoo.client import KazooClient

    parent = f"/hbase-taken-{uuid.uuid4().hex[:8]}"
    zk = KazooClient(hosts=zk_server.hosts)
    zk.start(timeout=15)
    try:
        zk.create(f"{parent}/hbaseid", b"PBUF", makepath=True)
        with pytest.raises(HBaseError, match=f"znode parent {parent} already holds another HBase cluster"):
            RealHBase(tmp_path / "h").start(f"127.0.0.1:{zk_server.port}:{parent}")
    finally:
        zk.delete(parent, recursive=True)
        zk.stop()
        zk.close()
    assert not (tmp_path / "h" / "run").exists()  # no JVM was started


def test_cli_on_a_folder_without_hbase(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["hbase", "status", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"hbrep: error: no real HBase in {tmp_path} (no hbase.json; run `hbrep hbase start` first)"]
    assert main(["hbase", "stop", "--root", str(tmp_path)]) == 0
    assert "HBase was not running" in capsys.readouterr().out
    assert main(["--cluster", "127.0.0.1:1:/x", "hbase", "start", "--root", str(tmp_path), "--regionservers", "0"]) == 2
