"""The ship lease recipe (zk/lease.py) on a real ZooKeeper: what each method of ShipLease promises."""

from __future__ import annotations

import json
import threading
import time

from replication.zk import lease
from replication.zk.lease import ShipLease, wait_until_free, waiting_for


def _stored(zkc, paths, peer_id="1") -> dict:
    raw, _ = zkc.get(paths.lease(peer_id))
    return json.loads(raw)


def test_acquire_creates_the_lease_znode_with_owner_and_expiry_and_renews_for_the_same_owner(zkc, paths):
    a = ShipLease(zkc, paths, "1", "run-a", ttl_ms=60_000)
    before = int(time.time() * 1000)
    assert a.acquire()
    assert a.path == f"{paths.hbrep_root}/leases/1"
    first = _stored(zkc, paths)
    assert first["owner"] == "run-a" and first["expires_ms"] >= before + 60_000
    _, stat = zkc.get(a.path)
    assert a.acquire()  # renewed: a version-guarded set, same znode
    _, renewed = zkc.get(a.path)
    assert renewed.version == stat.version + 1 and renewed.czxid == stat.czxid
    assert a.holder() == _stored(zkc, paths) and a.is_free()


def test_a_held_lease_is_refused_to_another_owner_until_it_expires(zkc, paths):
    assert ShipLease(zkc, paths, "1", "run-a", ttl_ms=60_000).acquire()
    b = ShipLease(zkc, paths, "1", "run-b", ttl_ms=60_000)
    assert not b.is_free() and not b.acquire()
    assert _stored(zkc, paths)["owner"] == "run-a"
    assert not b.release()  # not b's: stays
    assert zkc.exists(paths.lease("1"))
    zkc.set(paths.lease("1"), json.dumps({"owner": "run-a", "expires_ms": 1}).encode())  # expired
    assert b.is_free() and b.acquire()
    assert _stored(zkc, paths)["owner"] == "run-b"


def test_release_deletes_only_the_owners_lease_and_a_free_lease_reads_none(zkc, paths):
    a = ShipLease(zkc, paths, "1", "run-a")
    assert not a.release() and a.holder() is None and a.is_free()
    assert a.acquire() and a.release()
    assert zkc.exists(paths.lease("1")) is None and a.holder() is None


def test_a_lease_znode_that_is_not_json_reads_as_an_empty_holder_and_is_free(zkc, paths):
    zkc.create(paths.lease("1"), b"garbage", makepath=True)
    a = ShipLease(zkc, paths, "1", "run-a")
    assert a.holder() == {} and a.is_free() and a.acquire()


def test_waiting_registers_ephemeral_sequential_waiters_seen_by_the_holder_and_removes_them(zkc, paths):
    holder = ShipLease(zkc, paths, "1", "run-a")
    assert holder.acquire()
    assert not holder.successor_waiting()
    with ShipLease(zkc, paths, "1", "run-a").waiting():
        assert not holder.successor_waiting()  # its own registration is no successor
    with waiting_for([ShipLease(zkc, paths, "1", "run-b"), ShipLease(zkc, paths, "2", "run-b")]):
        children = zkc.get_children(paths.lease_waiters_of("1"))
        assert len(children) == 1 and children[0].startswith("w-")
        raw, stat = zkc.get(f"{paths.lease_waiters_of('1')}/{children[0]}")
        assert raw == b"run-b" and stat.ephemeralOwner != 0
        assert zkc.get_children(paths.lease_waiters_of("2"))
        assert holder.successor_waiting()
    assert zkc.get_children(paths.lease_waiters_of("1")) == []
    assert not holder.successor_waiting()


def test_wait_free_returns_when_the_holder_releases_or_false_after_the_timeout(zkc, paths):
    holder = ShipLease(zkc, paths, "1", "run-a", ttl_ms=60_000)
    waiter = ShipLease(zkc, paths, "1", "run-b")
    assert holder.acquire()
    assert not waiter.wait_free(timeout_s=0.2)
    threading.Timer(0.3, holder.release).start()
    started = time.monotonic()
    assert wait_until_free([waiter, ShipLease(zkc, paths, "2", "run-b")], timeout_s=10)
    assert time.monotonic() - started < 5
    assert holder.acquire()
    started = time.monotonic()
    assert not waiter.wait_free(timeout_s=10, stop_requested=lambda: True)  # a stop ends the wait at once
    assert time.monotonic() - started < 5


def test_the_module_functions_are_the_recipe(zkc, paths):
    assert lease.acquire(zkc, paths, "1", "run-a", 60_000)
    assert lease.holder(zkc, paths, "1")["owner"] == "run-a"
    assert not lease.is_free_for(zkc, paths, "1", "run-b")
    with lease.waiting(zkc, paths, ["1"], "run-b"):
        assert lease.successor_waiting(zkc, paths, "1", "run-a")
    assert not lease.wait_free(zkc, paths, ["1"], "run-b", timeout_s=0.1)
    assert not lease.release(zkc, paths, "1", "run-b") and lease.release(zkc, paths, "1", "run-a")
