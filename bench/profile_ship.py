"""Profile the ship path with pyinstrument (not a registered benchmark; run by hand):

    .venv/bin/python -m bench.profile_ship [--rows N] [--value-size B] [--out PREFIX]

Writes a backlog to a fresh pair A → B, snapshots it, and ships every queue in this process (no Spark)
under pyinstrument; prints the ship rate and writes the text profile to bench/results/<PREFIX>.txt.
The sink side runs in the peer's region-server processes; ``--sink`` profiles one in-process
ReplicationSink apply of a recorded batch instead.
"""

from __future__ import annotations

import argparse
import time

from bench import _support as s


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.profile_ship")
    parser.add_argument("--rows", type=int, default=40000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--out", default="profile_ship")
    parser.add_argument("--sink", action="store_true", help="profile the sink apply in-process instead")
    args = parser.parse_args()
    if args.sink:
        return profile_sink(args)

    from pyinstrument import Profiler

    from replication.source.cycle import commit_step, snapshot_step
    from replication.source.manifest import Manifest, read_text
    from replication.source.replication_source import ship_queue
    from replication.zk.client import connected

    with s.replication_pair() as pair:
        s.load(pair, args.rows, batch=200, value_size=args.value_size, prefix=b"p")
        with connected(pair.source_key) as zk:
            outcome = snapshot_step(zk, pair.source_key, pair.conf, owner="profile")
            manifest = Manifest.from_json(read_text(outcome.manifest_path))
            profiler = Profiler(interval=0.0005)
            t0 = time.monotonic()
            profiler.start()
            results = [ship_queue(manifest, q) for q in manifest.queues]
            profiler.stop()
            elapsed = time.monotonic() - t0
            from replication.source.manifest import ShipResult, result_path_for, write_text

            write_text(result_path_for(outcome.manifest_path), ShipResult(manifest.cycle_id, results).to_json())
            commit_step(zk, pair.source_key, pair.conf, outcome.manifest_path, owner="profile")
        shipped = sum(int(r.metrics.get("shippedOps", 0)) for r in results)
        statuses = [r.status for r in results]
        print(f"shipped {shipped} rows in {elapsed:.2f}s = {shipped / elapsed:,.0f} rows/s ({statuses})")
        text = profiler.output_text(unicode=False, color=False, show_all=False)
        (s.RESULTS / f"{args.out}.txt").write_text(text)
        print(text[:6000])
    return 0


def profile_sink(args: argparse.Namespace) -> int:
    """Read the source's WAL entries through the filter, then apply them as ReplicateWALEntry requests of
    ~``replication.source.size.capacity`` to an in-process region server of the peer (one more region
    server runs as a process, so rows owned by it take the routing hop) under pyinstrument."""
    import uuid

    from pyinstrument import Profiler

    from replication.cluster.regionserver import HRegionServer
    from replication.cluster.sink_client import build_request
    from replication.fs import get_filesystem
    from replication.source.filters import EntryFilter
    from replication.wal.reader import open_wal

    with s.replication_pair(peer_rs=1) as pair:
        rs = HRegionServer(str(pair.peer_key), pair.conf)
        rs.start()
        try:
            s.load(pair, args.rows, batch=200, value_size=args.value_size, prefix=b"p")
            fs, root = get_filesystem(pair.source.root)
            local = uuid.uuid4()
            entry_filter = EntryFilter(lambda t, f: True, local, uuid.uuid4())
            entries = []
            for dirpath, _d, files in __import__("os").walk(f"{root}/WALs"):
                for name in files:
                    for raw in open_wal(f"{dirpath}/{name}", fs=fs).raw_entries():
                        e = entry_filter.filter(raw.key, raw.cell_count, raw.cell_bytes)
                        if e is not None:
                            entries.append((e.key, e.cell_count, bytes(e.cell_bytes)))
            requests = [build_request(entries[i : i + 2000], str(local)) for i in range(0, len(entries), 2000)]
            sink = rs.replication_sink()
            profiler = Profiler(interval=0.0005)
            t0 = time.monotonic()
            profiler.start()
            for request in requests:
                sink.replicate_request(request)
            profiler.stop()
            elapsed = time.monotonic() - t0
        finally:
            rs.stop(flush=False)
    cells = sum(c for _k, c, _b in entries)
    print(f"sink applied {cells} cells in {elapsed:.2f}s = {cells / elapsed:,.0f} cells/s")
    text = profiler.output_text(unicode=False, color=False, show_all=False)
    (s.RESULTS / f"{args.out}.txt").write_text(text)
    print(text[:8000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
