"""A per-peer ship lease in ZooKeeper, so two cycles never ship the same peer's queues at once.

``<hbrep root>/leases/<peerId>`` (``<parent>/hbrep`` by default) holds ``{"owner", "expires_ms"}``. Airflow's
``max_active_runs`` is not enough (a manual ``hbrep ship --once`` or a second scheduler can overlap),
and an ephemeral lock is not either: snapshot, ship and commit run in separate processes. So the
lease is a persistent znode taken by create, renewed/taken over only by a version-guarded set, and
released by its owner after commit. An owner that died leaves a lease that expires after
``hbrep.ship.lease.ms``; re-acquiring with the same owner (an Airflow retry of the same run) succeeds.
"""

from __future__ import annotations

import json
import time

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from replication.zk.acl import acl_for
from replication.zk.layout import ZNodePaths

DEFAULT_LEASE_MS = 15 * 60 * 1000


def _now_ms() -> int:
    return int(time.time() * 1000)


def acquire(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str, ttl_ms: int = DEFAULT_LEASE_MS) -> bool:
    """Take the peer's lease for ``owner``; True if held now (new, renewed, or taken over when expired)."""
    path = paths.lease(peer_id)
    data = json.dumps({"owner": owner, "expires_ms": _now_ms() + ttl_ms}).encode()
    try:
        zk.create(path, data, acl=acl_for(zk), makepath=True)  # creator-only under --zk-auth
        return True
    except NodeExistsError:
        pass
    try:
        raw, stat = zk.get(path)
    except NoNodeError:
        return acquire(zk, paths, peer_id, owner, ttl_ms)
    holder = _parse(raw)
    if holder.get("owner") != owner and holder.get("expires_ms", 0) > _now_ms():
        return False
    try:
        zk.set(path, data, version=stat.version)
    except (BadVersionError, NoNodeError):
        return False
    return True


def release(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str) -> bool:
    """Drop the lease if ``owner`` holds it; True if it was released."""
    path = paths.lease(peer_id)
    try:
        raw, stat = zk.get(path)
    except NoNodeError:
        return False
    if _parse(raw).get("owner") != owner:
        return False
    try:
        zk.delete(path, version=stat.version)
    except (BadVersionError, NoNodeError):
        return False
    return True


def holder(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> dict | None:
    """Who holds the peer's lease and until when (None when free)."""
    try:
        raw, _ = zk.get(paths.lease(peer_id))
    except NoNodeError:
        return None
    return _parse(raw)


def _parse(raw: bytes) -> dict:
    try:
        value = json.loads(raw.decode())
        return value if isinstance(value, dict) else {}
    except (UnicodeDecodeError, ValueError):
        return {}
