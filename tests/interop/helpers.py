"""Reading the same WAL three ways: hbrep's ``wal dump --json``, HBase's WALPrettyPrinter, and HBase's
own WALStreamReader (AdminTool ``wal``, which also prints what WALPrettyPrinter leaves out: write
time, cluster ids, scopes, nonces, tags)."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cluster.helpers import wal_entries

from replication.cluster.hbase_registry import hbase_cluster_key
from replication.devstack.hbase import HBaseError
from replication.devstack.jvm import port_accepts
from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.zk.client import connected
from replication.zk.cluster_id import read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths

PRETTY_PRINTER = "org.apache.hadoop.hbase.wal.WALPrettyPrinter"
HBREP = [sys.executable, "-m", "replication.cli"]


# key fields HBase's WALStreamReader (AdminTool wal) and hbrep's dump both print, per entry, and cell fields
KEY_FIELDS = ("table", "region", "sequence", "orig_sequence", "write_time", "nonce_group", "nonce", "cluster_ids",
              "scopes", "extended_attributes", "start", "end")  # fmt: skip
CELL_FIELDS = ("row", "family", "qualifier", "timestamp", "type", "value", "tags")


def hbrep_dump(wal: Path | str, start: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``hbrep wal dump --json [--start N] WAL`` (a path or a webhdfs:// URI): its entries and its summary line."""
    command = [*HBREP, "wal", "dump", "--json", "--start", str(start), str(wal)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    *entries, summary = [json.loads(line) for line in done.stdout.splitlines()]
    return entries, summary


def hbase_read(hbase, wals: list[Path] | list[str]) -> dict[str, dict[str, Any]]:
    """HBase's own WALStreamReader over each WAL (up to its last whole entry), in one JVM, by str(wal)."""
    return {read["file"]: read for read in hbase.admin("wal", *map(str, wals))}


def hbase_read_live(hbase) -> dict[str, dict[str, Any]]:
    """``hbase_read`` over copies of every WAL of a running cluster (see ``copy_wals``): HBase may archive
    or its log cleaner delete a WAL between the listing and the read."""
    with tempfile.TemporaryDirectory(prefix="hbase-wals-") as scratch:
        return hbase_read(hbase, copy_wals(hbase.rootdir, Path(scratch)))


def assert_same_as_hbase(entries: list[dict], summary: dict, hbase: dict[str, Any], wal: object) -> None:
    """hbrep's dump of WAL has every key field and every cell HBase's WALStreamReader read, and stops
    at the same position."""
    assert [{k: e[k] for k in KEY_FIELDS} for e in entries] == [
        {k: e[k] for k in KEY_FIELDS} for e in hbase["items"]
    ], wal
    assert [[{k: c[k] for k in CELL_FIELDS} for c in e["cells"]] for e in entries] == [
        [{k: c[k] for k in CELL_FIELDS} for c in e["cells"]] for e in hbase["items"]
    ], wal
    assert summary["entries"] == hbase["entries"] and summary["position"] == hbase["position"], wal


def assert_same_as_pretty_printer(entries: list[dict], printed: list[dict], wal: object) -> None:
    """Entries, cells (with values) and positions equal WALPrettyPrinter's JSON of the same WAL."""
    assert [(p["table"]["nameAsString"], p["region"], int(p["sequence"])) for p in printed] == [
        (e["table"], e["region"], e["sequence"]) for e in entries
    ], wal
    assert [cells_of_pretty(p) for p in printed] == [cells_of_hbrep(e) for e in entries], wal
    assert [p["position"] for p in printed] == [e["end"] for e in entries], wal


def wal_workload(row_prefix: str) -> list[dict]:
    """AdminTool ``mutate`` lines: puts across families a (scope 1), b (scope 0), c (scope 1), three
    versions, a binary value, a put with a TTL (HBase writes it as a tag), and each kind of delete."""
    r = [f"{row_prefix}-{i}" for i in range(4)]
    return [
        {"op": "put", "row": r[0], "family": "a", "qualifier": "q", "ts": 1000, "value": "v1"},
        {"op": "put", "row": r[0], "family": "a", "qualifier": "q", "ts": 2000, "value": "v2"},
        {"op": "put", "row": r[0], "family": "a", "qualifier": "q", "ts": 3000, "value": "v3"},
        {"op": "multi_put", "row": r[1], "cells": [
            {"family": "a", "qualifier": "x", "value": "ax"},
            {"family": "b", "qualifier": "y", "value": "by"},
            {"family": "c", "qualifier": "z", "value_b64": "AAEC/w=="},
        ]},
        {"op": "put", "row": r[2], "family": "c", "qualifier": "ttl", "value": "expires", "ttl": 86_400_000},
        {"op": "put", "row": r[3], "family": "b", "qualifier": "q", "ts": 10, "value": "b10"},
        {"op": "delete_version", "row": r[0], "family": "a", "qualifier": "q", "ts": 1000},
        {"op": "delete_columns", "row": r[0], "family": "a", "qualifier": "q", "ts": 2500},
        {"op": "delete_family_version", "row": r[1], "family": "a", "ts": 42},
        {"op": "delete_family", "row": r[1], "family": "b"},
        {"op": "delete_row", "row": r[3]},
    ]  # fmt: skip


def mutate(hbase, table: str, lines: list[dict]) -> None:
    """Apply AdminTool ``mutate`` lines to TABLE of the real HBase."""
    assert hbase.admin("mutate", table, stdin="\n".join(json.dumps(line) for line in lines)) == {"applied": len(lines)}


def pretty_print(hbase, wal: Path | str) -> tuple[list[dict[str, Any]], bool]:
    """WALPrettyPrinter ``-j -p`` on WAL: the entries it printed, each with the ``position`` it printed
    after it, and whether it ran to the end (it stops with an EOFException inside a WAL still being
    written, after printing every whole entry before that point)."""
    try:
        out, complete = hbase.run_tool(PRETTY_PRINTER, ["-j", "-p", str(wal)]), True
    except HBaseError as exc:
        if "EOFException" not in str(exc):
            raise
        out, complete = exc.stdout, False
    decoder = json.JSONDecoder()
    entries, index = [], out.find('{"sequence"')
    while index >= 0:
        entry, end = decoder.raw_decode(out, index)
        rest = out[end:].split("\n", 2)  # "edit heap size: N", "position: P"
        entry["position"] = int(rest[1].removeprefix("position:").strip())
        entries.append(entry)
        index = out.find('{"sequence"', end)
    return entries, complete


def cells_of_pretty(entry: dict[str, Any]) -> list[tuple]:
    """(row, family, qualifier, timestamp, type name, value) of a WALPrettyPrinter entry."""
    return [
        (a["row"], a["family"], a["qualifier"], int(a["timestamp"]), a["type"], a["value"]) for a in entry["actions"]
    ]


def cells_of_hbrep(entry: dict[str, Any]) -> list[tuple]:
    """The same tuple for an entry of ``hbrep wal dump --json``."""
    return [(c["row"], c["family"], c["qualifier"], c["timestamp"], c["type_name"], c["value"]) for c in entry["cells"]]


def all_wals(rootdir: Path, subdirs: tuple[str, ...] = ("WALs", "oldWALs")) -> list[Path]:
    """Every WAL file under ``subdirs`` of ``rootdir`` (default WALs/ and oldWALs/; meta WALs included)."""
    return sorted(p for sub in subdirs for p in (rootdir / sub).rglob("*") if p.is_file())


def copy_wals(rootdir: Path, into: Path, *, headers_within_s: float | None = None) -> list[Path]:
    """A copy of every WAL under WALs/ and oldWALs/, so HBase archiving or splitting a file meanwhile
    cannot pull it away between the readers. A WAL still being written is copied up to wherever its
    writer was, possibly inside an entry: every reader then gets the same bytes. oldWALs/ is listed after
    WALs/ is copied, so a WAL archived between its listing and its copy (a roll's old WAL moves there a few
    milliseconds after the roll) is copied from there; a file gone from both is left out.

    ``headers_within_s``: first wait, that long at most, until no WAL under WALs/ is empty. Admin's roll can
    return while the meta region's new WAL has no header yet (seen in CI: a 0-byte ``.meta`` WAL, on which
    HBase's WALPlayer fails with an EOFException in readHeader; hbrep reads it as a WAL with nothing yet).
    A WAL can also be created between that wait and its copy (seen in CI too: the wait passed, WALPlayer still
    met a copy without its magic), so a copy that is still empty is copied again while the time lasts, and one
    empty to the end is left out, named on stdout: an empty file holds no entry for any reader to compare.
    """
    if headers_within_s is None:
        return _copy_every_wal(rootdir, into)
    wait_for_headers(rootdir / "WALs", headers_within_s)
    copies = _copy_every_wal(rootdir, into)
    return _without_empty_copies(rootdir, into, copies, time.monotonic() + headers_within_s)


def _copy_every_wal(rootdir: Path, into: Path) -> list[Path]:
    """Copies of the WALs under WALs/ then oldWALs/ (see ``copy_wals``); a file gone from both is left out."""
    copies = []
    for sub in ("WALs", "oldWALs"):
        for wal in all_wals(rootdir, (sub,)):
            target = into / wal.relative_to(rootdir)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copyfile(wal, target)
            except FileNotFoundError:
                continue
            copies.append(target)
    return copies


def _without_empty_copies(rootdir: Path, into: Path, copies: list[Path], deadline: float) -> list[Path]:
    """``copies`` with each empty one copied again from WALs/ or oldWALs/ until it has bytes or the deadline
    passes; those still empty then are deleted, left out and named on stdout."""
    while empty := [c for c in copies if c.stat().st_size == 0]:
        if time.monotonic() >= deadline:
            print(f"left out, still empty at the deadline: {[c.name for c in empty]}")
            for copy in empty:
                copy.unlink()
            return [c for c in copies if c not in empty]
        time.sleep(0.1)
        for copy in empty:
            _copy_again(rootdir, into, copy)
    return copies


def _copy_again(rootdir: Path, into: Path, copy: Path) -> None:
    """Copy ``copy``'s WAL again from where it is now (WALs/ or, once archived, oldWALs/), if anywhere."""
    relative = copy.relative_to(into)
    for source in (rootdir / relative, rootdir / "oldWALs" / relative.name):
        try:
            shutil.copyfile(source, copy)
            return
        except FileNotFoundError:
            continue


def wait_for_headers(wals: Path, timeout_s: float) -> None:
    """Wait until no file under ``wals`` is empty; the test fails naming them after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while empty := [p.name for p in wals.rglob("*") if _size(p) == 0]:
        assert time.monotonic() < deadline, f"WALs still without a header after {timeout_s}s: {empty}"
        time.sleep(0.1)


def _size(path: Path) -> int | None:
    """The size of a file, or None for a directory or a file gone (archived) since its listing."""
    try:
        return path.stat().st_size if path.is_file() else None
    except FileNotFoundError:
        return None


def hbrep(*args: str, cluster: str) -> str:
    """Run the ``hbrep`` CLI against ``cluster``; its stdout (the test fails on a non-zero exit)."""
    done = subprocess.run([*HBREP, "--cluster", cluster, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"hbrep {' '.join(args)}: {done.stderr}"
    return done.stdout


def hbrep_json(*args: str, cluster: str) -> Any:
    """``hbrep --cluster CLUSTER ARGS --json``, parsed."""
    return json.loads(hbrep(*args, "--json", cluster=cluster))


def hbrep_json_here(*args: str, cluster: str) -> Any:
    """``hbrep --cluster CLUSTER ARGS --json`` in this process, parsed: its Spark jobs run on the test session's
    warm SparkSession (``spark_session`` gets the running one) instead of a new Spark JVM per command."""
    from click.testing import CliRunner

    from replication.cli import cli

    result = CliRunner().invoke(cli, ["--cluster", cluster, *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, f"hbrep {' '.join(args)}: {result.output}"
    return json.loads(result.stdout)


# a table on real HBase and the same on an embedded hbrep cluster, for HBase replicating into hbrep
SINK_VERSIONS = 3
ARRIVAL_TIMEOUT_S = 180


@contextlib.contextmanager
def hbase_peer_into_hbrep(real_hbase, key: ClusterKey, paths: ZNodePaths, table: str) -> Iterator[str]:
    """A peer on the real HBase that replicates ``table`` natively into the hbrep cluster ``key`` (the cluster key
    hbrep registers for HBase, ``hbase_cluster_key``), added through HBase's Admin API and removed at the end;
    yields its id."""
    peer = f"hbrep{uuid.uuid4().hex[:6]}"
    config = {"id": peer, "cluster_key": hbase_cluster_key(key, paths), "replicate_all": False}
    real_hbase.admin("add-peer", json.dumps({**config, "table_cfs": {table: []}}))
    try:
        yield peer
    finally:
        real_hbase.admin("remove-peer", peer)


def create_on_both(hbrep_sink, real_hbase, table: str) -> None:
    """TABLE with families a and b (scope 1, SINK_VERSIONS versions) on the hbrep cluster and on the real HBase."""
    families = [ColumnFamilyDescriptor(f, scope=1, max_versions=SINK_VERSIONS) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), hbrep_sink.root).create(TableDescriptor.of(table, *families))
    real_hbase.admin("create-table", table, str(SINK_VERSIONS), "a:1", "b:1")


def hbase_table_cells(real_hbase, table: str) -> set[tuple]:
    """Every version of every column of ``table`` on the real HBase, through happybase."""
    connection = real_hbase.happybase_connection()
    try:
        htable = connection.table(table)
        cells = set()
        for row, columns in htable.scan():
            for column in columns:
                family, qualifier = column.split(b":", 1)
                for value, ts in htable.cells(row, column, versions=SINK_VERSIONS + 2, include_timestamp=True):
                    cells.add((row, family, qualifier, ts, value))
        return cells
    finally:
        connection.close()


def hbrep_table_cells(hbrep_sink, table: str) -> set[tuple]:
    """What the hbrep cluster holds for ``table`` (flushed, every version kept by the descriptor)."""
    with hbrep_sink.client() as client:
        client.flush(table)
    cells = scan_cells(read_cells(LocalFileSystem(), hbrep_sink.root, table), versions=SINK_VERSIONS)
    return {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in cells}


def wait_for_hbrep_cells(
    hbrep_sink, table: str, expected: set[tuple], timeout: float = ARRIVAL_TIMEOUT_S
) -> set[tuple]:
    """The cells of ``table`` on the hbrep cluster once they equal ``expected``, or at ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    arrived = hbrep_table_cells(hbrep_sink, table)
    while arrived != expected and time.monotonic() < deadline:
        time.sleep(2)
        arrived = hbrep_table_cells(hbrep_sink, table)
    return arrived


def write_through_thrift(real_hbase, table: str, rows: int) -> set[tuple]:
    """Puts (three versions of a:q, one of b:q and b:r per row) through happybase, then deletes of whole
    columns (happybase's delete); returns the cells that must remain."""
    connection = real_hbase.happybase_connection()
    written: set[tuple] = set()
    try:
        htable = connection.table(table)
        for ts in (10, 20, 30):
            with htable.batch(timestamp=ts, batch_size=100) as batch:
                for i in range(rows):
                    row = f"row{i:05d}".encode()
                    batch.put(row, {b"a:q": b"a%d-%d" % (i, ts)})
                    written.add((row, b"a", b"q", ts, b"a%d-%d" % (i, ts)))
        with htable.batch(timestamp=40, batch_size=100) as batch:
            for i in range(rows):
                row = f"row{i:05d}".encode()
                batch.put(row, {b"b:q": b"b%d" % i, b"b:r": b"r%d" % i})
                written |= {(row, b"b", b"q", 40, b"b%d" % i), (row, b"b", b"r", 40, b"r%d" % i)}
        for i in range(0, rows, 10):  # every 10th row loses b:r (all versions)
            row = f"row{i:05d}".encode()
            htable.delete(row, columns=[b"b:r"])
            written.discard((row, b"b", b"r", 40, b"r%d" % i))
    finally:
        connection.close()
    return written


def hbase_cluster_id(real_hbase) -> str:
    """The real HBase's cluster id (its hbaseid znode)."""
    key = ClusterKey.parse(real_hbase.layout().cluster_key)
    with connected(key) as zk:
        return read_cluster_id(zk, ZNodePaths(parent=key.znode_parent))


def hbrep_wal_entries_of(hbrep_sink, table: str) -> list:
    """Every WAL entry of ``table`` the hbrep cluster's region servers wrote."""
    return [
        e for s in hbrep_sink.servers for e in wal_entries(hbrep_sink.root, s) if e.key.table_name == table.encode()
    ]


def assert_every_cell_arrives(hbrep_sink, table: str, expected: set[tuple]) -> None:
    """The hbrep cluster's cells of ``table`` become exactly ``expected`` within ARRIVAL_TIMEOUT_S (printed)."""
    arrived = wait_for_hbrep_cells(hbrep_sink, table, expected)
    missing, extra = expected - arrived, arrived - expected
    print(f"cells written {len(expected)}, on hbrep {len(arrived)}, missing {len(missing)}, extra {len(extra)}")
    assert arrived == expected, (sorted(missing)[:5], sorted(extra)[:5])


def assert_hbrep_wal_keeps_hbase_cluster_id(hbrep_sink, real_hbase, table: str, expected: set[tuple]) -> None:
    """Every edit hbrep's sink wrote for ``table`` carries the real HBase's cluster id (its hbaseid) and
    only it, and those edits hold every row of ``expected``."""
    entries = hbrep_wal_entries_of(hbrep_sink, table)
    assert entries, "no WAL entry of the table on the hbrep side"
    assert {tuple(e.key.cluster_ids) for e in entries} == {(hbase_cluster_id(real_hbase),)}
    assert {c.row for e in entries for c in e.cells} == {row for row, *_ in expected}


def restart_regionserver(real_hbase, index: int) -> None:
    """Start a killed region server again (same port), so the session's HBase has all its servers."""
    rs = real_hbase.regionserver(index)
    if rs.running():
        return
    port = real_hbase.layout().regionserver_ports[index - 1]
    rs.start(lambda: port_accepts(port), timeout=120)
    deadline = time.monotonic() + 120
    while not any(name.split(",")[1] == str(port) for name in real_hbase.admin("servers")):
        assert time.monotonic() < deadline, f"region server {index} did not come back"
        time.sleep(1)


def cycle_on(key: str, conf: Any, spark: Any) -> Any:
    """One ship cycle (``run_cycle``) of the source at cluster key ``key`` with ``conf``, its jobs in ``spark``;
    the CycleReport."""
    from replication.jobs.launch import runner_for
    from replication.source.cycle import run_cycle
    from replication.zk.client import connected
    from replication.zk.cluster_key import ClusterKey

    cluster = ClusterKey.parse(key)
    with connected(cluster) as zk:
        return run_cycle(zk, cluster, conf, runner=runner_for(conf, spark))
