"""`hbrep get/scan/count/put/delete/deleteall/major_compact` on a real HBase 2.6.1, judged by HBase itself:
the same table read through happybase (HBase's Thrift server) and HBase's Admin API (AdminTool) must
give the same rows and cells; writes by hbrep are what HBase's client reads back; bad input fails with
one line and changes nothing; a region split in the middle of a scan still gives every row once; a
region server that is down fails with one line (last: the test restarts it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
from interop.helpers import restart_regionserver

from replication.hbase.scanner import ScanOptions
from replication.hbase.table_client import HBaseTableClient
from replication.wal.model import Cell

pytestmark = pytest.mark.slow

HBREP = [sys.executable, "-m", "replication.cli"]
VERSIONS = 3
ROWS = 300


def run(real_hbase, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``hbrep --cluster <the real HBase> ARGS``, whatever its exit code."""
    command = [*HBREP, "--cluster", real_hbase.layout().cluster_key, *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})})


def ok_json(real_hbase, *args: str):
    done = run(real_hbase, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def happybase_cells(real_hbase, table: str, versions: int = VERSIONS + 2) -> set[tuple]:
    """Every version of every cell of ``table`` through happybase: (row, family, qualifier, ts, value)."""
    connection = real_hbase.happybase_connection()
    try:
        htable = connection.table(table)
        cells = set()
        for row, columns in htable.scan():
            for column in columns:
                family, qualifier = column.split(b":", 1)
                for value, ts in htable.cells(row, column, versions=versions, include_timestamp=True):
                    cells.add((row.decode(), family.decode(), qualifier.decode(), ts, value.decode()))
        return cells
    finally:
        connection.close()


def hbrep_cells(rows: list[dict]) -> set[tuple]:
    return {(r["row"], c["family"], c["qualifier"], c["timestamp"], c["value"]) for r in rows for c in r["cells"]}


@pytest.fixture(scope="module")
def table(real_hbase) -> str:
    """A table of ROWS rows in three regions, written through happybase: three versions of a:q, b:q and
    b:r, then every 10th row's b:r deleted (all versions) and every 7th row's a:q newest version."""
    name = f"data_{uuid.uuid4().hex[:8]}"
    # three regions from the start (splitting a daughter waits for its compaction: about a minute here)
    real_hbase.admin("create-table", name, str(VERSIONS), "a:0", "b:0", "split=row00100,row00200")
    connection = real_hbase.happybase_connection()
    try:
        htable = connection.table(name)
        for ts in (10, 20, 30):
            with htable.batch(timestamp=ts, batch_size=200) as batch:
                for i in range(ROWS):
                    batch.put(b"row%05d" % i, {b"a:q": b"a%d-%d" % (i, ts)})
        with htable.batch(timestamp=40, batch_size=200) as batch:
            for i in range(ROWS):
                batch.put(b"row%05d" % i, {b"b:q": b"b%d" % i, b"b:r": b"r%d" % i})
        for i in range(0, ROWS, 10):
            htable.delete(b"row%05d" % i, columns=[b"b:r"])
        for i in range(0, ROWS, 7):
            htable.delete(b"row%05d" % i, columns=[b"a:q"], timestamp=30)  # happybase: DeleteColumn <= 30
    finally:
        connection.close()
    real_hbase.admin("flush", name)
    assert len(real_hbase.admin("locate", name)) == 3
    return name


def test_scan_and_count_equal_hbases_own_client(real_hbase, table):
    expected = happybase_cells(real_hbase, table)
    scanned = ok_json(real_hbase, "scan", table, "--versions", str(VERSIONS))
    assert [r["row"] for r in scanned["rows"]] == sorted({c[0] for c in expected})
    assert hbrep_cells(scanned["rows"]) == expected
    assert scanned["count"] == len({c[0] for c in expected})
    assert ok_json(real_hbase, "count", table)["count"] == scanned["count"]
    text = run(real_hbase, "scan", table, "--limit", "2")
    assert text.returncode == 0 and text.stdout.splitlines()[0].startswith("ROW ")
    assert text.stdout.splitlines()[-1] == "2 row(s)"


def test_scan_range_limit_columns_and_get_equal_hbases(real_hbase, table):
    expected = happybase_cells(real_hbase, table)
    ranged = ok_json(real_hbase, "scan", table, "--start-row", "row00095", "--stop-row", "row00205",
                     "--versions", str(VERSIONS), "--columns", "b")  # fmt: skip
    assert hbrep_cells(ranged["rows"]) == {c for c in expected if "row00095" <= c[0] < "row00205" and c[1] == "b"}
    limited = ok_json(real_hbase, "scan", table, "--start-row", "row00098", "--limit", "5")
    assert [r["row"] for r in limited["rows"]] == [f"row{i:05d}" for i in range(98, 103)]  # across a region end
    for i in (0, 7, 10, 150, 299):
        row = f"row{i:05d}"
        got = ok_json(real_hbase, "get", table, row, "--versions", str(VERSIONS))
        assert {(row, c["family"], c["qualifier"], c["timestamp"], c["value"]) for c in got["cells"]} == {
            c for c in expected if c[0] == row
        }
    newest = ok_json(real_hbase, "get", table, "row00001")
    assert [(c["family"], c["qualifier"], c["timestamp"]) for c in newest["cells"]] == [
        ("a", "q", 30), ("b", "q", 40), ("b", "r", 40)
    ]  # fmt: skip


def test_writes_by_hbrep_are_what_hbases_client_reads(real_hbase, table):
    assert run(real_hbase, "put", table, "new1", "a:x", "v1", "--ts", "100").returncode == 0
    assert run(real_hbase, "put", table, "new1", "b:y", "v2").returncode == 0
    assert run(real_hbase, "put", table, "new2", "a:x", "w").returncode == 0
    assert run(real_hbase, "put", table, "new3", "a:x", "z1", "--ts", "5").returncode == 0
    assert run(real_hbase, "put", table, "new3", "a:x", "z2", "--ts", "6").returncode == 0
    connection = real_hbase.happybase_connection()
    try:
        htable = connection.table(table)
        assert htable.row(b"new1", include_timestamp=True)[b"a:x"] == (b"v1", 100)
        assert htable.row(b"new1")[b"b:y"] == b"v2"
        assert run(real_hbase, "delete", table, "new1", "b:y").returncode == 0
        assert htable.row(b"new1") == {b"a:x": b"v1"}
        assert run(real_hbase, "delete", table, "new3", "a:x", "--type", "version", "--ts", "6").returncode == 0
        assert htable.row(b"new3", include_timestamp=True) == {b"a:x": (b"z1", 5)}
        done = run(real_hbase, "deleteall", table, "new2")
        assert done.returncode == 0 and done.stdout.strip() == f"deleted all of {table} new2"
        assert htable.row(b"new2") == {}
        assert run(real_hbase, "deleteall", table, "new1").returncode == 0
        assert run(real_hbase, "deleteall", table, "new3").returncode == 0
        assert {r for r, _ in htable.scan(row_prefix=b"new")} == set()
    finally:
        connection.close()


def test_bad_input_is_one_line_and_changes_nothing(real_hbase, table):
    before = happybase_cells(real_hbase, table)
    cases = [
        (("get", "no_such_table", "r1"), "hbrep: error: table no_such_table does not exist"),
        (("scan", "no_such_table"), "hbrep: error: table no_such_table does not exist"),
        (("put", "no_such_table", "r1", "a:q", "v"), "hbrep: error: table no_such_table does not exist"),
        (("put", table, "row00001", "zz:q", "v"), f"hbrep: error: table {table} has no column family 'zz'"),
        (("get", table, "row00001", "--columns", "zz"), f"hbrep: error: table {table} has no column family 'zz'"),
        (("scan", table, "--columns", "zz"), f"hbrep: error: table {table} has no column family 'zz'"),
        (("delete", table, "row00001", "zz:q"), f"hbrep: error: table {table} has no column family 'zz'"),
    ]
    for args, line in cases:
        done = run(real_hbase, *args)
        assert done.returncode != 0 and done.stdout == "", args
        assert done.stderr.strip() == line, (args, done.stderr)
    assert happybase_cells(real_hbase, table) == before


def test_a_region_split_during_a_scan_returns_every_row_once(real_hbase):
    name = f"split_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", name, "1", "a:0")
    rows = [b"r%05d" % i for i in range(3000)]
    with HBaseTableClient(real_hbase.layout().cluster_key) as client:
        client.batch(name, [Cell(r, b"a", b"q", (1 << 63) - 1, 4, b"v" + r) for r in rows])
        real_hbase.admin("flush", name)
        scanner = client.scanner(name, ScanOptions(caching=100))
        iterator = iter(scanner)
        seen = [next(iterator)[0] for _ in range(500)]  # the scanner is open in the middle of the region
        real_hbase.admin("split", name, "r01500")
        seen += [row for row, _cells in iterator]
        assert len(client.locator.regions(name, refresh=True)) == 2
    assert seen == rows  # each row once, in order
    assert scanner.restarts >= 1  # the old region's scanner was refused and reopened after the last row


def test_a_region_moving_to_another_server_during_a_scan_returns_every_row_once(real_hbase):
    name = f"move_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", name, "1", "a:0")
    rows = [b"r%05d" % i for i in range(2000)]
    with HBaseTableClient(real_hbase.layout().cluster_key) as client:
        client.batch(name, [Cell(r, b"a", b"q", (1 << 63) - 1, 4, b"v" + r) for r in rows])
        before = set(real_hbase.admin("locate", name).values())
        scanner = client.scanner(name, ScanOptions(caching=100))
        iterator = iter(scanner)
        seen = [next(iterator)[0] for _ in range(500)]  # the scanner is open on the region's first server
        moved = real_hbase.admin("move", name)  # HBase's Admin.move: the region closes there, opens elsewhere
        assert set(moved.values()).isdisjoint(before), (before, moved)
        seen += [row for row, _cells in iterator]
    assert seen == rows  # each row once, in order, the rest read from the region's new server
    assert scanner.restarts >= 1  # the old server refused the scanner and the client found the region again


def test_major_compact_drops_delete_markers(real_hbase):
    name = f"compact_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", name, "1", "a:0")
    assert run(real_hbase, "put", name, "r1", "a:q", "old", "--ts", "10").returncode == 0
    assert run(real_hbase, "delete", name, "r1", "a:q", "--ts", "20").returncode == 0
    raw = ok_json(real_hbase, "scan", name, "--raw", "--versions", "5")  # from the memstore: both cells
    assert [(c["type"], c["timestamp"]) for c in raw["rows"][0]["cells"]] == [("DeleteColumn", 20), ("Put", 10)]
    real_hbase.admin("flush", name)  # the flush drops the masked Put but keeps the marker
    raw = ok_json(real_hbase, "scan", name, "--raw", "--versions", "5")
    assert [(c["type"], c["timestamp"]) for c in raw["rows"][0]["cells"]] == [("DeleteColumn", 20)]
    assert ok_json(real_hbase, "major_compact", name, "--wait", "120") == {
        "table": name, "major": True, "regions": 1, "waited": True
    }  # fmt: skip
    assert ok_json(real_hbase, "scan", name, "--raw", "--versions", "5")["rows"] == []
    assert run(real_hbase, "compact", name).stdout.strip() == f"compaction of {name} requested (1 region(s))"


def test_a_disabled_table_is_one_line_not_a_retry_loop(real_hbase):
    name = f"disabled_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", name, "1", "a:0")
    assert run(real_hbase, "put", name, "r1", "a:q", "v").returncode == 0
    assert run(real_hbase, "disable", name).returncode == 0  # through HBase's master
    try:
        for args in (("get", name, "r1"), ("scan", name), ("put", name, "r2", "a:q", "v")):
            started = time.monotonic()
            done = run(real_hbase, *args)
            assert done.returncode != 0 and done.stderr.strip() == f"hbrep: error: table {name} is disabled", args
            assert time.monotonic() - started < 30, args
    finally:
        assert run(real_hbase, "enable", name).returncode == 0
    assert ok_json(real_hbase, "scan", name)["count"] == 1


def test_a_region_server_down_is_one_line_and_nothing_is_written(real_hbase, table):
    located = real_hbase.admin("locate", table)
    port = int(next(iter(located.values())).split(",")[1])
    index = real_hbase.layout().regionserver_ports.index(port) + 1
    few_tries = {"HBREP__hbase__client__retries__number": "2", "HBREP__hbase__rpc__timeout": "5000"}
    real_hbase.regionserver(index).kill()  # SIGKILL
    try:
        started = time.monotonic()
        done = run(real_hbase, "put", table, "row00000", "a:q", "while-down", env=few_tries)
        if done.returncode != 0:  # the master may already have moved the region: then the put went there
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("hbrep: error: "), done.stderr
            assert "unreachable" in lines[0] or "hbase:meta" in lines[0] or "gave up" in lines[0], lines[0]
            assert time.monotonic() - started < 60
            wrote = False
            print(f"put with region server {index} down: {lines[0]} ({time.monotonic() - started:.1f}s)")
        else:
            wrote = True
    finally:
        restart_regionserver(real_hbase, index)
    deadline = time.monotonic() + 240
    while True:  # the master reassigns the killed server's regions; then HBase's client reads the row
        try:
            connection = real_hbase.happybase_connection()
            try:
                value = connection.table(table).row(b"row00000").get(b"a:q")
            finally:
                connection.close()
            break
        except Exception:
            assert time.monotonic() < deadline
            time.sleep(2)
    assert (value == b"while-down") == wrote
