"""A per-peer ship lease in ZooKeeper, so two cycles never ship the same peer's queues at once.

A recipe in the manner of kazoo's (``kazoo.recipe.lock``): :class:`ShipLease` is one owner's handle on one
peer's lease, ``ShipLease(client, paths, peer_id, owner, ttl_ms)``, with :meth:`~ShipLease.acquire`,
:meth:`~ShipLease.release`, :meth:`~ShipLease.holder`, :meth:`~ShipLease.is_free`, and the waiting side
(:meth:`~ShipLease.waiting`, :meth:`~ShipLease.wait_free`, :meth:`~ShipLease.successor_waiting`);
:func:`waiting_for` and :func:`wait_until_free` do the same for several peers' leases at once.

``<hbrep root>/leases/<peerId>`` (``<parent>/hbrep`` by default) holds ``{"owner", "expires_ms"}``. Airflow's
``max_active_runs`` is not enough (a manual ``hbrep ship --once`` or a second scheduler can overlap),
and an ephemeral lock is not either: snapshot, ship and commit run in separate processes. So the
lease is a persistent znode taken by create, renewed/taken over only by a version-guarded set, and
released by its owner (a version-guarded delete) after commit. An owner that died leaves a lease that
expires after ``hbrep.ship.lease.ms``; re-acquiring with the same owner (an Airflow retry of the same run)
succeeds.

A run that finds the lease held can wait for it instead of giving up (:meth:`ShipLease.waiting`,
:meth:`ShipLease.wait_free`): it registers an ephemeral sequential znode ``w-<seq>`` under
``<hbrep root>/lease-waiters/<peerId>`` holding its owner (as kazoo's lock contenders do), and the holder,
which looks for such a waiter (:meth:`ShipLease.successor_waiting`) after each pass, ends its ship window
and releases the lease. The hand-off costs one pass instead of a scheduling gap, and the lease keeps its
meaning: one shipper per peer, the positions committed before the release. A waiter whose process dies goes
with its ZooKeeper session.

The module functions (:func:`acquire`, :func:`release`, :func:`holder`, :func:`is_free_for`,
:func:`waiting`, :func:`successor_waiting`, :func:`wait_free`) are the same operations spelled
``f(zk, paths, peer_id(s), owner, ...)``; each builds the recipe and calls it.
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
WAITER_PREFIX = "w-"  # an ephemeral sequential child of lease-waiters/<peerId>: one waiting run


def _now_ms() -> int:
    return int(time.time() * 1000)


class ShipLease:
    """``owner``'s handle on the ship lease of one peer (``<hbrep root>/leases/<peerId>``).

    A handle holds no state of its own beyond its arguments: every method reads or writes ZooKeeper, so
    handles built in different processes for the same ``owner`` act as one (snapshot takes the lease,
    commit releases it). ``ttl_ms`` is how long an :meth:`acquire` keeps the lease without renewal.
    """

    def __init__(
        self, client: KazooClient, paths: ZNodePaths, peer_id: str, owner: str, ttl_ms: int = DEFAULT_LEASE_MS
    ):
        self.client = client
        self.paths = paths
        self.peer_id = peer_id
        self.owner = owner
        self.ttl_ms = ttl_ms

    @property
    def path(self) -> str:
        """``<hbrep root>/leases/<peerId>``: the lease znode."""
        return self.paths.lease(self.peer_id)

    @property
    def waiters_path(self) -> str:
        """``<hbrep root>/lease-waiters/<peerId>``: the parent of the waiting runs' ephemeral znodes."""
        return self.paths.lease_waiters_of(self.peer_id)

    def acquire(self) -> bool:
        """Take the lease for ``owner`` until now + ``ttl_ms``; True if ``owner`` holds it now.

        Promises: True when the lease was free (created, creator-only under ``--zk-auth``), already
        ``owner``'s (renewed), or another owner's but expired (taken over); the renewal and the take-over
        are a set guarded by the version just read, so of two runs taking over the same expired lease one
        wins. False, changing nothing, while another owner holds it unexpired or wins such a race. Never
        blocks."""
        zk = self.client
        data = json.dumps({"owner": self.owner, "expires_ms": _now_ms() + self.ttl_ms}).encode()
        try:
            zk.create(self.path, data, acl=acl_for(zk), makepath=True)  # creator-only under --zk-auth
            return True
        except NodeExistsError:
            pass
        try:
            raw, stat = zk.get(self.path)
        except NoNodeError:
            return self.acquire()  # released between the create and the read: try again
        held = _parse(raw)
        if held.get("owner") != self.owner and held.get("expires_ms", 0) > _now_ms():
            return False
        try:
            zk.set(self.path, data, version=stat.version)
        except (BadVersionError, NoNodeError):
            return False
        return True

    def release(self) -> bool:
        """Drop the lease if ``owner`` holds it (expired or not); True if it was released.

        Promises: only ``owner``'s lease is deleted, by a delete guarded by the version just read (a lease
        taken over meanwhile stays). False when the lease is free or another owner's."""
        zk = self.client
        try:
            raw, stat = zk.get(self.path)
        except NoNodeError:
            return False
        if _parse(raw).get("owner") != self.owner:
            return False
        try:
            zk.delete(self.path, version=stat.version)
        except (BadVersionError, NoNodeError):
            return False
        return True

    def holder(self) -> dict | None:
        """``{"owner", "expires_ms"}`` of whoever holds the lease (expired or not); None when free. A lease
        znode that is not such JSON reads as ``{}``."""
        try:
            raw, _ = self.client.get(self.path)
        except NoNodeError:
            return None
        return _parse(raw)

    def is_free(self) -> bool:
        """True when :meth:`acquire` would take the lease now: free, ``owner``'s own, or expired."""
        held = self.holder()
        return held is None or held.get("owner") == self.owner or held.get("expires_ms", 0) <= _now_ms()

    def successor_waiting(self) -> bool:
        """True when a run other than ``owner`` waits for this lease (see :meth:`waiting`)."""
        zk = self.client
        parent = self.waiters_path
        try:
            children = zk.get_children(parent)
        except NoNodeError:
            return False
        for child in children:
            try:
                raw, _ = zk.get(f"{parent}/{child}")
            except NoNodeError:
                continue
            if raw.decode(errors="replace") != self.owner:
                return True
        return False

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Register ``owner`` as waiting for this lease while the block runs (see :func:`waiting_for`)."""
        with waiting_for([self]):
            yield

    def wait_free(
        self,
        timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
        stop_requested: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Block until :meth:`is_free` (see :func:`wait_until_free`); True if free. Takes nothing."""
        return wait_until_free([self], timeout_s, clock, stop_requested)

    def _register_waiter(self) -> str:
        """Create ``owner``'s ephemeral sequential waiter znode; its path."""
        zk = self.client
        return zk.create(
            self.waiters_path + "/" + WAITER_PREFIX,
            self.owner.encode(),
            acl=acl_for(zk),
            ephemeral=True,
            sequence=True,
            makepath=True,
        )

    def __repr__(self) -> str:
        return f"ShipLease(peer_id={self.peer_id!r}, owner={self.owner!r})"


@contextmanager
def waiting_for(leases: list[ShipLease]) -> Iterator[None]:
    """Register each lease's owner as waiting for it (one ephemeral sequential znode per lease, created in
    order) while the block runs; every znode created is deleted on exit, however the block ends (and goes
    with the session if the process dies first)."""
    created = []
    try:
        for lease in leases:
            created.append(lease._register_waiter())
        yield
    finally:
        for lease, path in zip(leases, created, strict=False):
            with suppress(NoNodeError):
                lease.client.delete(path)


def wait_until_free(
    leases: list[ShipLease],
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    stop_requested: Callable[[], bool] = lambda: False,
) -> bool:
    """Block until every lease :meth:`~ShipLease.is_free` or ``timeout_s`` passed, or ``stop_requested()``
    (looked at every second); True if free. Woken by a watch on the busy lease znodes, and re-checked every
    second (expiry). Takes no lease: the caller acquires after."""
    deadline = clock() + timeout_s
    while True:
        changed = threading.Event()
        busy = [lease for lease in leases if not lease.is_free()]
        if not busy:
            return True
        remaining = deadline - clock()
        if remaining <= 0 or stop_requested():
            return False
        for lease in busy:
            if lease.client.exists(lease.path, watch=lambda _event, done=changed: done.set()) is None:
                changed.set()
        changed.wait(min(remaining, 1.0))


def acquire(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str, ttl_ms: int = DEFAULT_LEASE_MS) -> bool:
    """:meth:`ShipLease.acquire`: take the peer's lease for ``owner``; True if held now."""
    return ShipLease(zk, paths, peer_id, owner, ttl_ms).acquire()


def release(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str) -> bool:
    """:meth:`ShipLease.release`: drop the lease if ``owner`` holds it; True if it was released."""
    return ShipLease(zk, paths, peer_id, owner).release()


def holder(zk: KazooClient, paths: ZNodePaths, peer_id: str) -> dict | None:
    """:meth:`ShipLease.holder`: who holds the peer's lease and until when (None when free)."""
    return ShipLease(zk, paths, peer_id, owner="").holder()


def is_free_for(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str) -> bool:
    """:meth:`ShipLease.is_free`: True when ``owner`` could take the peer's lease now."""
    return ShipLease(zk, paths, peer_id, owner).is_free()


@contextmanager
def waiting(zk: KazooClient, paths: ZNodePaths, peer_ids: list[str], owner: str) -> Iterator[None]:
    """:func:`waiting_for` the leases of ``peer_ids``: ``owner`` registered as waiting while the block runs."""
    with waiting_for([ShipLease(zk, paths, p, owner) for p in peer_ids]):
        yield


def successor_waiting(zk: KazooClient, paths: ZNodePaths, peer_id: str, owner: str) -> bool:
    """:meth:`ShipLease.successor_waiting`: True when a run other than ``owner`` waits for the lease."""
    return ShipLease(zk, paths, peer_id, owner).successor_waiting()


def wait_free(
    zk: KazooClient,
    paths: ZNodePaths,
    peer_ids: list[str],
    owner: str,
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    stop_requested: Callable[[], bool] = lambda: False,
) -> bool:
    """:func:`wait_until_free` for the leases of ``peer_ids``: True once every one is free for ``owner``."""
    return wait_until_free([ShipLease(zk, paths, p, owner) for p in peer_ids], timeout_s, clock, stop_requested)


def _parse(raw: bytes) -> dict:
    try:
        value = json.loads(raw.decode())
        return value if isinstance(value, dict) else {}
    except (UnicodeDecodeError, ValueError):
        return {}
