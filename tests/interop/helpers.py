"""Reading the same WAL three ways: hbrep's ``wal dump --json``, HBase's WALPrettyPrinter, and HBase's
own WALStreamReader (AdminTool ``wal``, which also prints what WALPrettyPrinter leaves out: write
time, cluster ids, scopes, nonces, tags)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from replication.devstack.hbase import HBaseError

PRETTY_PRINTER = "org.apache.hadoop.hbase.wal.WALPrettyPrinter"
HBREP = [sys.executable, "-m", "replication.cli"]


def hbrep_dump(wal: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``hbrep wal dump --json WAL``: its entries and its summary line."""
    done = subprocess.run([*HBREP, "wal", "dump", "--json", str(wal)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    *entries, summary = [json.loads(line) for line in done.stdout.splitlines()]
    return entries, summary


def hbase_read(hbase, wals: list[Path]) -> dict[Path, dict[str, Any]]:
    """HBase's own WALStreamReader over each WAL (up to its last whole entry), in one JVM."""
    return {Path(read["file"]): read for read in hbase.admin("wal", *map(str, wals))}


def pretty_print(hbase, wal: Path) -> tuple[list[dict[str, Any]], bool]:
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


def all_wals(rootdir: Path) -> list[Path]:
    """Every WAL file under WALs/ and oldWALs/ (meta WALs included)."""
    return sorted(p for sub in ("WALs", "oldWALs") for p in (rootdir / sub).rglob("*") if p.is_file())


def copy_wals(rootdir: Path, into: Path) -> list[Path]:
    """A copy of every WAL under WALs/ and oldWALs/, so HBase archiving or splitting a file meanwhile
    cannot pull it away between the readers. A WAL still being written is copied up to wherever its
    writer was, possibly inside an entry: every reader then gets the same bytes. A file that moved
    away before its copy is left out (its new place is copied if the listing saw it there)."""
    copies = []
    for wal in all_wals(rootdir):
        target = into / wal.relative_to(rootdir)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(wal, target)
        except FileNotFoundError:
            continue
        copies.append(target)
    return copies


def hbrep(*args: str, cluster: str) -> str:
    """Run the ``hbrep`` CLI against ``cluster``; its stdout (the test fails on a non-zero exit)."""
    done = subprocess.run([*HBREP, "--cluster", cluster, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"hbrep {' '.join(args)}: {done.stderr}"
    return done.stdout


def hbrep_json(*args: str, cluster: str) -> Any:
    """``hbrep --cluster CLUSTER ARGS --json``, parsed."""
    return json.loads(hbrep(*args, "--json", cluster=cluster))
