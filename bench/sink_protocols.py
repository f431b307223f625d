"""One hbrep sink, two protocols: the same ReplicateWALEntry batches sent to an embedded 2-server cluster
over hbrep's gRPC (SinkClient, the cluster token) and over HBase's RPC (HBaseSinkClient, the region
server's HBase RPC listener, as a real HBase source sends them). Both end in the same
``ReplicationSink.replicate_request``, so the difference is the transport: gRPC's C core against a
Python socket loop (framing, the cell block copied into the request). Wall time of the whole batch
list, best of 3, alternating the protocols to share the machine's noise.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

NAME = "sink_protocols"
TITLE = "Sink: hbrep's gRPC vs HBase's RPC into the same region server (same batches)"
CELLS_PER_ENTRY = 100
ENTRIES_PER_CALL = 20


def _batches(calls: int) -> list[list[tuple]]:
    from replication.wal.cell_codec import encode_cells
    from replication.wal.model import Cell, CellType, WALKey

    value, put = b"v" * 100, int(CellType.PUT)
    out = []
    for c in range(calls):
        batch = []
        for e in range(ENTRIES_PER_CALL):
            n = c * ENTRIES_PER_CALL + e
            key = WALKey(b"%032x" % 7, b"bench", n + 1, 1_700_000_000_000 + n, {b"f": 1}, [uuid.UUID(int=5)])
            cells = [
                Cell(b"r%02d-%010d" % (j % 4, n * CELLS_PER_ENTRY + j), b"f", b"q", 1_700_000_000_000, put, value)
                for j in range(CELLS_PER_ENTRY)
            ]
            batch.append((key, len(cells), encode_cells(cells)))
        out.append(batch)
    return out


def run(quick: bool) -> dict:
    """Cells per second through each protocol, and their ratio."""
    from replication.cluster.embedded import start_cluster
    from replication.cluster.hbase_rpc.sink_client import HBaseSinkClient
    from replication.cluster.info import cluster_token
    from replication.cluster.sink_client import SinkClient
    from replication.config import Config
    from replication.devstack.zookeeper import ZooKeeperServer
    from replication.fs import get_filesystem
    from replication.net import free_port
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    calls = 5 if quick else 30
    batches = _batches(calls)
    cells = calls * ENTRIES_PER_CALL * CELLS_PER_ENTRY
    best = {"gRPC": float("inf"), "HBase RPC": float("inf")}
    with tempfile.TemporaryDirectory() as tmp:
        zk = ZooKeeperServer(Path(tmp) / "zk", free_port())
        zk.start()
        try:
            key = f"127.0.0.1:{zk.port}:/sinkproto"
            with start_cluster(key, str(Path(tmp) / "root"), 2, conf=Config.load(env={}), name="bench") as cluster:
                fs, root = get_filesystem(cluster.root)
                TableRegistry(fs, root).create(TableDescriptor.of("bench", ColumnFamilyDescriptor("f", scope=1)))
                grpc_name = cluster.servers[0]
                start_code = grpc_name.rsplit(",", 1)[1]
                (hbase_name,) = [
                    n for n in cluster.zk.get_children(cluster.paths.hbase_rpc_rs) if n.endswith("," + start_code)
                ]
                token = cluster_token(fs, root, cluster.conf)
                with SinkClient(grpc_name, token) as grpc_client, HBaseSinkClient(hbase_name) as hbase_client:
                    clients = {"gRPC": grpc_client, "HBase RPC": hbase_client}
                    for client in clients.values():
                        client.replicate(batches[0], str(uuid.UUID(int=5)))  # warm: channel, connection
                    for _ in range(3):
                        for name, client in clients.items():
                            started = time.perf_counter()
                            for batch in batches:
                                client.replicate(batch, str(uuid.UUID(int=5)))
                            best[name] = min(best[name], time.perf_counter() - started)
                            print(f"[sink_protocols] {name}: {cells / best[name]:,.0f} cells/s", flush=True)
        finally:
            zk.stop()
    figures: dict[str, float] = {"cells per run": cells}
    for name, seconds in best.items():
        figures[f"{name}: cells/s"] = cells / seconds
    return {
        "title": TITLE,
        "command": "make bench (bench/sink_protocols.py)",
        "figures": figures,
        "ratios": {"HBase RPC / gRPC cells/s": best["gRPC"] / best["HBase RPC"]},
        "notes": [
            f"{calls} ReplicateWALEntry calls of {ENTRIES_PER_CALL} entries x {CELLS_PER_ENTRY} cells (100-byte"
            " values) to one of 2 region servers (half the rows forwarded to the other); best of 3 wall times.",
        ],
    }
