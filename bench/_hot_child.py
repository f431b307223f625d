"""Child process of bench/hot_paths.py: times one hot path with whatever ``replication`` package
PYTHONPATH puts first (the baseline tree or the current one). Prints one JSON line.

    python bench/_hot_child.py filter|sink|decode|memstore WORKDIR
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import uuid

CELLS_PER_ENTRY = 100  # a region server writes one entry per client batch (100 rows in the loads)
VALUE = 100


def _entries(n_entries: int, seed: int = 7):
    from replication.wal.model import Cell, CellType, Entry, WALKey

    rng = random.Random(seed)
    value = rng.randbytes(VALUE)
    region = b"%032x" % rng.getrandbits(128)
    out = []
    for e in range(n_entries):
        ts = 1_700_000_000_000 + e
        key = WALKey(region, b"bench", e + 1, ts, {b"f": 1})
        cells = [
            Cell(b"r%02d-%010d" % (j % 4, e * CELLS_PER_ENTRY + j), b"f", b"q", ts, int(CellType.PUT), value)
            for j in range(CELLS_PER_ENTRY)
        ]
        out.append(Entry(key, cells))
    return out


def filter_loop(work: str) -> dict:
    """Reader ship path + EntryFilter over a ~30 MB WAL of 100-cell entries; best of 5, cells per CPU second
    (single-threaded, so CPU time is robust when other jobs share the cores)."""
    from replication.fs import LocalFileSystem
    from replication.source.filters import EntryFilter
    from replication.wal.reader import open_wal
    from replication.wal.writer import ProtobufLogWriter, encode_entry

    path = os.path.join(work, "filter.wal")
    entries = _entries(2000)
    with ProtobufLogWriter(path) as writer:
        for i in range(0, len(entries), 200):
            writer.append_raw(b"".join(encode_entry(e) for e in entries[i : i + 200]))
    cells = len(entries) * CELLS_PER_ENTRY
    fs = LocalFileSystem()
    best = float("inf")
    for _ in range(5):
        flt = EntryFilter(lambda t, f: True, uuid.uuid4(), uuid.uuid4())
        t0 = time.process_time()
        shipped = 0
        for raw in open_wal(path, fs=fs).raw_entries():
            e = flt.filter(raw.key, raw.cell_count, raw.cell_bytes)
            shipped += e.cell_count
        best = min(best, time.process_time() - t0)
        assert shipped == cells, shipped
    return {"cells": cells, "seconds": best, "cells_per_s": cells / best, "mb": os.path.getsize(path) / 2**20}


def sink_apply(work: str) -> dict:
    """ReplicationSink.replicate_request on an in-process region server of a 2-server peer (the other
    one a process, so half the rows take the routing hop); requests of 20 entries x 100 cells. Best of
    3 in wall time and, separately, in CPU seconds of both peer servers (this process's threads plus
    the other server's process), which the fsync waits and other jobs on the machine do not inflate."""
    from replication.cluster.embedded import start_cluster
    from replication.cluster.regionserver import HRegionServer
    from replication.cluster.sink_client import build_request
    from replication.config import Config
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.fs import get_filesystem
    from replication.net import free_port
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.wal.cell_codec import encode_cells

    zk = ZooKeeperServer(os.path.join(work, "zk"), free_port())
    zk.start()
    try:
        conf = Config.load(env={})
        key = f"127.0.0.1:{zk.port}:/hot"
        with start_cluster(key, os.path.join(work, "root"), 1, conf=conf, name="hot") as cluster:
            fs, root = get_filesystem(cluster.root)
            TableRegistry(fs, root).create(TableDescriptor.of("bench", ColumnFamilyDescriptor("f", scope=1)))
            rs = HRegionServer(key, conf)
            rs.start()
            try:
                deadline = time.monotonic() + 10
                while len(rs.live_servers) < 2 and time.monotonic() < deadline:
                    time.sleep(0.05)
                entries = _entries(600, seed=11)
                source_id = str(uuid.uuid4())
                requests = [
                    build_request(
                        [(e.key, len(e.cells), encode_cells(e.cells)) for e in entries[i : i + 20]], source_id
                    )
                    for i in range(0, len(entries), 20)
                ]
                sink = rs.replication_sink()
                sink.replicate_request(requests[0])  # warm: channels, imports
                import psutil

                others = [psutil.Process(p.pid) for p in cluster.processes.values() if p.poll() is None]

                def cpu() -> float:  # this process's threads + the other server's process
                    return time.process_time() + sum(t.user + t.system for t in (o.cpu_times() for o in others))

                best, best_cpu = float("inf"), float("inf")
                for _ in range(3):
                    t0, c0 = time.perf_counter(), cpu()
                    for request in requests[1:]:
                        sink.replicate_request(request)
                    best = min(best, time.perf_counter() - t0)
                    best_cpu = min(best_cpu, cpu() - c0)
                cells = (len(requests) - 1) * 20 * CELLS_PER_ENTRY
            finally:
                rs.stop(flush=False)
    finally:
        zk.stop()
    return {
        "cells": cells,
        "seconds": best,
        "cells_per_s": cells / best,
        "cpu_seconds": best_cpu,
        "cells_per_cpu_s": cells / best_cpu,
        "servers": 1 + len(others),
    }


def sink_decode(work: str) -> dict:
    """The sink's request decoding alone: ReplicateWALEntry requests of 20 entries x 100 cells decoded as the
    tree's sink decodes them; best of 7, cells per CPU second. The baseline decoded them to Cell objects (and
    encoded them again to forward them); the current tree cuts the cell block into Arrow columns with every
    cell's bounds in the block (replication/wal/cell_columns.py), to forward the bytes as they are."""
    from replication.cluster import sink
    from replication.cluster.sink_client import build_request
    from replication.wal.cell_codec import encode_cells

    try:
        from replication.wal.cell_columns import decode_cell_columns
    except ImportError:  # the baseline
        decode_cell_columns = None

    entries = _entries(200, seed=13)
    source_id = str(uuid.uuid4())
    requests = [
        build_request([(e.key, len(e.cells), encode_cells(e.cells)) for e in entries[i : i + 20]], source_id)
        for i in range(0, len(entries), 20)
    ]

    def decode(request):  # type: ignore[no-untyped-def]
        if decode_cell_columns is None:
            return [c for _key, cells in sink.decode_request(request) for c in cells]
        count = sum(entry.associated_cell_count for entry in request.entry)
        decoded = decode_cell_columns(request.cell_block, count)
        assert decoded.canonical and decoded.end == len(request.cell_block)
        return decoded.columns

    cells = len(entries) * CELLS_PER_ENTRY
    best = float("inf")
    for _ in range(7):
        t0 = time.process_time()
        found = sum(len(decode(request)) for request in requests)
        best = min(best, time.process_time() - t0)
        assert found == cells, found
    return {"cells": cells, "seconds": best, "cells_per_s": cells / best}


def memstore_fill(work: str) -> dict:
    """Replicated cells decoded (sink.decode_request) into a region's memstore (HRegion.add) and kept
    there, as a region server keeps them until a flush: 800k cells (requests of 20 entries x 100
    cells), cells per CPU second, one pass. HOT_GC=tuned applies the region-server process settings
    (gc_tuning.tune_gc); otherwise CPython's defaults. Also reports the time spent in collections."""
    import gc

    if os.environ.get("HOT_GC") == "tuned":
        from replication.cluster.gc_tuning import tune_gc
        from replication.config import Config

        tune_gc(Config.load(env={}))
    from replication.cluster import sink
    from replication.cluster.region import HRegion
    from replication.cluster.sink_client import build_request
    from replication.proto.Admin_pb2 import ReplicateWALEntryRequest
    from replication.wal.cell_codec import encode_cells

    entries = _entries(200, seed=17)
    source_id = str(uuid.uuid4())
    payloads = [
        build_request(
            [(e.key, len(e.cells), encode_cells(e.cells)) for e in entries[i : i + 20]], source_id
        ).SerializeToString()
        for i in range(0, len(entries), 20)
    ]
    region = HRegion("bench", "rs", 0)
    collecting = [0.0, 0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            collecting[1] = time.perf_counter()
        else:
            collecting[0] += time.perf_counter() - collecting[1]

    gc.callbacks.append(on_gc)
    rounds = 40  # 40 x 20,000 cells
    t0 = time.process_time()
    for _ in range(rounds):
        for payload in payloads:  # a fresh request object per call, as the RPC layer hands them out
            request = ReplicateWALEntryRequest.FromString(payload)
            for _key, cells in sink.decode_request(request):
                region.add(cells, region.next_sequence())
    seconds = time.process_time() - t0
    gc.callbacks.remove(on_gc)
    cells = rounds * len(entries) * CELLS_PER_ENTRY
    # the memstore holds (cell, sequence) pairs in the baseline tree, (cells, sequence) chunks since e856b03
    held = sum(len(item) if hasattr(item, "__len__") else 1 for item, _seq in region.memstore)
    assert held == cells, held
    return {"cells": cells, "seconds": seconds, "cells_per_s": cells / seconds, "gc_seconds": collecting[0]}


def main() -> int:
    import replication

    mode, work = sys.argv[1], sys.argv[2]
    modes = {"filter": filter_loop, "sink": sink_apply, "decode": sink_decode, "memstore": memstore_fill}
    result = modes[mode](work)
    result["package"] = os.path.dirname(os.path.dirname(replication.__file__))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
