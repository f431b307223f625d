"""A per-peer ship lease in ZooKeeper, so two cycles never ship the same peer's queues at once.

``<hbrep root>/leases/<peerId>`` (``<parent>/hbrep`` by default) holds ``{"owner", "expires_ms"}``. Airflow's
``max_active_runs`` is not enough (a manual ``hbrep ship --once`` or a second scheduler can overlap),
and an ephemeral lock is not either: snapshot, ship and commit run in separate processes. So the
lease is a persistent znode taken by create, renewed/taken over only by a version-guarded set, and
released by its owner after commit. An owner that died leaves a lease that expires after
``hbrep.ship.lease.ms``; re-acquiring with the same owner (an Airflow retry of the same run) succeeds.

A run that finds the lease held can wait for it instead of giving up (:func:`waiting`, :func:`wait_free`):
it registers an ephemeral sequential znode under ``<hbrep root>/lease-waiters/<peerId>``
holding its owner (as kazoo's lock contenders do), and the holder, which looks for such a waiter
(:func:`successor_waiting`) after each pass, ends its ship window and releases the lease. The hand-off
costs one pass instead of a scheduling gap, and the lease keeps its meaning: one shipper per peer, the
positions committed before the release. A waiter whose process dies goes with its ZooKeeper session.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

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


def is_free_for(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str) -> bool:
    """True when ``owner`` could take the peer's lease now: free, its own, or expired."""
    held = holder(zk, paths, peer_id)
    return held is None or held.get("owner") == owner or held.get("expires_ms", 0) <= _now_ms()


@contextmanager
def waiting(zk: KazooClient, paths: ZNodePaths, peer_ids: list[str], owner: str) -> Iterator[None]:
    """Register ``owner`` as waiting for each peer's lease (ephemeral sequential znodes), removed on exit."""
    created = []
    try:
        for peer_id in peer_ids:
            created.append(
                zk.create(
                    paths.lease_waiters_of(peer_id) + "/w-",
                    owner.encode(),
                    acl=acl_for(zk),
                    ephemeral=True,
                    sequence=True,
                    makepath=True,
                )
            )
        yield
    finally:
        for path in created:
            with suppress(NoNodeError):
                zk.delete(path)


def successor_waiting(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str) -> bool:
    """True when a run other than ``owner`` waits for the peer's lease (see :func:`waiting`)."""
    parent = paths.lease_waiters_of(peer_id)
    try:
        children = zk.get_children(parent)
    except NoNodeError:
        return False
    for child in children:
        try:
            raw, _ = zk.get(f"{parent}/{child}")
        except NoNodeError:
            continue
        if raw.decode(errors="replace") != owner:
            return True
    return False


def wait_free(
    zk: KazooClient,
    paths: ZNodePaths,
    peer_ids: list[str],
    owner: str,
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    stop_requested: Callable[[], bool] = lambda: False,
) -> bool:
    """Block until every peer's lease is free for ``owner`` (see :func:`is_free_for`) or ``timeout_s``
    passed, or ``stop_requested()`` (looked at every second); True if free. Woken by a watch on the lease
    znodes, and re-checked every second (expiry)."""
    deadline = clock() + timeout_s
    while True:
        changed = threading.Event()
        busy = [p for p in peer_ids if not is_free_for(zk, paths, p, owner)]
        if not busy:
            return True
        remaining = deadline - clock()
        if remaining <= 0 or stop_requested():
            return False
        for peer_id in busy:
            if zk.exists(paths.lease(peer_id), watch=lambda _event, done=changed: done.set()) is None:
                changed.set()
        changed.wait(min(remaining, 1.0))


def _parse(raw: bytes) -> dict:
    try:
        value = json.loads(raw.decode())
        return value if isinstance(value, dict) else {}
    except (UnicodeDecodeError, ValueError):
        return {}
