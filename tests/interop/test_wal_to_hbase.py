"""WALs written by hbrep, read by HBase: a WAL hbrep's region server wrote is printed by HBase's
WALPrettyPrinter with the same entries, and replayed by HBase's WALPlayer (local job runner) into a
real HBase table whose content (every version, after deletes of each kind) equals hbrep's table."""

from __future__ import annotations

import uuid

import pytest
from interop.helpers import all_wals, cells_of_hbrep, cells_of_pretty, hbrep_dump, pretty_print

from replication.cluster.embedded import start_cluster
from replication.config import Config
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.model import CellType

pytestmark = pytest.mark.slow

WAL_PLAYER = "org.apache.hadoop.hbase.mapreduce.WALPlayer"


def _write(client) -> None:
    """Puts (three versions, two families, one same-timestamp overwrite) and every kind of delete."""
    put = client.put
    for ts in (10, 20, 30):
        put("t", b"r1", b"f", b"a", b"r1-%d" % ts, ts=ts)
    put("t", b"r2", b"f", b"a", b"x", ts=10)
    put("t", b"r2", b"f", b"a", b"x", ts=20)
    put("t", b"r2", b"f", b"b", b"r2-b", ts=15)
    put("t", b"r3", b"f", b"a", b"x", ts=10)
    put("t", b"r3", b"f", b"b", b"r3-b", ts=20)
    put("t", b"r3", b"g", b"c", b"r3-c", ts=5)
    put("t", b"r4", b"f", b"a", b"x", ts=10)
    put("t", b"r4", b"f", b"c", b"r4-c", ts=11)
    put("t", b"r5", b"f", b"a", b"x", ts=10)
    put("t", b"r6", b"f", b"a", b"v1", ts=10)
    put("t", b"r7", b"g", b"\x00bin", b"\xff\x00", ts=7)
    client.delete("t", b"r1", b"f", b"a", ts=20, kind=CellType.DELETE)
    client.delete("t", b"r2", b"f", b"a", ts=20)
    client.delete("t", b"r3", b"f", ts=15)
    client.delete("t", b"r4", b"f", ts=10, kind=CellType.DELETE_FAMILY_VERSION)
    client.delete("t", b"r5", ts=50)
    put("t", b"r5", b"f", b"a", b"x", ts=40)
    put("t", b"r6", b"f", b"a", b"v2", ts=10)


def _hbase_cells(real_hbase, table: str, families: dict[bytes, int]) -> list[tuple]:
    """Every visible version of every cell of the real HBase table, read through happybase."""
    connection = real_hbase.happybase_connection()
    try:
        t = connection.table(table)
        out = []
        for row, columns in t.scan():
            for column in columns:
                family = column.split(b":", 1)[0]
                for value, ts in t.cells(row, column, versions=families[family], include_timestamp=True):
                    out.append((row, family, column.split(b":", 1)[1], ts, value))
        return sorted(out)
    finally:
        connection.close()


def test_hbrep_wal_is_printed_and_replayed_by_hbase(real_hbase, zk_server, tmp_path):
    key = f"127.0.0.1:{zk_server.port}:/hbrep-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path / "root"), 1, conf=Config.load(env={}), name="walsrc")
    try:
        TableRegistry(None, cluster.root).create(
            TableDescriptor.of("t", ColumnFamilyDescriptor("f", max_versions=3, scope=1), ColumnFamilyDescriptor("g"))
        )
        with cluster.client() as client:
            _write(client)
            client.roll_wal(cluster.live_servers()[0])  # the WAL closed with a trailer, a new one open
            client.flush("t")
        ours = sorted(
            (c.row, c.family, c.qualifier, c.timestamp, c.value)
            for c in scan_cells(
                read_cells(LocalFileSystem(), cluster.root, "t"), versions=3, family_max_versions={b"f": 3, b"g": 1}
            )
        )
    finally:
        cluster.stop()
    wals = [w for w in all_wals(tmp_path / "root") if hbrep_dump(w)[0]]
    assert wals, "hbrep wrote no WAL with entries"

    # WALPrettyPrinter prints the entries hbrep's own reader reads, cell for cell
    for wal in wals:
        entries, summary = hbrep_dump(wal)
        printed, complete = pretty_print(real_hbase, wal)
        assert complete == summary["trailer_present"]
        assert [(p["table"]["nameAsString"], p["region"], int(p["sequence"])) for p in printed] == [
            (e["table"], e["region"], e["sequence"]) for e in entries
        ]
        assert [cells_of_pretty(p) for p in printed] == [cells_of_hbrep(e) for e in entries]
        assert [p["position"] for p in printed] == [e["end"] for e in entries]

    # WALPlayer replays them into a real HBase table, which then holds what hbrep's table holds
    target = f"played_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", target, "3", "f:0:3", "g:0:1")
    real_hbase.run_tool(
        WAL_PLAYER,
        ["-Dmapreduce.framework.name=local", f"-Dhadoop.tmp.dir={tmp_path / 'mr'}",
         ",".join(map(str, wals)), "t", target],
        heap_mb=512,
        timeout=600,
    )  # fmt: skip
    theirs = _hbase_cells(real_hbase, target, {b"f": 3, b"g": 1})
    assert theirs == ours
    assert (b"r7", b"g", b"\x00bin", 7, b"\xff\x00") in ours and (b"r6", b"f", b"a", 10, b"v2") in ours
    assert not any(row == b"r5" for row, *_ in ours)  # the row delete at 50 masks the put at 40
