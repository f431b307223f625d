"""Replication barriers for serial peers, in hbrep's own znodes: the routing epoch and each server's barriers.

HBase records a barrier (the region's open sequence id, ``rep_barrier`` in ``hbase:meta``) each time a
region opens, so that the edits of a region's later opening, on another server, wait until the
earlier opening's edits are pushed (SerialReplicationChecker). hbrep has no meta and no region moves:
every server holds a region of every table it is written to, and rows move between those regions
when the set of live servers changes (region_routing.py). So hbrep's barrier is taken per *routing
epoch*, by every server at once:

- the routing epoch is the pair (cversion of the ``rs`` znode, version of ``<hbrep root>/serial/epoch``),
  one integer ``cversion << 32 | version``. The first part changes whenever a server joins or leaves, and
  a client reads it together with the list it routes by, so the epoch names the membership the client
  routed with. The second is bumped by a client that re-routes the rows of a server it found dead before
  ZooKeeper did (the list is the same, the routing is not).
- ``<hbrep root>/serial/barriers/<server>``: JSON list of that server's barriers, one per epoch it
  took part in: ``{"epoch", "wal", "offset", "regions": {encoded region: next sequence id}}``. The
  WAL position says where in the server's WALs the epoch starts; ``regions`` are the per-region open
  sequence ids, HBase's barriers proper.

A server records a barrier under its WAL's append lock, so every edit it writes after the barrier
lies after that WAL position. The checker (source/serial_replication.py) reads them from a snapshot.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.wal.names import is_wal_name, server_of_wal
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.layout import ZNodePaths

SERIAL = "serial"


@dataclass(frozen=True)
class Barrier:
    """Where one server's WALs enter one routing epoch."""

    epoch: int
    wal: str
    offset: int
    regions: dict[str, int] = field(default_factory=dict)


def epoch_path(paths: ZNodePaths) -> str:
    """``<hbrep root>/serial/epoch``."""
    return f"{paths.hbrep_root}/{SERIAL}/epoch"


def barriers_path(paths: ZNodePaths, server: str | None = None) -> str:
    """``<hbrep root>/serial/barriers`` or one server's node under it."""
    base = f"{paths.hbrep_root}/{SERIAL}/barriers"
    return base if server is None else f"{base}/{server}"


def routing_epoch(rs_cversion: int, bumps: int) -> int:
    """The routing epoch of a membership (``rs`` cversion) and a number of client bumps, as one integer."""
    return (rs_cversion << 32) | bumps


def describe_epoch(epoch: int) -> str:
    """``<rs cversion>.<bumps>``: an epoch as people read it."""
    return f"{epoch >> 32}.{epoch & 0xFFFFFFFF}"


def current_bumps(zk: KazooClient, paths: ZNodePaths) -> int:
    """How many times clients bumped the epoch (the epoch znode's version; 0 when it does not exist)."""
    stat = zk.exists(epoch_path(paths))
    return stat.version if stat is not None else 0


def read_routing_epoch(zk: KazooClient, paths: ZNodePaths) -> int:
    """The routing epoch now (0 before the ``rs`` znode exists)."""
    stat = zk.exists(paths.rs)
    return routing_epoch(stat.cversion if stat is not None else 0, current_bumps(zk, paths))


def bump_epoch(zk: KazooClient, paths: ZNodePaths) -> int:
    """Start a new routing epoch for the same membership; return the new number of bumps."""
    path = epoch_path(paths)
    with contextlib.suppress(NodeExistsError):
        zk.create(path, b"", makepath=True)
    return zk.set(path, b"").version


def record_barrier(zk: KazooClient, paths: ZNodePaths, server: str, barrier: Barrier) -> None:
    """Append ``barrier`` to the server's list (only its own process writes it)."""
    path = barriers_path(paths, server)
    try:
        data, _ = zk.get(path)
        items = json.loads(data or b"[]")
    except NoNodeError:
        zk.create(path, json.dumps([asdict(barrier)]).encode(), makepath=True)
        return
    items.append(asdict(barrier))
    zk.set(path, json.dumps(items).encode())


def read_barriers(zk: KazooClient, paths: ZNodePaths) -> dict[str, list[Barrier]]:
    """Every server's barriers, by server, each list in epoch order."""
    base = barriers_path(paths)
    try:
        servers = zk.get_children(base)
    except NoNodeError:
        return {}
    out: dict[str, list[Barrier]] = {}
    for server in servers:
        try:
            data, _ = zk.get(f"{base}/{server}")
        except NoNodeError:
            continue
        out[server] = sorted((Barrier(**item) for item in json.loads(data or b"[]")), key=lambda b: b.epoch)
    return out


def forget_gone_servers(zk: KazooClient, paths: ZNodePaths, queued_wals: set[str]) -> list[str]:
    """Drop the barriers of servers that are no longer live and have no WAL left in any queue: nothing
    of theirs can wait or be waited for any more. Returns the servers dropped."""
    try:
        servers = zk.get_children(barriers_path(paths))
        live = set(LiveServerStorage(zk, paths).live())
    except NoNodeError:
        return []
    holding = {server_of_wal(w) for w in queued_wals if is_wal_name(w)}
    dropped = []
    for server in servers:
        if server in live or server in holding:
            continue
        with contextlib.suppress(NoNodeError):
            zk.delete(barriers_path(paths, server))
            dropped.append(server)
    return dropped
