"""The ship path reading one WAL from a real HDFS (WebHDFS) vs from the local file system.

The same YCSB-shaped WAL (one entry per row Put, 10 cells of 100-byte values) is written on the local
disk, copied to a real single-node HDFS (Hadoop's NameNode + DataNode JVMs of the dev stack, WebHDFS),
and read once from each through ``open_wal(...).raw_entries()``: the reader a ship cycle's task runs
(WALKey decoded, cells located, values not copied), without Spark. A plain read of the same bytes from
each place is timed too, so the ratio shows what the transport costs next to the decode.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from bench.wal_reader import _write_wal
from replication.devstack.hdfs import HdfsCluster
from replication.fs import FileSystem, LocalFileSystem, get_filesystem
from replication.wal.reader import open_wal

NAME = "wal_on_hdfs"
TITLE = "Ship path: the same WAL read from HDFS (WebHDFS) vs from the local file system"
ENGINE = "the WAL reader of a ship task, in this process, no Spark job, no scheduler"
MB = 1 << 20


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _plain(fs: FileSystem, path: str) -> None:
    with fs.open_read(path) as stream:
        while stream.read(8 * MB):
            pass


def _ship(fs: FileSystem, path: str, cells_expected: int) -> None:
    n = sum(raw.cell_count for raw in open_wal(path, fs=fs).raw_entries())
    assert n == cells_expected, (path, n, cells_expected)


def run(quick: bool) -> dict:
    """Write the WAL, start an HDFS in a temp dir, copy the WAL there, read it once from each place."""
    target = (16 if quick else 128) * MB
    tmp = tempfile.mkdtemp(prefix="hbrep-bench-hdfs-")
    hdfs = HdfsCluster(os.path.join(tmp, "hdfs"))
    try:
        local_path = os.path.join(tmp, "ycsb.wal")
        entries, cells = _write_wal(local_path, target, 10)
        size_mb = os.path.getsize(local_path) / MB
        started = time.perf_counter()
        hdfs.start()
        start_s = time.perf_counter() - started
        remote, root = get_filesystem(hdfs.webhdfs_root("/bench"))
        remote_path = remote.join(root, "ycsb.wal")
        remote.mkdirs(root)
        upload_s = _timed(lambda: remote.client.upload(remote_path, local_path))  # type: ignore[attr-defined]
        local = LocalFileSystem()
        _plain(local, local_path)  # the local file in the page cache, as the DataNode's block file is
        times = {
            "local plain": _timed(lambda: _plain(local, local_path)),
            "local ship": _timed(lambda: _ship(local, local_path, cells)),
            "hdfs plain": _timed(lambda: _plain(remote, remote_path)),
            "hdfs ship": _timed(lambda: _ship(remote, remote_path, cells)),
        }
    finally:
        hdfs.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    rate = {k: size_mb / s for k, s in times.items()}
    return {
        "title": TITLE,
        "engine": ENGINE,
        "command": ".venv/bin/python -m bench --only wal_on_hdfs (bench/wal_on_hdfs.py)",
        "figures": {
            "file size (MB)": round(size_mb, 1),
            "entries": entries,
            "cells": cells,
            "HDFS start (s)": start_s,
            "copy to HDFS through WebHDFS (MB/s)": size_mb / upload_s,
            "local file system: plain read (MB/s)": rate["local plain"],
            "local file system: ship path (MB/s)": rate["local ship"],
            "local file system: ship path (entries/s)": entries / times["local ship"],
            "HDFS via WebHDFS: plain read (MB/s)": rate["hdfs plain"],
            "HDFS via WebHDFS: ship path (MB/s)": rate["hdfs ship"],
            "HDFS via WebHDFS: ship path (entries/s)": entries / times["hdfs ship"],
        },
        "ratios": {
            "ship path: HDFS / local": rate["hdfs ship"] / rate["local ship"],
            "plain read: HDFS / local": rate["hdfs plain"] / rate["local plain"],
        },
        "notes": [
            "One run of each read. The WAL is written by hbrep's ProtobufLogWriter (bench/wal_reader.py's "
            "YCSB shape), copied to HDFS with one WebHDFS CREATE, and read back through OPEN (the NameNode's "
            "redirect, then the DataNode's HTTP stream on loopback). Both copies are in the page cache (the "
            "DataNode's block file was just written), so the difference is the transport; WebHDFS's stream, "
            "not the decode, bounds the ship path from HDFS (its plain read is as slow). One run on a shared, "
            "loaded machine: compare the ratios.",
            f"1-minute load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine).",
        ],
    }
