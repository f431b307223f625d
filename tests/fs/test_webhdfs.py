"""What is particular to the WebHDFS backend: URIs, redirects, offset reads, auth and errors.

These run against tests/webhdfs_server.py, a WebHDFS *protocol* test server (not HDFS).
"""

from __future__ import annotations

import io
import uuid

import pytest

from replication.fs import FileSystemError, get_filesystem
from replication.fs_webhdfs import WebHdfsFileSystem, webhdfs_urls
from replication.zk.server import free_port


@pytest.fixture
def hdfs_root(webhdfs_server) -> str:
    return f"/r-{uuid.uuid4().hex[:10]}"


def _records(server, path: str, op: str) -> list:
    return [r for r in server.requests if r.path == path and r.op == op]


def test_root_uris_map_to_webhdfs_urls():
    assert webhdfs_urls("webhdfs://nn:9870/hbase") == "http://nn:9870"
    assert webhdfs_urls("hdfs://nn/hbase") == "http://nn:9870"  # hdfs:// = WebHDFS on the HTTP port
    assert webhdfs_urls("swebhdfs://nn/hbase") == "https://nn:9871"
    assert webhdfs_urls("webhdfs://nn1:9870,nn2:50070/hbase") == "http://nn1:9870;http://nn2:50070"
    with pytest.raises(FileSystemError, match="names no NameNode host"):
        webhdfs_urls("webhdfs:///hbase")
    with pytest.raises(FileSystemError, match="not a WebHDFS URI"):
        webhdfs_urls("s3://bucket/hbase")


def test_hdfs_scheme_root_works_against_the_namenode(webhdfs_server, hdfs_root):
    fs, root = get_filesystem(f"hdfs://127.0.0.1:{webhdfs_server.namenode_port}{hdfs_root}?user=hbase")
    assert isinstance(fs, WebHdfsFileSystem) and root == hdfs_root
    fs.write_atomic(fs.join(root, "a"), b"abc")
    assert fs.read_range(fs.join(root, "a"), 1) == b"bc"
    users = {r.query.get("user.name") for r in webhdfs_server.requests if r.path.startswith(hdfs_root)}
    assert users == {"hbase"}


def test_user_comes_from_the_environment_when_the_uri_has_none(webhdfs_server, hdfs_root):
    fs = WebHdfsFileSystem.from_uri(webhdfs_server.uri(hdfs_root), env={"HBREP_WEBHDFS_USER": "replicator"})
    fs.mkdirs(hdfs_root)
    assert _records(webhdfs_server, hdfs_root, "MKDIRS")[-1].query["user.name"] == "replicator"


def test_offset_read_never_transfers_the_bytes_before_it(webhdfs_server, hdfs_root):
    fs, root = get_filesystem(webhdfs_server.uri(hdfs_root))
    path = fs.join(root, "wal.1")
    payload = b"x" * 700_000 + b"tail-bytes"
    fs.write_atomic(path, payload)
    with fs.open_read(path, 700_000) as stream:
        assert stream.read() == b"tail-bytes"
    opens = _records(webhdfs_server, path, "OPEN")
    namenode = [r for r in opens if r.role == "namenode"]
    datanode = [r for r in opens if r.role == "datanode"]
    assert [r.status for r in namenode] == [307]  # NameNode → DataNode redirect, like HDFS
    assert [(r.query["offset"], r.bytes_out) for r in datanode] == [("700000", 10)]
    assert fs.read_range(path, 100, 5) == b"xxxxx"
    assert _records(webhdfs_server, path, "OPEN")[-1].bytes_out == 5


def test_seek_outside_the_buffer_reopens_at_the_new_offset(webhdfs_server, hdfs_root):
    fs, root = get_filesystem(webhdfs_server.uri(hdfs_root))
    path = fs.join(root, "f")
    payload = bytes(range(256)) * (3 * 4096)  # 3 MiB: larger than the 1 MiB read buffer
    fs.write_atomic(path, payload)
    with fs.open_read(path, 10) as stream:
        assert stream.read(2) == payload[10:12]
        stream.seek(2_500_000)
        assert stream.read(3) == payload[2_500_000:2_500_003]
        assert stream.tell() == 2_500_003
        stream.seek(-2, io.SEEK_END)
        assert stream.read() == payload[-2:]
    offsets = [r.query["offset"] for r in _records(webhdfs_server, path, "OPEN") if r.role == "datanode"]
    assert offsets == ["10", "2500000", str(len(payload) - 2)]


def test_writes_go_to_the_datanode_one_append_per_sync(webhdfs_server, hdfs_root):
    fs, root = get_filesystem(webhdfs_server.uri(hdfs_root))
    path = fs.join(root, "WALs", "rs1,16020,1", "rs1%2C16020%2C1.1")
    stream = fs.create(path)
    stream.write(b"a")
    stream.write(b"b")
    fs.sync(stream)
    fs.sync(stream)  # nothing new: no request
    stream.write(b"c")
    stream.close()
    assert fs.read_range(path, 0) == b"abc"
    creates = _records(webhdfs_server, path, "CREATE")
    appends = _records(webhdfs_server, path, "APPEND")
    assert [(r.role, r.status) for r in creates] == [("namenode", 307), ("datanode", 201)]
    assert [(r.role, r.bytes_in) for r in appends] == [
        ("namenode", 0),
        ("datanode", 2),
        ("namenode", 0),
        ("datanode", 1),
    ]
    # the escaped WAL name survives the URL round trip
    assert [s.name for s in fs.list(fs.join(root, "WALs", "rs1,16020,1"))] == ["rs1%2C16020%2C1.1"]


def test_read_past_the_end_is_an_error_naming_the_file(webhdfs_server, hdfs_root):
    fs, root = get_filesystem(webhdfs_server.uri(hdfs_root))
    path = fs.join(root, "short")
    fs.write_atomic(path, b"1234")
    with pytest.raises(FileSystemError, match=f"{path}.*EOFException"):
        fs.read_range(path, 10)


def test_unreachable_namenode_is_one_line_naming_it():
    port = free_port()
    fs = WebHdfsFileSystem.from_uri(f"webhdfs://127.0.0.1:{port}/hbase", timeout=2)
    with pytest.raises(FileSystemError) as info:
        fs.exists("/hbase/x")
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "unreachable" in message and "\n" not in message


def test_kerberos_without_its_package_fails_with_one_clear_line():
    pytest.importorskip("hdfs")
    try:
        import requests_kerberos  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("requests-kerberos is installed here")
    with pytest.raises(FileSystemError) as info:
        WebHdfsFileSystem.from_uri("webhdfs://nn:9870/hbase?auth=kerberos")
    assert "requests-kerberos" in str(info.value) and "nn:9870" in str(info.value)
    with pytest.raises(FileSystemError, match="unknown WebHDFS auth 'ntlm'"):
        WebHdfsFileSystem.from_uri("webhdfs://nn:9870/hbase", env={"HBREP_WEBHDFS_AUTH": "ntlm"})


def test_server_answers_hdfs_json_shapes(webhdfs_server, hdfs_root):
    import requests

    fs, root = get_filesystem(webhdfs_server.uri(hdfs_root))
    fs.write_atomic(fs.join(root, "f"), b"12")
    base = f"{webhdfs_server.http_url}/webhdfs/v1{root}"
    listing = requests.get(base, params={"op": "LISTSTATUS"}, timeout=5).json()
    (entry,) = listing["FileStatuses"]["FileStatus"]
    assert entry["pathSuffix"] == "f" and entry["type"] == "FILE" and entry["length"] == 2
    missing = requests.get(base + "/nope", params={"op": "GETFILESTATUS"}, timeout=5)
    assert missing.status_code == 404
    assert missing.json()["RemoteException"]["exception"] == "FileNotFoundException"
    renamed = requests.put(base + "/nope", params={"op": "RENAME", "destination": root + "/g"}, timeout=5)
    assert renamed.json() == {"boolean": False}
