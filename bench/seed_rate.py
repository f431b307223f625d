"""hbrep seed_peer's copy rate vs writing the same cells through the peer's normal write path.

Engine only (no Airflow): embedded source A (2 region servers) and peer B (2), real ZooKeeper, one Spark
local[2] session. A table of N cells (as bench/verify.py generates them: 10 cells a row,
24-byte values) is generated straight into A's table-file layout. Then, in one run:

- the seed: ``start_seed`` (the peer and its helper added, the table created on B, 8 row-range chunks),
  every ``copy_chunk`` (the seed's copy: hash buckets on both sides, then the cells B lacks written as
  replicated edits through B's replication sink), then ``catch_up`` and the final VerifyReplication;
- the normal write path: the same cells read from A's files and written into another table of B with
  ``ClusterClient.batch`` (B's region servers append to their WALs and fsync before acknowledging),
  4 client threads, 1,000 cells a batch.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from bench._support import replication_pair, spark
from bench.verify import CELLS_PER_ROW, _generate

NAME = "seed_rate"
TITLE = "Seeding a peer (hbrep seed_peer's copy) vs the peer's normal write path, same cells"
SEEDED = "seeded"
WRITTEN = "written"
WRITERS = 4
BATCH = 1_000


def _write_path(pair, files: list[Path]) -> int:
    """Every cell of ``files`` written into B's table WRITTEN by WRITERS client threads; the cells written."""
    import pyarrow.parquet as pq

    from replication.wal.model import Cell, CellType

    written = [0] * WRITERS
    errors: list[str] = []

    def writer(k: int) -> None:
        try:
            with pair.peer.client() as client:
                for path in files[k::WRITERS]:
                    for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH):
                        d = batch.to_pydict()
                        columns = (d["row"], d["family"], d["qualifier"], d["timestamp"], d["value"])
                        cells = [Cell(r, f, q, t, CellType.PUT, v) for r, f, q, t, v in zip(*columns, strict=True)]
                        written[k] += client.batch(WRITTEN, cells)
        except Exception as exc:  # reported below: a benchmark with an error has no figure
            errors.append(f"writer {k}: {exc}")

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"bench/seed_rate: {errors[0]}")
    return sum(written)


def run(quick: bool) -> dict:
    """Generate the table on A, seed B with it, then write the same cells through B's client path."""
    from replication.jobs.launch import runner_for
    from replication.operations.seed import catch_up, copy_chunk, start_seed, verify_seed, wait_for_peer
    from replication.source.cycle import run_cycle
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.client import connected

    cells = 200_000 if quick else 10_000_000
    session = spark()
    with replication_pair(source_rs=2, peer_rs=2, peer=False) as pair:
        _generate(session, pair.source.root, cells, SEEDED)
        TableRegistry(None, pair.peer.root).create(TableDescriptor.of(WRITTEN, ColumnFamilyDescriptor("f", scope=1)))
        conf, key = pair.conf, pair.source_key
        with connected(key) as zk:
            t0 = time.perf_counter()
            mark, created = start_seed(session, zk, key, conf, "1", [SEEDED], cluster_key=str(pair.peer_key))
            start_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            copied = sum(copy_chunk(session, zk, key, conf, "1", t, k) for t, k in mark.chunks_left())
            copy_s = time.perf_counter() - t0
            runner = runner_for(conf, session)

            def ship(peer: str) -> None:
                run_cycle(zk, key, conf, runner=runner, peer_ids=[peer])

            t0 = time.perf_counter()
            _, through = catch_up(zk, key, conf, "1", run_helper_cycle=ship)
            wait_for_peer(zk, key, conf, "1", [SEEDED], run_cycle=ship)
            catch_up_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            verified = verify_seed(session, zk, key, conf, "1", [SEEDED], through)[SEEDED]
            verify_s = time.perf_counter() - t0
        files = sorted((Path(pair.source.root) / "data" / "default" / SEEDED / "region0001").glob("*.parquet"))
        t0 = time.perf_counter()
        written = _write_path(pair, files)
        write_s = time.perf_counter() - t0
    if copied != cells or written != cells or verified["GOODROWS"] != cells // CELLS_PER_ROW:
        raise RuntimeError(f"bench/seed_rate: wrong result: copied {copied}, written {written}, verify {verified}")
    seed_rate, write_rate = copied / copy_s, written / write_s
    return {
        "title": TITLE,
        "command": "make bench (bench/seed_rate.py)",
        "figures": {
            "cells in the table": cells,
            "chunks": mark.chunk_count(SEEDED),
            "table created on the peer by the seed": created == [SEEDED],
            "seed start: peer, helper, chunk boundaries (s)": round(start_s, 2),
            "seed copy, every chunk (s)": round(copy_s, 2),
            "seed copy rate (cells/s)": round(seed_rate),
            "catch-up and the peer's own token (s)": round(catch_up_s, 2),
            "final VerifyReplication (s)": round(verify_s, 2),
            "normal write path, 4 client threads (s)": round(write_s, 2),
            "normal write path rate (cells/s)": round(write_rate),
        },
        "ratios": {"seed copy rate / normal write path rate": round(seed_rate / write_rate, 2)},
        "notes": [
            "Engine only (no Airflow; the hbrep_seed_peer DAG maps the same copy_chunk calls, one task each). "
            "Both paths end in B's region servers appending to their WALs with an fsync per acknowledged "
            "batch; the seed's copy sends Arrow batches from Spark through the replication sink (ReplicateWALEntry "
            "per chunk partition), the write path sends 1,000-cell client batches from 4 Python threads.",
            "Between real HBase clusters the copy is HBase's snapshot + ExportSnapshot + clone (files, not cells) "
            "and is not in this figure.",
        ],
    }
