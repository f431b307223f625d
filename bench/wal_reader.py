"""WAL reader throughput: full decode and ship path vs a plain read of the same >= 256 MB file.

The WAL is YCSB-shaped (one entry per row Put, 10 cells of 100-byte values, scope GLOBAL) and, as a
worst case for per-entry costs, single-cell entries. Each figure is the best of a few passes over a
file in the page cache, so the plain read is memory bandwidth and the ratios show CPU cost per byte.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time

from replication.fs import LocalFileSystem
from replication.wal.cell_codec import iter_cell_spans
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.reader import open_wal
from replication.wal.writer import ProtobufLogWriter, encode_entry

NAME = "wal_reader"
TITLE = "WAL reader throughput (full decode, ship path) vs plain read"
MB = 1 << 20


def _write_wal(path: str, target_bytes: int, cells_per_entry: int) -> tuple[int, int]:
    rng = random.Random(7)
    values = [rng.randbytes(100) for _ in range(64)]
    region = b"%032x" % rng.getrandbits(128)
    entries = cells = 0
    with ProtobufLogWriter(path) as writer:
        chunk: list[bytes] = []
        while writer.length < target_bytes:
            ts = 1_700_000_000_000 + entries
            key = WALKey(region, b"usertable", entries + 1, ts, {b"f": 1})
            row = b"user%012d" % entries
            batch = [
                Cell(row, b"f", b"field%d" % j, ts, CellType.PUT, values[(entries + j) % 64])
                for j in range(cells_per_entry)
            ]
            chunk.append(encode_entry(Entry(key, batch)))
            entries += 1
            cells += cells_per_entry
            if len(chunk) == 512:
                writer.append_raw(b"".join(chunk))
                chunk.clear()
        if chunk:
            writer.append_raw(b"".join(chunk))
    return entries, cells


def _best(fn, repeat: int) -> tuple[float, float]:
    """Best wall time and best CPU time (process_time: robust when other jobs share the 2 cores)."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def _measure(path: str, cells_expected: int, repeat: int) -> dict[str, float]:
    fs = LocalFileSystem()
    size = os.path.getsize(path)

    def plain() -> None:
        with fs.open_read(path) as stream:
            while stream.read(8 * MB):
                pass

    def ship() -> None:
        n = 0
        for raw in open_wal(path, fs=fs).raw_entries():
            n += raw.cell_count
        assert n == cells_expected

    def ship_filtered() -> None:
        # The source's filter: by WALKey (table, scopes), then by family without decoding values.
        n = 0
        for raw in open_wal(path, fs=fs).raw_entries(key_filter=lambda key: key.table_name == b"usertable"):
            for family, _start, _end in iter_cell_spans(raw.cell_bytes, raw.cell_count):
                if family == b"f":
                    n += 1
        assert n == cells_expected

    def full() -> None:
        n = 0
        for read in open_wal(path, fs=fs):
            n += len(read.entry.cells)
        assert n == cells_expected

    plain()  # warm the page cache
    times = {
        "plain": _best(plain, max(3, repeat)),
        "ship": _best(ship, repeat),
        "ship_filtered": _best(ship_filtered, repeat),
        "full": _best(full, repeat),
    }
    out = {k: size / MB / wall for k, (wall, _) in times.items()}
    out |= {f"{k}_cpu": size / MB / cpu for k, (_, cpu) in times.items()}
    out |= {f"{k}_cells_s": cells_expected / wall for k, (wall, _) in times.items() if k != "plain"}
    return out


def run(quick: bool) -> dict:
    """Write the WALs in a temp dir, time each read mode, delete the files."""
    target = (16 if quick else 256) * MB
    repeat = 1 if quick else 2
    tmp = tempfile.mkdtemp(prefix="hbrep-bench-wal-")
    figures: dict[str, float | int] = {}
    ratios: dict[str, float] = {}
    try:
        for shape, per_entry in (("ycsb_10_cells", 10), ("single_cell", 1)):
            path = os.path.join(tmp, f"{shape}.wal")
            start = time.perf_counter()
            entries, cells = _write_wal(path, target, per_entry)
            write_s = time.perf_counter() - start
            size_mb = os.path.getsize(path) / MB
            m = _measure(path, cells, repeat)
            os.remove(path)
            figures |= {
                f"{shape}: file size (MB)": round(size_mb, 1),
                f"{shape}: entries": entries,
                f"{shape}: cells": cells,
                f"{shape}: write (MB/s)": size_mb / write_s,
                f"{shape}: plain read (MB/s)": m["plain"],
                f"{shape}: full decode (MB/s)": m["full"],
                f"{shape}: full decode (cells/s)": m["full_cells_s"],
                f"{shape}: ship path (MB/s)": m["ship"],
                f"{shape}: ship path (cells/s)": m["ship_cells_s"],
                f"{shape}: ship path + key/family filter (MB/s)": m["ship_filtered"],
                f"{shape}: ship path + key/family filter (cells/s)": m["ship_filtered_cells_s"],
            }
            figures[f"{shape}: plain read, CPU time (MB/s)"] = m["plain_cpu"]
            figures[f"{shape}: ship path, CPU time (MB/s)"] = m["ship_cpu"]
            ratios |= {
                f"{shape}: ship path / plain read": m["ship"] / m["plain"],
                f"{shape}: ship path / plain read (CPU time)": m["ship_cpu"] / m["plain_cpu"],
                f"{shape}: ship path + filter / plain read": m["ship_filtered"] / m["plain"],
                f"{shape}: full decode / plain read": m["full"] / m["plain"],
                f"{shape}: ship path / full decode": m["ship"] / m["full"],
            }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()[0]
    return {
        "title": TITLE,
        "command": "make bench (bench/wal_reader.py)",
        "figures": figures,
        "ratios": ratios,
        "notes": [
            "WALs written by ProtobufLogWriter in a temp dir and deleted afterwards; ycsb_10_cells = one entry "
            "per row Put with 10 cells of 100-byte values (YCSB's default row), single_cell = one 100-byte "
            "cell per entry (the worst case for per-entry cost). Best of several passes, page cache warm.",
            "ship path = WALReader.raw_entries(): WALKey decoded (protobuf/upb), cells located by their int32 "
            "sizes and handed out as memoryview slices, no value copied. + filter adds a key filter and "
            "iter_cell_spans() (family of every cell, values untouched). full decode = Cell objects.",
            f"1-minute load average at the end of the run: {load:.1f} on {os.cpu_count()} cores (other "
            "engineers' tests share the machine), hence the CPU-time ratios next to the wall-clock ones.",
        ],
    }
