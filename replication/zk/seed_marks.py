"""A seed in progress, in ZooKeeper: ``<hbrep root>/seeds/<peerId>`` (JSON).

While the mark exists, the ship cycles of the peer skip the seeded tables' edits (the snapshot reads the
mark into the peer's task as ``paused_tables``) and a helper peer, ``seed.<peerId>``, DISABLED until the
copy is done, keeps queues that track those edits from the moment the seed started. The mark also holds
the copy's progress (the chunks finished, per table), so a seed that crashed resumes from the last
finished chunk.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.zk.acl import acl_for, zk_access
from replication.zk.layout import ZNodePaths

SEEDS = "seeds"
HELPER_PREFIX = "seed."


def helper_peer_id(peer_id: str) -> str:
    """The id of the helper peer whose queues track a seeded peer's tables: ``seed.<peerId>``."""
    return f"{HELPER_PREFIX}{peer_id}"


def is_helper_peer(peer_id: str) -> bool:
    """True for a seed's helper peer (``seed.<peerId>``)."""
    return peer_id.startswith(HELPER_PREFIX)


def seed_path(paths: ZNodePaths, peer_id: str) -> str:
    """``<hbrep root>/seeds/<peerId>``."""
    return f"{paths.hbrep_root}/{SEEDS}/{peer_id}"


@dataclass
class SeedMark:
    """One peer's seed: its tables, the row-range chunks of each, those finished, and its stage
    (``copying`` → ``catching-up``). A seed between real HBase clusters copies each table whole by
    snapshot: one chunk a table."""

    peer_id: str
    tables: list[str]
    boundaries: dict[str, list[str]]  # table → the chunks' inner row boundaries (hex), sorted
    started_ms: int
    stage: str = "copying"
    done: dict[str, list[int]] = field(default_factory=dict)  # table → chunk indexes finished
    method: str = "chunks"  # "chunks": row ranges copied as repairs; "snapshot": HBase's snapshot + ExportSnapshot
    peer_rootdir: str = ""  # the peer's hbase.rootdir, where ExportSnapshot copies ("snapshot" only)

    @property
    def helper(self) -> str:
        return helper_peer_id(self.peer_id)

    def chunk_count(self, table: str) -> int:
        return len(self.boundaries[table]) + 1

    def chunks_left(self) -> list[tuple[str, int]]:
        """(table, chunk) pairs not finished yet, in order."""
        return [(t, k) for t in self.tables for k in range(self.chunk_count(t)) if k not in set(self.done.get(t, []))]

    def row_range(self, table: str, chunk: int) -> tuple[bytes | None, bytes | None]:
        """[start_row, stop_row) of one chunk: None for an open end."""
        edges = [bytes.fromhex(b) for b in self.boundaries[table]]
        return (edges[chunk - 1] if chunk > 0 else None, edges[chunk] if chunk < len(edges) else None)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> SeedMark:
        return cls(**json.loads(raw))


def read_seed(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> SeedMark | None:
    """The peer's seed mark, or None when no seed is in progress."""
    path = seed_path(paths, peer_id)
    with zk_access(path):
        try:
            raw, _ = zk.get(path)
        except NoNodeError:
            return None
    return SeedMark.from_bytes(raw)


def write_seed(zk: KazooClient, paths: ZNodePaths, mark: SeedMark) -> None:
    """Create or replace the peer's seed mark."""
    path = seed_path(paths, mark.peer_id)
    with zk_access(path):
        if zk.exists(path):
            zk.set(path, mark.to_bytes())
        else:
            zk.create(path, mark.to_bytes(), acl=acl_for(zk), makepath=True)


def chunk_done(zk: KazooClient, paths: ZNodePaths, peer_id: str, table: str, chunk: int) -> SeedMark:
    """Record one finished chunk (a read-modify-write guarded by the znode's version); the mark after."""
    path = seed_path(paths, peer_id)
    while True:
        with zk_access(path):
            raw, stat = zk.get(path)
        mark = SeedMark.from_bytes(raw)
        mark.done[table] = sorted({*mark.done.get(table, []), chunk})
        try:
            with zk_access(path):
                zk.set(path, mark.to_bytes(), version=stat.version)
            return mark
        except Exception as exc:  # BadVersionError: another chunk finished meanwhile; read again
            if type(exc).__name__ != "BadVersionError":
                raise


def delete_seed(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> None:
    """Remove the peer's seed mark (its tables ship normally again)."""
    path = seed_path(paths, peer_id)
    with zk_access(path):
        if zk.exists(path):
            zk.delete(path)


def paused_tables(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> list[str]:
    """The tables whose edits the peer's cycles skip now (a seed is copying or catching up on them)."""
    mark = read_seed(zk, paths, peer_id)
    return list(mark.tables) if mark else []


def as_dict(mark: SeedMark) -> dict[str, Any]:
    """The mark as JSON for status and the CLI."""
    return {**asdict(mark), "helper": mark.helper, "chunks_left": len(mark.chunks_left())}
