"""WALs a real HBase wrote to a real HDFS (hbase.rootdir hdfs://), read by hbrep through WebHDFS.

Every WAL under WALs/ and oldWALs/ on HDFS: ``hbrep wal dump --json webhdfs://...`` gives the entries
and cells HBase's own WALStreamReader and WALPrettyPrinter read from ``hdfs://...``. The region
server's current WAL is still open for write: the NameNode's length of it counts only what an earlier sync
reported (usually the header), its entries are hflushed past it, and hbrep reads them up to the last whole
entry, as HBase's reader does, also when it starts past the NameNode's length (where a cycle resumes).
A file a real HDFS writer holds open with half an entry hflushed at its end reads up to the entry before.
"""

from __future__ import annotations

import json
import posixpath
import subprocess
import time
import uuid
from urllib.parse import urlparse

import pytest
from interop.helpers import (
    assert_same_as_hbase,
    assert_same_as_pretty_printer,
    hbase_read,
    hbrep_dump,
    mutate,
    pretty_print,
    wal_workload,
)

from replication.config import Config
from replication.devstack.hbase import ADMIN_TOOL_MAIN
from replication.fs import get_filesystem
from replication.source.filters import EntryFilter
from replication.source.manifest import QueueTask, WalTask
from replication.source.metrics import SourceMetrics
from replication.source.wal_reader import ReplicationSourceWALReader

pytestmark = pytest.mark.slow


def _wals_on_hdfs(fs, root: str) -> list[str]:
    """Every WAL file under WALs/<server>/ and oldWALs/ (meta WALs included), as HDFS paths."""
    paths = [s.path for server in fs.list(fs.join(root, "WALs")) for s in fs.list(server.path) if not s.is_dir]
    return sorted(paths + [s.path for s in fs.list(fs.join(root, "oldWALs")) if not s.is_dir])


def _ship_read(fs, root: str, path: str, *, writer_alive: bool) -> tuple[list, dict[str, int]]:
    """The batches a ship task's reader (ReplicationSourceWALReader) makes of the WAL at ``path`` as the
    one WAL of a queue (a live server's, so being written; or a dead one's), with its counters."""
    wal = WalTask(posixpath.basename(path), path, 0, 0)
    queue = QueueTask("held,1,1", "1", "1", not writer_alive, writer_alive, [], [wal])
    metrics = SourceMetrics()
    every_table = EntryFilter(lambda table, family: True, uuid.uuid4(), uuid.uuid4())
    batches = list(ReplicationSourceWALReader(fs, root, queue, every_table, Config.load(env={}), metrics).batches())
    return batches, dict(metrics.counters)


def test_wals_hbase_wrote_to_hdfs_read_the_same_in_hbrep_the_open_one_too(real_hbase_on_hdfs, hdfs_cluster):
    hbase = real_hbase_on_hdfs
    table = f"wal_{uuid.uuid4().hex[:8]}"
    hbase.admin("create-table", table, "3", "a:1", "b:0", "c:1")
    mutate(hbase, table, wal_workload("before"))
    assert len(hbase.admin("roll")) == 1  # a roll in the middle: rolled WALs get their trailer
    mutate(hbase, table, wal_workload("after"))

    rootdir = urlparse(hbase.rootdir_uri)
    assert rootdir.scheme == "hdfs"
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(rootdir.path))
    wals = _wals_on_hdfs(fs, root)
    for_hbase = {path: f"{hdfs_cluster.uri}{path}" for path in wals}  # HDFS RPC, HBase's own client
    for_hbrep = {path: f"{hdfs_cluster.webhdfs_url}{path}" for path in wals}  # WebHDFS
    reads = hbase_read(hbase, list(for_hbase.values()))

    finished, open_with_table, rows = 0, [], set()
    for path in wals:
        entries, summary = hbrep_dump(for_hbrep[path])
        assert_same_as_hbase(entries, summary, reads[for_hbase[path]], path)
        printed, complete = pretty_print(hbase, for_hbase[path])
        assert_same_as_pretty_printer(entries, printed, path)
        rows |= {c["row"] for e in entries if e["table"] == table for c in e["cells"]}
        if summary["trailer_present"]:
            finished += 1
            assert complete, path
            assert summary["file_length"] == fs.status(path).length  # a closed file: the NameNode knows it all
        else:
            # hflush ends at an entry's end: the last whole entry is the end of the readable bytes
            assert summary["truncated_tail_bytes"] == 0 and summary["position"] == summary["file_length"], path
            if any(e["table"] == table for e in entries):
                open_with_table.append((path, entries, summary))

    assert finished >= 1 and len(open_with_table) == 1
    assert {f"{p}-{i}" for p in ("before", "after") for i in range(3)} <= rows
    path = open_with_table[0][0]
    # What the NameNode reports for the file being written: an hflush does not tell it, so it counts the bytes up
    # to some earlier sync (usually the header; under load an early sync's length report can land later, as in a
    # fresh-clone run at c6915a3, where it covered half the "after" rows). Every entry written after this moment
    # starts at or past it, whatever the NameNode learns meanwhile.
    known = fs.status(path).length
    mutate(hbase, table, wal_workload("tail"))
    entries, summary = hbrep_dump(for_hbrep[path])
    assert not summary["trailer_present"] and summary["truncated_tail_bytes"] == 0
    beyond = [e for e in entries if e["start"] >= known]
    assert known < summary["position"] == entries[-1]["end"]
    assert {c["row"] for e in beyond if e["table"] == table for c in e["cells"]} >= {f"tail-{i}" for i in range(4)}
    # reading on from an entry past the NameNode's length: the same entries from there, as HBase's
    middle = beyond[len(beyond) // 2]
    tail, tail_summary = hbrep_dump(for_hbrep[path], start=middle["start"])
    assert tail == entries[entries.index(middle) :]
    assert tail_summary["position"] == summary["position"]


def test_a_wal_a_real_hdfs_writer_holds_open_mid_entry_reads_up_to_its_last_whole_entry(
    real_hbase_on_hdfs, hdfs_cluster
):
    hbase = real_hbase_on_hdfs
    table = f"held_{uuid.uuid4().hex[:8]}"
    hbase.admin("create-table", table, "3", "a:1", "b:0", "c:1")
    mutate(hbase, table, wal_workload("held"))
    hbase.admin("roll")  # the WAL holding the workload gets its trailer: a stable source of whole entries
    fs, root = get_filesystem(hdfs_cluster.webhdfs_root(urlparse(hbase.rootdir_uri).path))
    finished = []
    for path in _wals_on_hdfs(fs, root):
        entries, summary = hbrep_dump(f"{hdfs_cluster.webhdfs_url}{path}")
        if summary["trailer_present"] and sum(e["table"] == table for e in entries) >= 3:
            finished.append((path, entries))
    assert finished
    source, entries = finished[0]
    cut = entries[len(entries) // 2]
    size = (cut["start"] + cut["end"]) // 2  # half of that entry is written
    whole = entries[: entries.index(cut)]
    scoped = [e for e in whole if not e["table"].startswith("hbase:") and any(
        e["scopes"].get(c["family"]) == 1 for c in e["cells"])]  # fmt: skip
    held = fs.join(root, f"held%2C1%2C1.{int(time.time() * 1000)}")  # a WAL name: group and start time
    held_hdfs, held_webhdfs = f"{hdfs_cluster.uri}{held}", f"{hdfs_cluster.webhdfs_url}{held}"
    args = ["hold-open", f"{hdfs_cluster.uri}{source}", held_hdfs, str(size)]
    writer = subprocess.Popen(hbase.tool_command(ADMIN_TOOL_MAIN, args), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert json.loads(writer.stdout.readline()) == {"written": size}
        known = fs.status(held).length
        assert known < whole[0]["start"]  # the NameNode's length: only what the first hflush fsynced
        ours, summary = hbrep_dump(held_webhdfs)
        assert ours == whole
        assert (summary["position"], summary["file_length"], summary["trailer_present"]) == (cut["start"], size, False)
        assert summary["truncated_tail_bytes"] == size - cut["start"]
        assert_same_as_hbase(ours, summary, hbase_read(hbase, [held_hdfs])[held_hdfs], held)
        # a cycle resuming at the last whole entry, and one resuming from past the NameNode's length
        rest, rest_summary = hbrep_dump(held_webhdfs, start=cut["start"])
        assert rest == [] and rest_summary["position"] == cut["start"]
        rest, rest_summary = hbrep_dump(held_webhdfs, start=whole[-1]["start"])
        assert rest == whole[-1:] and rest_summary["position"] == cut["start"]
        # the ship path: the queue's WAL being written is read up to the last whole entry, never finished
        batches, counters = _ship_read(fs, root, held, writer_alive=True)
        assert sum(len(b.entries) for b in batches) == len(scoped) > 0
        assert batches[-1].last_position == cut["start"] and not any(b.end_of_file for b in batches)
        assert counters["logEditsRead"] == len(whole) and counters["uncleanlyClosedLogs"] == 0
        writer.stdin.close()
        assert json.loads(writer.stdout.readline()) == {"closed": held_hdfs}
        assert writer.wait(60) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    # closed without a trailer (as a crashed writer leaves it): the NameNode knows every byte now
    assert fs.status(held).length == size
    after, after_summary = hbrep_dump(held_webhdfs)
    assert after == whole and after_summary["truncated_tail_bytes"] == size - cut["start"]
    # a dead server's queue: the WAL is finished at its last whole entry, its torn tail counted
    batches, counters = _ship_read(fs, root, held, writer_alive=False)
    assert sum(len(b.entries) for b in batches) == len(scoped)
    assert batches[-1].last_position == cut["start"] and batches[-1].end_of_file
    assert counters["uncleanlyClosedLogs"] == 1
    assert counters["ignoredUncleanlyClosedLogContentsInBytes"] == size - cut["start"]
