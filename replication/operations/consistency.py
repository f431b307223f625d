"""Consistency tokens: "has everything written to the source before now reached this peer?"

HBase has no answer to that question; Cloud Bigtable's consistency tokens are the model.

:func:`take_token` reads every queue of the peer (normal and recovered, on every replicator, live
or dead) and, for each WAL with bytes past its recorded position, the end of its entries now (the
file's length, less the trailer of a closed WAL). Every edit acknowledged before the call is in
one of those WALs below that offset: a region server adds a WAL to its queues before the first
append (spec §2) and acknowledges an edit after it is in the file. The record is stored, zlib'd
JSON, at ``<hbrep root>/consistency/<token>`` (``ConsistencyTokenStorage``) and
lives ``hbrep.consistency.token.ttl.ms`` (default 24 h); expired records are removed lazily, by
the next :func:`take_token` and by a check that meets one.

:func:`check_token` compares the record with the queues now. A recorded WAL has passed when its
queue's position reached the recorded offset, or when the WAL left the queue (a WAL is dropped
only after it is shipped; a drained recovered queue is deleted whole). A queue claimed by failover
is followed to its new owner: the claimer names it ``<queueId>-<deadServer>`` (spec §3.3), and
each later claim appends another server. With ``tables``, a WAL also passes when no entry of
those tables lies between its position and the recorded offset (the WAL is read there).

Positions move only after the peer acknowledged the edits (docs/architecture.md), so a satisfied token means
the edits are on the peer. A peer removed (or removed and re-added) since the token is an error,
not "satisfied": its queues are gone without having shipped.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import SourceCluster, open_source
from replication.cluster.source_tables import source_table
from replication.config import Config
from replication.errors import HbrepError
from replication.tables.errors import UnknownTable
from replication.tables.names import TableName
from replication.wal.errors import WALError
from replication.wal.locator import WalLocator
from replication.wal.reader import open_wal
from replication.zk.acl import zk_access
from replication.zk.cluster_key import ClusterKey
from replication.zk.consistency_token_storage import ConsistencyTokenStorage
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_snapshot import QueueSnapshot, QueueState
from replication.zk.queue_storage import ReplicationQueueStorage

TTL_KEY = "hbrep.consistency.token.ttl.ms"
DEFAULT_TTL_MS = 24 * 3600 * 1000
FORMAT = 1
# ct-<expiry ms, 13 digits>-<64 random bits>: the expiry in the name lets a sweep list, not read, and
# lets an expired token whose record is already gone still be reported as expired.
TOKEN_RE = re.compile(r"ct-(\d{13})-([0-9a-f]{16})")
MAX_RECORD_BYTES = 900 * 1024  # below ZooKeeper's default jute.maxbuffer (1 MB)


class ConsistencyTokenError(HbrepError):
    """A token that is malformed, unknown, expired, or whose peer is gone (exit 2: 1 means "not yet")."""

    exit_code = 2


@dataclass(frozen=True)
class RecordedWal:
    """One WAL of one queue with entries not yet shipped when the token was taken."""

    replicator: str
    queue_id: str
    wal: str
    target: int  # end of the WAL's entries at token time: shipped once the position reaches it
    position: int  # the queue's position then (for reports)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of the record."""
        return {
            "replicator": self.replicator,
            "queue_id": self.queue_id,
            "wal": self.wal,
            "target": self.target,
            "position": self.position,
        }


@dataclass
class TokenRecord:
    """What a token stands for: the peer, when it was taken, until when it is kept, and its WALs."""

    token: str
    peer_id: str
    peer_czxid: int
    created_ms: int
    expires_ms: int
    tables: list[str]
    queues: int  # queues of the peer seen when the token was taken
    wals: list[RecordedWal] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        """zlib'd JSON (what is stored in the token's znode)."""
        doc = {
            "format": FORMAT,
            "token": self.token,
            "peer_id": self.peer_id,
            "peer_czxid": self.peer_czxid,
            "created_ms": self.created_ms,
            "expires_ms": self.expires_ms,
            "tables": self.tables,
            "queues": self.queues,
            "wals": [[w.replicator, w.queue_id, w.wal, w.target, w.position] for w in self.wals],
        }
        return zlib.compress(json.dumps(doc, separators=(",", ":")).encode("utf-8"))

    @classmethod
    def from_bytes(cls, data: bytes) -> TokenRecord:
        """Parse a stored record; ValueError/KeyError/TypeError/zlib.error on anything malformed."""
        doc = json.loads(zlib.decompress(data))
        if doc.get("format") != FORMAT:
            raise ValueError(f"record format {doc.get('format')!r}")
        wals = [RecordedWal(str(r), str(q), str(w), int(t), int(p)) for r, q, w, t, p in doc["wals"]]
        return cls(
            token=str(doc["token"]),
            peer_id=str(doc["peer_id"]),
            peer_czxid=int(doc["peer_czxid"]),
            created_ms=int(doc["created_ms"]),
            expires_ms=int(doc["expires_ms"]),
            tables=[str(t) for t in doc["tables"]],
            queues=int(doc["queues"]),
            wals=wals,
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``--json`` output."""
        return {
            "token": self.token,
            "peer_id": self.peer_id,
            "created_ms": self.created_ms,
            "expires_ms": self.expires_ms,
            "tables": self.tables,
            "queues": self.queues,
            "pending_wals": len(self.wals),
            "pending_bytes": sum(w.target - w.position for w in self.wals),
        }


@dataclass(frozen=True)
class PendingWal:
    """A recorded WAL not yet shipped up to its recorded offset, where its queue is now."""

    queue: str  # <replicator>/<queueId> now (after failover: the claimer's recovered queue)
    recorded_queue: str  # <replicator>/<queueId> when the token was taken
    wal: str
    position: int
    target: int

    @property
    def bytes(self) -> int:
        """Bytes between the position now and the recorded offset."""
        return max(0, self.target - self.position)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``--json`` output."""
        return {
            "queue": self.queue,
            "recorded_queue": self.recorded_queue,
            "wal": self.wal,
            "position": self.position,
            "target": self.target,
            "bytes": self.bytes,
        }


@dataclass
class ConsistencyResult:
    """A check of one token: consistent once nothing is pending."""

    token: str
    peer_id: str
    created_ms: int
    expires_ms: int
    recorded_wals: int
    pending: list[PendingWal]

    @property
    def consistent(self) -> bool:
        """True when every recorded WAL has been shipped up to its recorded offset."""
        return not self.pending

    def as_dict(self) -> dict[str, Any]:
        """JSON shape for ``--json`` output."""
        return {
            "token": self.token,
            "peer_id": self.peer_id,
            "created_ms": self.created_ms,
            "expires_ms": self.expires_ms,
            "consistent": self.consistent,
            "recorded_wals": self.recorded_wals,
            "pending_bytes": sum(p.bytes for p in self.pending),
            "pending": [p.as_dict() for p in self.pending],
        }


def _now_ms() -> int:
    return int(time.time() * 1000)


def parse_token(token: str) -> int:
    """The token's expiry (ms); ConsistencyTokenError when it is not a token hbrep issues."""
    match = TOKEN_RE.fullmatch(token)
    if match is None:
        raise ConsistencyTokenError(f"malformed consistency token {token!r} (expected ct-<13 digits>-<16 hex digits>)")
    return int(match.group(1))


def _ttl_ms(conf: Config) -> int:
    return conf.get_int(TTL_KEY, DEFAULT_TTL_MS)  # validated positive by Config


def _entries_end(source: SourceCluster, path: str) -> tuple[int, int]:
    """(offset of the first entry, end of the entries) of a WAL now: its length, less a trailer."""
    with open_wal(path, fs=source.fs) as reader:
        return reader.first_entry_offset, reader.entries_end


def _peer_czxid(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> int | None:
    stat = zk.exists(paths.peer(peer_id))
    return None if stat is None else stat.czxid


def _peer_queues(snapshot: QueueSnapshot, peer_id: str) -> list[tuple[QueueState, ReplicationQueueInfo]]:
    out = []
    for state in snapshot.queues():
        info = ReplicationQueueInfo.parse(state.queue_id)
        if info.peer_id == peer_id:
            out.append((state, info))
    return out


def _check_tables(source: SourceCluster, tables: list[str]) -> list[str]:
    names = []
    for table in tables:
        name = TableName.parse(table)
        try:
            source_table(source, str(name))
        except UnknownTable:
            raise ConsistencyTokenError(f"table {name} does not exist on the source cluster") from None
        names.append(str(name))
    return sorted(set(names))


def sweep_expired(zk: KazooClient, paths: ZNodePaths, now_ms: int | None = None) -> int:
    """Delete the records of expired tokens (read from their names); returns how many were deleted."""
    now = _now_ms() if now_ms is None else now_ms
    storage = ConsistencyTokenStorage(zk, paths)
    deleted = 0
    for name in storage.list_tokens():
        match = TOKEN_RE.fullmatch(name)
        if match is not None and int(match.group(1)) <= now and storage.delete(name):
            deleted += 1  # (False: another sweeper got it)
    return deleted


def take_token(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    peer_id: str,
    tables: list[str] | None = None,
    now_ms: int | None = None,
) -> TokenRecord:
    """Record where every queue of ``peer_id`` must be shipped to for everything written until now.

    Stores the record under hbrep's znodes and returns it (``record.token`` is what callers hand to
    :func:`check_token`). ConsistencyTokenError for an unknown peer or table; nothing is stored then.
    """
    source = open_source(zk, key, conf)
    paths = source.paths
    ttl = _ttl_ms(conf)
    with zk_access(paths.replication):
        if not ReplicationPeerStorage(zk, paths).peer_exists(peer_id):
            raise ConsistencyTokenError(f"peer {peer_id!r} does not exist")
        table_names = _check_tables(source, tables or [])
        czxid = _peer_czxid(zk, paths, peer_id)
        snapshot = ReplicationQueueStorage(zk, paths).snapshot()
        created = _now_ms() if now_ms is None else now_ms
        locator = WalLocator(source.fs, source.root)
        queues = _peer_queues(snapshot, peer_id)
        recorded: list[RecordedWal] = []
        for state, info in queues:
            servers = [state.server, *info.dead_region_servers]
            for name, wal_state in sorted(state.wals.items()):
                path = locator.find(name, servers)
                if path is None:
                    continue  # gone since the snapshot: shipped, dropped and cleaned meanwhile
                try:
                    first, end = _entries_end(source, path)
                except WALError as exc:
                    raise ConsistencyTokenError(f"cannot read WAL {path}: {exc}") from None
                if end <= first or wal_state.position >= end:
                    continue  # no entries, or everything already shipped
                recorded.append(RecordedWal(state.server, state.queue_id, name, end, wal_state.position))
        if czxid is None or _peer_czxid(zk, paths, peer_id) != czxid:
            raise ConsistencyTokenError(f"peer {peer_id!r} was removed while the token was being taken")
        sweep_expired(zk, paths, created)
        storage = ConsistencyTokenStorage(zk, paths)
        for _ in range(3):
            expires = created + ttl
            token = f"ct-{expires:013d}-{secrets.token_hex(8)}"
            record = TokenRecord(token, peer_id, czxid, created, expires, table_names, len(queues), recorded)
            data = record.to_bytes()
            if len(data) > MAX_RECORD_BYTES:
                raise ConsistencyTokenError(
                    f"peer {peer_id!r}: {len(recorded)} unshipped WALs make a token record of {len(data)} bytes, "
                    f"over the {MAX_RECORD_BYTES} bytes a znode may hold; let the peer catch up first"
                )
            if storage.create(token, data):
                return record
            # else 64 random bits collided: draw again
    raise ConsistencyTokenError("could not store a new consistency token (name collisions)")


def load_token(zk: KazooClient, paths: ZNodePaths, token: str, now_ms: int | None = None) -> TokenRecord:
    """The stored record of ``token``; ConsistencyTokenError when malformed, unknown or expired
    (an expired record is deleted here)."""
    expires = parse_token(token)
    now = _now_ms() if now_ms is None else now_ms
    storage = ConsistencyTokenStorage(zk, paths)
    path = storage.path(token)
    if expires <= now:
        storage.delete(token)
        raise ConsistencyTokenError(f"consistency token {token} expired at {expires} ms (now {now} ms)")
    data = storage.read(token)
    if data is None:
        raise ConsistencyTokenError(f"unknown consistency token {token} (not issued by this cluster)")
    try:
        record = TokenRecord.from_bytes(data)
    except (ValueError, KeyError, TypeError, zlib.error) as exc:
        raise ConsistencyTokenError(f"consistency token {token}: its record at {path} is corrupt ({exc})") from None
    if record.token != token:
        raise ConsistencyTokenError(f"consistency token {token}: its record at {path} names {record.token}")
    return record


def successor_queue_ids(recorded_server: str, recorded_queue_id: str) -> tuple[str, str]:
    """(exact id after the first claim, prefix of every later claim's id) of a recorded queue.

    A claim of ``<server>/<queueId>`` names it ``<queueId>-<server>`` on the claimer; a claim of that
    appends ``-<claimer>`` (spec §3.3, ``claimQueue``).
    """
    first = f"{recorded_queue_id}-{recorded_server}"
    return first, first + "-"


def _locate(snapshot: QueueSnapshot, wal: RecordedWal) -> tuple[QueueState, int] | None:
    """The queue that holds the recorded WAL now (its own, or a successor after failover) and its position."""
    own = snapshot.replicators.get(wal.replicator, {}).get(wal.queue_id)
    if own is not None and wal.wal in own.wals:
        return own, own.wals[wal.wal].position
    first, prefix = successor_queue_ids(wal.replicator, wal.queue_id)
    for state in snapshot.queues():
        if (state.queue_id == first or state.queue_id.startswith(prefix)) and wal.wal in state.wals:
            return state, state.wals[wal.wal].position
    return None


def _touches_tables(
    source: SourceCluster, locator: WalLocator, state: QueueState, wal: RecordedWal, position: int, tables: set[bytes]
) -> bool:
    """True when an entry of ``tables`` lies in [position, target) of the WAL (or it cannot be read)."""
    info = ReplicationQueueInfo.parse(state.queue_id)
    path = locator.find(wal.wal, [state.server, *info.dead_region_servers])
    if path is None:
        return True  # unreadable here: stay pending rather than claim it passed
    try:
        with open_wal(path, fs=source.fs, start=position) as reader:
            for raw in reader.raw_entries():
                if raw.start >= wal.target:
                    return False
                if bytes(raw.key.table_name) in tables:
                    return True
    except WALError:
        return True
    return False


def check_token(
    zk: KazooClient, key: ClusterKey, conf: Config, token: str, now_ms: int | None = None
) -> ConsistencyResult:
    """What of ``token`` is still unshipped now (``result.consistent`` once nothing is).

    ConsistencyTokenError for a malformed, unknown or expired token, or a peer removed since.
    """
    parse_token(token)  # a malformed token fails before anything is read
    source = open_source(zk, key, conf)
    paths = source.paths
    with zk_access(paths.replication):
        record = load_token(zk, paths, token, now_ms)
        if _peer_czxid(zk, paths, record.peer_id) != record.peer_czxid:
            raise ConsistencyTokenError(
                f"consistency token {token}: peer {record.peer_id!r} was removed after the token was taken"
            )
        snapshot = ReplicationQueueStorage(zk, paths).snapshot()
    tables = {TableName.parse(t).as_bytes() for t in record.tables}
    locator = WalLocator(source.fs, source.root)
    pending: list[PendingWal] = []
    for wal in record.wals:
        found = _locate(snapshot, wal)
        if found is None:
            continue  # dropped from its queue: shipped
        state, position = found
        if position >= wal.target:
            continue
        if tables and not _touches_tables(source, locator, state, wal, position, tables):
            continue
        pending.append(
            PendingWal(
                f"{state.server}/{state.queue_id}", f"{wal.replicator}/{wal.queue_id}", wal.wal, position, wal.target
            )
        )
    return ConsistencyResult(token, record.peer_id, record.created_ms, record.expires_ms, len(record.wals), pending)


def wait_for_token(
    zk: KazooClient,
    key: ClusterKey,
    conf: Config,
    token: str,
    wait_s: float,
    poll_s: float = 1.0,
) -> ConsistencyResult:
    """:func:`check_token` until consistent or ``wait_s`` seconds passed; the last result."""
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        result = check_token(zk, key, conf, token)
        if result.consistent or time.monotonic() >= deadline:
            return result
        time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))
