"""What is particular to the WebHDFS backend, against a real HDFS (Hadoop's NameNode and DataNode).

URIs, the NameNode → DataNode redirect, offset reads that never fetch the bytes before the offset
(the DataNode's Content-Length says how much it sent), one APPEND per sync (the NameNode's audit log
counts them), the user a request runs as (the owner HDFS records), auth and errors.
"""

from __future__ import annotations

import io

import pytest
from conftest import HttpLog

from replication.fs import FileSystemError, get_filesystem
from replication.fs.webhdfs import WebHdfsFileSystem, webhdfs_urls
from replication.net import free_port


def test_root_uris_map_to_webhdfs_urls():
    assert webhdfs_urls("webhdfs://nn:9870/hbase") == "http://nn:9870"
    assert webhdfs_urls("hdfs://nn/hbase") == "http://nn:9870"  # hdfs:// = WebHDFS on the HTTP port
    assert webhdfs_urls("swebhdfs://nn/hbase") == "https://nn:9871"
    assert webhdfs_urls("webhdfs://nn1:9870,nn2:50070/hbase") == "http://nn1:9870;http://nn2:50070"
    with pytest.raises(FileSystemError, match="names no NameNode host"):
        webhdfs_urls("webhdfs:///hbase")
    with pytest.raises(FileSystemError, match="not a WebHDFS URI"):
        webhdfs_urls("s3://bucket/hbase")


def test_hdfs_scheme_root_works_against_the_namenode(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(f"hdfs://127.0.0.1:{hdfs_cluster.ports['http']}{home}?user=hbase")
    assert isinstance(fs, WebHdfsFileSystem) and root == home
    fs.write_atomic(fs.join(root, "a"), b"abc")
    assert fs.read_range(fs.join(root, "a"), 1) == b"bc"
    assert fs.client.status(fs.join(root, "a"))["owner"] == "hbase"
    users = {r["ugi"].split()[0] for r in hdfs_cluster.audit_entries(fs.join(root, "a"))}
    assert users == {"hbase"}


def test_user_comes_from_the_environment_when_the_uri_has_none(hdfs_cluster, hdfs_home):
    home = hdfs_home("replicator")
    fs = WebHdfsFileSystem.from_uri(hdfs_cluster.webhdfs_root(home), env={"HBREP_WEBHDFS_USER": "replicator"})
    fs.mkdirs(f"{home}/d")
    assert fs.client.status(f"{home}/d")["owner"] == "replicator"


def test_offset_read_never_transfers_the_bytes_before_it(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "wal.1")
    payload = b"x" * 700_000 + b"tail-bytes"
    fs.write_atomic(path, payload)
    log = HttpLog.attach(fs)
    with fs.open_read(path, 700_000) as stream:
        assert stream.read() == b"tail-bytes"
    opens = log.of(path, "OPEN")
    namenode = [a for a in opens if a.port == hdfs_cluster.ports["http"]]
    datanode = [a for a in opens if a.port == hdfs_cluster.ports["dn_http"]]
    assert [a.status for a in namenode] == [307]  # the NameNode redirects to the DataNode
    assert [(a.query["offset"], a.status, a.content_length) for a in datanode] == [("700000", 200, 10)]
    assert fs.read_range(path, 100, 5) == b"xxxxx"
    assert log.of(path, "OPEN")[-1].content_length == 5


def test_seek_outside_the_buffer_reopens_at_the_new_offset(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "f")
    payload = bytes(range(256)) * (3 * 4096)  # 3 MiB: larger than the 1 MiB read buffer
    fs.write_atomic(path, payload)
    log = HttpLog.attach(fs)
    with fs.open_read(path, 10) as stream:
        assert stream.read(2) == payload[10:12]
        stream.seek(2_500_000)
        assert stream.read(3) == payload[2_500_000:2_500_003]
        assert stream.tell() == 2_500_003
        stream.seek(-2, io.SEEK_END)
        assert stream.read() == payload[-2:]
    offsets = [a.query["offset"] for a in log.of(path, "OPEN") if a.port == hdfs_cluster.ports["dn_http"]]
    assert offsets == ["10", "2500000", str(len(payload) - 2)]


def test_writes_go_to_the_datanode_one_append_per_sync(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "WALs", "rs1,16020,1", "rs1%2C16020%2C1.1")
    log = HttpLog.attach(fs)
    stream = fs.create(path)
    stream.write(b"a")
    stream.write(b"b")
    fs.sync(stream)
    assert fs.read_range(path, 0) == b"ab"  # durable and visible once sync returns
    fs.sync(stream)  # nothing new: no request
    stream.write(b"c")
    stream.close()
    assert fs.read_range(path, 0) == b"abc"
    commands = [r["cmd"] for r in hdfs_cluster.audit_entries(path) if r["cmd"] in ("create", "append")]
    assert commands == ["create", "append", "append"]
    appends = [a for a in log.of(path, "APPEND")]
    assert [(a.port == hdfs_cluster.ports["dn_http"], a.status) for a in appends] == [
        (False, 307), (True, 200), (False, 307), (True, 200),
    ]  # fmt: skip
    # the escaped WAL name survives the URL round trip
    assert [s.name for s in fs.list(fs.join(root, "WALs", "rs1,16020,1"))] == ["rs1%2C16020%2C1.1"]


def test_read_at_and_past_the_end(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "short")
    fs.write_atomic(path, b"1234")
    # HDFS refuses OPEN at offset == length ("out of the range [0, 4)"); the backend reads b"" there
    assert fs.read_range(path, 4) == b""
    with fs.open_read(path, 4) as stream:
        assert stream.read() == b""
    with pytest.raises(FileSystemError, match=f"{path}.*EOFException") as info:
        fs.read_range(path, 10)
    assert "\n" not in str(info.value)


def test_permission_denied_is_one_line_without_the_java_stack(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, _ = get_filesystem(hdfs_cluster.webhdfs_root(home, user="intruder"))
    with pytest.raises(FileSystemError) as info:
        fs.write_atomic(f"{home}/x", b"1")
    message = str(info.value)
    assert "AccessControlException: Permission denied: user=intruder, access=WRITE" in message
    assert "\n" not in message and " at org.apache" not in message
    assert not fs.list(home)


def test_unreachable_namenode_is_one_line_naming_it():
    port = free_port()
    fs = WebHdfsFileSystem.from_uri(f"webhdfs://127.0.0.1:{port}/hbase", timeout=2)
    with pytest.raises(FileSystemError) as info:
        fs.exists("/hbase/x")
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "unreachable" in message and "\n" not in message


def test_kerberos_roots_answer_negotiate_and_an_unknown_auth_is_one_line():
    from replication.fs.spnego import SpnegoAuth

    fs = WebHdfsFileSystem.from_uri("webhdfs://nn:9870/hbase?auth=kerberos&user=hbase")  # no request is sent here
    assert isinstance(fs.client._session.auth, SpnegoAuth)
    assert fs.client._session.params.get("user.name") is None  # Kerberos says who; user= asks for doas
    with pytest.raises(FileSystemError, match="unknown WebHDFS auth 'ntlm'"):
        WebHdfsFileSystem.from_uri("webhdfs://nn:9870/hbase", env={"HBREP_WEBHDFS_AUTH": "ntlm"})


def test_namenode_json_shapes_the_backend_relies_on(hdfs_cluster, hdfs_home):
    import requests

    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    fs.write_atomic(fs.join(root, "f"), b"12")
    base = f"{hdfs_cluster.http_url}/webhdfs/v1{root}"
    params = {"user.name": "hbase"}
    listing = requests.get(base, params={**params, "op": "LISTSTATUS"}, timeout=5).json()
    (entry,) = listing["FileStatuses"]["FileStatus"]
    assert entry["pathSuffix"] == "f" and entry["type"] == "FILE" and entry["length"] == 2
    missing = requests.get(base + "/nope", params={**params, "op": "GETFILESTATUS"}, timeout=5)
    assert missing.status_code == 404
    assert missing.json()["RemoteException"]["exception"] == "FileNotFoundException"
    renamed = requests.put(base + "/nope", params={**params, "op": "RENAME", "destination": root + "/g"}, timeout=5)
    assert renamed.json() == {"boolean": False}  # what _rename reads as "refused"


class _AppendFailsOnce:
    """The real client's ``write``, except that the first APPEND fails the way a DataNode's failed close
    does: after ``lands`` of its bytes were really appended to the real file (all, some or none)."""

    def __init__(self, fs: WebHdfsFileSystem, lands: int | None) -> None:
        self.real_write, self.lands, self.failed = fs.client.write, lands, False
        fs.client.write = self

    def __call__(self, path: str, data: bytes = b"", append: bool = False, **kw):
        from hdfs.util import HdfsError

        if not append or self.failed:
            return self.real_write(path, data=data, append=append, **kw)
        self.failed = True
        if self.lands:
            self.real_write(path, data=data[: self.lands], append=True)
        raise HdfsError("Unable to close file because the last block does not have enough number of replicas.")


@pytest.mark.parametrize("lands", [None, 4])
def test_a_failed_append_is_not_written_twice(hdfs_cluster, hdfs_home, lands):
    """Whether a failed APPEND's bytes landed (all: lands=4 of b"one-") or not (None), the next sync
    leaves every byte in the file once."""
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "wal")
    stream = fs.create(path)
    stream.write(b"head")
    fs.sync(stream)
    _AppendFailsOnce(fs, lands)
    stream.write(b"one-")
    with pytest.raises(FileSystemError, match="Unable to close file"):
        fs.sync(stream)
    stream.write(b"two")
    fs.sync(stream)
    assert fs.read_range(path, 0) == b"headone-two"
    stream.close()
    assert fs.read_range(path, 0) == b"headone-two"


def test_a_failed_append_that_left_part_of_its_bytes_is_an_error(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "wal")
    stream = fs.create(path)
    _AppendFailsOnce(fs, 2)
    stream.write(b"one-")
    with pytest.raises(FileSystemError, match="Unable to close file"):
        fs.sync(stream)
    with pytest.raises(FileSystemError, match=r"a failed APPEND of 4 bytes left 2 of them in the file"):
        fs.sync(stream)
    assert fs.read_range(path, 0) == b"on"  # nothing more was sent


def test_an_append_refused_before_any_byte_is_sent_again(hdfs_cluster, hdfs_home):
    """AlreadyBeingCreatedException (the lease of a dead APPEND's client) three times, then the real
    APPEND: the sync succeeds and the bytes are there once."""
    from hdfs.util import HdfsError

    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(home, user="hbase"))
    path = fs.join(root, "wal")
    stream = fs.create(path)
    real_write, refusals = fs.client.write, []

    def refuse_three_times(p: str, data: bytes = b"", append: bool = False, **kw):
        if append and len(refusals) < 3:
            refusals.append(p)
            raise HdfsError("Failed to APPEND_FILE: AlreadyBeingCreatedException: owned by DFSClient_NONMAPREDUCE_1")
        return real_write(p, data=data, append=append, **kw)

    fs.client.write = refuse_three_times
    stream.write(b"abc")
    fs.sync(stream)
    assert len(refusals) == 3 and fs.read_range(path, 0) == b"abc"
