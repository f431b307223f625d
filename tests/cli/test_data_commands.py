"""``hbrep get``, ``scan`` and ``count`` on real region servers, in the HBase shell's shape, on the source
and on the peer after a ship cycle (what was replicated)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
from support import add_peer, create_table, cycle

from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow


def hbrep(key, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", "--cluster", str(key), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _cells(table: str) -> list[Cell]:
    put, delete_column = int(CellType.PUT), int(CellType.DELETE_COLUMN)
    cells = [Cell(f"r{i}".encode(), b"f", b"q", 1000, put, f"v{i}".encode()) for i in range(5)]
    cells.append(Cell(b"r1", b"f", b"q", 2000, put, b"v1-new"))  # a second version of r1
    cells.append(Cell(b"r3", b"f", b"q", 3000, delete_column, b""))  # r3 deleted
    cells.append(Cell(b"r\x00bin", b"f", b"q", 1000, put, b"\x01\xff"))
    return cells


@pytest.fixture(scope="module")
def table(pair):
    name = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, name, ("f", 1))
    with pair.source.client() as client:
        client.batch(name, _cells(name))
    return name


def test_scan_prints_the_shells_shape(pair, table):
    done = hbrep(pair.source_key, "scan", table)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["ROW", "COLUMN+CELL"]
    assert lines[-1] == "5 row(s)"  # r\x00bin r0 r1 r2 r4; r3 is deleted
    body = [line.split(maxsplit=1) for line in lines[1:-1]]
    assert [row for row, _ in body] == ["r\\x00bin", "r0", "r1", "r2", "r4"]  # unsigned byte order
    r1 = dict(body)["r1"]
    assert r1.startswith("column=f:q, timestamp=") and r1.endswith(", value=v1-new")
    assert dict(body)["r\\x00bin"].endswith("value=\\x01\\xFF")


def test_scan_range_limit_raw_and_json(pair, table):
    ranged = hbrep(pair.source_key, "scan", table, "--start-row", "r1", "--stop-row", "r4", "--json")
    assert ranged.returncode == 0, ranged.stderr
    data = json.loads(ranged.stdout)
    assert [r["row"] for r in data["rows"]] == ["r1", "r2"] and data["count"] == 2
    assert data["rows"][0]["cells"] == [
        {"family": "f", "qualifier": "q", "timestamp": 2000, "type": "Put", "value": "v1-new"}
    ]
    limited = json.loads(hbrep(pair.source_key, "scan", table, "--limit", "2", "--json").stdout)
    assert [r["row"] for r in limited["rows"]] == ["r\\x00bin", "r0"]
    raw = json.loads(hbrep(pair.source_key, "scan", table, "--raw", "--versions", "3", "--json").stdout)
    r3 = next(r for r in raw["rows"] if r["row"] == "r3")
    assert [(c["type"], c["timestamp"]) for c in r3["cells"]] == [("DeleteColumn", 3000), ("Put", 1000)]
    r1 = next(r for r in raw["rows"] if r["row"] == "r1")
    assert [c["value"] for c in r1["cells"]] == ["v1-new", "v1"]


def test_get_and_count(pair, table):
    got = hbrep(pair.source_key, "get", table, "r2")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].split() == ["COLUMN", "CELL"] and lines[-1] == "1 row(s)"
    assert lines[1].split(maxsplit=1)[0] == "f:q" and lines[1].endswith("value=v2")
    missing = hbrep(pair.source_key, "get", table, "r3")
    assert missing.returncode == 0 and missing.stdout.splitlines()[-1] == "0 row(s)"
    binary = json.loads(hbrep(pair.source_key, "get", table, "r\\x00bin", "--json").stdout)
    assert binary["cells"][0]["value"] == "\\x01\\xFF"
    counted = hbrep(pair.source_key, "count", table)
    assert counted.returncode == 0 and counted.stdout.strip() == "5 row(s)"


def test_the_peer_shows_what_was_replicated(pair, table, spark):
    add_peer(pair, "1")
    with pair.source.client() as client:
        client.put(table, b"after-peer", b"f", b"q", b"shipped", ts=5000)
    cycle(pair, spark)
    on_source = json.loads(hbrep(pair.source_key, "scan", table, "--json").stdout)
    on_peer = json.loads(hbrep(pair.peer_key, "scan", table, "--json").stdout)
    # the peer's queue began at the start of the WAL being written when it was added (as in HBase), so
    # every edit above reached it: the same rows and cells on both sides
    assert on_peer["rows"] == on_source["rows"] and on_peer["count"] == 6
    assert "after-peer" in [r["row"] for r in on_peer["rows"]]
    assert hbrep(pair.peer_key, "count", table).stdout.strip() == "6 row(s)"


def test_bad_input_is_one_line(pair, table):
    unknown = hbrep(pair.source_key, "scan", "no_such_table")
    assert unknown.returncode != 0 and len(unknown.stderr.strip().splitlines()) == 1
    assert "no_such_table" in unknown.stderr
    family = hbrep(pair.source_key, "scan", table, "--columns", "nope")
    assert family.returncode != 0
    assert family.stderr.strip() == f"hbrep: error: table {table} has no column family 'nope'"
    versions = hbrep(pair.source_key, "scan", table, "--versions", "0")
    assert versions.stderr.strip() == "hbrep: error: --versions must be at least 1, not 0"
