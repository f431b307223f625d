"""WAL files written, tailed from a position and archived on a real HDFS, through WebHDFS, one of them
while a reader streams it (the open stream reads on to the end)."""

from __future__ import annotations

from conftest import HttpLog

from replication.fs import get_filesystem
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.names import find_wal, old_wal_dir, wal_dir, wal_file_name
from replication.wal.reader import CHUNK, open_wal
from replication.wal.writer import ProtobufLogWriter


def _entry(seq: int) -> Entry:
    key = WALKey(b"region-1", b"t1", seq, 1_700_000_000_000 + seq, scopes={b"f": 1})
    return Entry(key, [Cell(b"row-%d" % seq, b"f", b"q", 1000 + seq, int(CellType.PUT), b"v" * 50)])


def test_wal_write_tail_from_position_and_archive(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(f"{home}/hbase", user="hbase"))
    server = "rs1.example.com,16020,1700000000000"
    name = wal_file_name(server, 1_700_000_123_456)
    path = fs.join(wal_dir(root, server), name)

    writer = ProtobufLogWriter(path, fs=fs)
    ends = [writer.append(_entry(seq)) for seq in range(1, 4)]
    writer.sync()
    with open_wal(path, fs=fs) as reader:  # an open WAL: no trailer yet
        assert [r.entry.key.log_sequence_number for r in reader] == [1, 2, 3]
        assert reader.position == ends[-1] and not reader.trailer_present
    with open_wal(path, fs=fs, start=ends[-1]) as reader:  # at the end of what was written: nothing new
        assert list(reader) == [] and reader.position == ends[-1]

    writer.append(_entry(4))
    writer.close()
    log = HttpLog.attach(fs)
    with open_wal(path, fs=fs, start=ends[1]) as reader:  # resume at a recorded position
        assert [r.entry.key.log_sequence_number for r in reader] == [3, 4]
        assert reader.trailer_present and reader.truncated_tail_bytes == 0
    body_reads = [a for a in log.of(path, "OPEN") if a.port == hdfs_cluster.ports["dn_http"]]
    assert any(int(a.query.get("offset", 0)) == ends[1] for a in body_reads)

    archived = fs.join(old_wal_dir(root), name)
    fs.rename(path, archived)  # archive = rename
    assert find_wal(fs, root, name, servers=[server]) == archived
    renames = [r["dst"] for r in hdfs_cluster.audit_entries(path) if r["cmd"] == "rename"]
    assert renames == [archived]  # one NameNode RENAME, no copy


def test_a_wal_archived_while_a_reader_streams_it_is_read_to_its_end(hdfs_cluster, hdfs_home):
    home = hdfs_home("hbase")
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(f"{home}/hbase", user="hbase"))
    server = "rs1.example.com,16020,1700000000000"
    name = wal_file_name(server, 1_700_000_200_000)
    path = fs.join(wal_dir(root, server), name)
    with ProtobufLogWriter(path, fs=fs) as writer:
        for seq in range(1, 12_001):  # ~12 MB: past the reader's first 8 MB chunk
            key = WALKey(b"region-1", b"t1", seq, 1_700_000_000_000 + seq, scopes={b"f": 1})
            writer.append(Entry(key, [Cell(b"row-%d" % seq, b"f", b"q", seq, int(CellType.PUT), b"v" * 1000)]))
    length = fs.status(path).length
    assert length > CHUNK
    archived = fs.join(old_wal_dir(root), name)
    seqs = []
    with open_wal(path, fs=fs) as reader:
        for read in reader:
            seqs.append(read.entry.key.log_sequence_number)
            if len(seqs) == 1:  # the region server archives it while the reader streams it
                fs.rename(path, archived)
                assert not fs.exists(path) and fs.exists(archived)
        assert reader.trailer_present and reader.truncated_tail_bytes == 0  # up to the trailer
    assert seqs == list(range(1, 12_001))  # the last ~4 MB were streamed after the rename
