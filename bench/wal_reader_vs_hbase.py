"""hbrep's WAL reader against HBase's own (WALStreamReader of HBase 2.6.1, the reader WALPrettyPrinter
and replication use) on the same large WAL, entries per second, one run each.

The WAL is written by hbrep's ProtobufLogWriter (YCSB-shaped entries: one row Put of 10 cells with
100-byte values, scope GLOBAL). HBase's side runs in one JVM (io.hbrep.interop.AdminTool ``wal --count``)
and times only the read loop, so the JVM's start is not counted; hbrep's side is the full decode to
Cell objects (what ``hbrep wal dump`` does) and the ship path (raw entries, values not copied).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from bench.wal_reader import MB, _write_wal
from replication.devstack.hbase import LOG4J2_TOOLS, RealHBase
from replication.fs import LocalFileSystem
from replication.wal.reader import open_wal

NAME = "wal_reader_vs_hbase"
TITLE = "hbrep's WAL reader vs HBase's own (WALStreamReader), same WAL"


def run(quick: bool) -> dict:
    """Write one WAL, read it once with hbrep (full decode, ship path) and once with HBase; delete it."""
    target = (16 if quick else 256) * MB
    tmp = tempfile.mkdtemp(prefix="hbrep-bench-walvs-")
    try:
        path = os.path.join(tmp, "ycsb.wal")
        entries, cells = _write_wal(path, target, 10)
        size_mb = os.path.getsize(path) / MB
        fs = LocalFileSystem()
        with fs.open_read(path) as stream:  # page cache warm for every reader
            while stream.read(8 * MB):
                pass
        start = time.perf_counter()
        full = sum(1 for _ in open_wal(path, fs=fs))
        full_s = time.perf_counter() - start
        start = time.perf_counter()
        ship = sum(1 for _ in open_wal(path, fs=fs).raw_entries())
        ship_s = time.perf_counter() - start
        tools = RealHBase(tmp)
        tools.conf_dir.mkdir()
        (tools.conf_dir / "log4j2-tools.properties").write_text(LOG4J2_TOOLS)
        start = time.perf_counter()
        # full JIT (C2) for the reader, not the C1-only start-up setting the dev stack's JVMs use
        (hbase,) = tools.run_tool("io.hbrep.interop.AdminTool", ["wal", "--count", path], parse_json=True,
                                  heap_mb=512, jvm_options=["-XX:TieredStopAtLevel=4"])  # fmt: skip
        hbase_wall = time.perf_counter() - start
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert full == ship == hbase["entries"] == entries and hbase["cells"] == cells
    figures = {
        "file size (MB)": round(size_mb, 1),
        "entries": entries,
        "hbrep full decode (entries/s)": entries / full_s,
        "hbrep ship path (entries/s)": entries / ship_s,
        "HBase WALStreamReader, read loop in the JVM (entries/s)": entries / hbase["seconds"],
        "HBase WALStreamReader, with JVM start (entries/s)": entries / hbase_wall,
    }
    ratios = {
        "hbrep full decode / HBase": (entries / full_s) / (entries / hbase["seconds"]),
        "hbrep ship path / HBase": (entries / ship_s) / (entries / hbase["seconds"]),
    }
    return {
        "title": TITLE,
        "command": "make bench, or alone: .venv/bin/python -m bench --only wal_reader_vs_hbase",
        "figures": figures,
        "ratios": ratios,
        "notes": [
            "One run each on the same file in the page cache, written by hbrep's ProtobufLogWriter (so HBase "
            "reading it is also a check that hbrep's WALs are HBase's). HBase = WALFactory.createStreamReader "
            "+ next() in a loop (decodes WALKey and cells), timed inside the JVM (full JIT, C1 and C2), then "
            "the same with the JVM's start-up. hbrep = Python 3.11 in this process.",
            f"1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine).",
        ],
    }
