"""Routing epochs on real region-server processes: a write routed by an older membership than a server's is
refused (HBase's NotServingRegionException), so every edit a server holds after its barrier for an epoch
was routed to it in that epoch; that is what lets a serial peer's checker stop waiting at the barrier."""

from __future__ import annotations

import threading
import time

import pytest
from kazoo.client import KazooClient

from replication.cluster.errors import StaleRoutingEpoch
from replication.cluster.region_routing import owner_of
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.model import Cell, CellType
from replication.wal.reader import open_wal
from replication.zk.serial_barriers import Barrier, bump_epoch, read_barriers
from replication.zk.serial_barriers import describe_epoch as epoch_name
from tests.cluster.helpers import wal_entries, wal_files

pytestmark = pytest.mark.slow

ROWS = [b"row-%02d" % i for i in range(40)]


def _table(embedded, name: str) -> None:
    TableRegistry(None, embedded.root).create(TableDescriptor.of(name, ColumnFamilyDescriptor("f", scope=1), "local"))


def _entered(zk: KazooClient, embedded, servers: list[str], bumps: int) -> dict[str, Barrier]:
    """Each server's barrier for the epoch with ``bumps`` client bumps, once all have recorded it."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        barriers = read_barriers(zk, embedded.paths)
        found = {s: next((b for b in barriers.get(s, []) if b.epoch & 0xFFFFFFFF == bumps), None) for s in servers}
        if all(found.values()):
            return found  # type: ignore[return-value]
        time.sleep(0.05)
    raise AssertionError(f"not every server entered the bumped epoch: {read_barriers(zk, embedded.paths)}")


def test_a_write_routed_in_an_older_epoch_is_refused_and_a_batch_routes_it_again(embedded, zk_abs):
    _table(embedded, "t1")
    with embedded.client() as stale, embedded.client() as other:
        servers = stale.live_servers()  # the routing this client writes by from now on
        other.put("t1", b"before", b"f", b"q", b"v", ts=1)
        bumps = bump_epoch(zk_abs, embedded.paths)  # another client re-routed: a new epoch, same servers
        entered = _entered(zk_abs, embedded, servers, bumps)

        target = owner_of(b"refused", servers)
        with pytest.raises(StaleRoutingEpoch) as refused:
            stale.mutate_on(target, "t1", [Cell(b"refused", b"f", b"q", 2, CellType.PUT, b"x")])
        message = str(refused.value)
        assert "\n" not in message and target in message and epoch_name(entered[target].epoch) in message
        assert not any(c.row == b"refused" for e in wal_entries(embedded.root, target) for c in e.cells)

        # the same client's batch reads the routing again and the write lands, after the new barrier
        assert stale.batch("t1", [Cell(b"refused", b"f", b"q", 2, CellType.PUT, b"x")]) == 1
        landed = [(p, item) for p in wal_files(embedded.root, target) for item in open_wal(p)
                  if any(c.row == b"refused" for c in item.entry.cells)]  # fmt: skip
        assert len(landed) == 1
        path, item = landed[0]
        barrier = entered[target]
        assert (path.rsplit("/", 1)[-1], item.start) >= (barrier.wal, barrier.offset)


def test_under_writes_while_a_server_joins_every_edit_after_a_barrier_was_routed_in_its_epoch(embedded, zk_abs):
    """The invariant the serial checker relies on, on a live join: each server's edits after its barrier
    for the join's epoch belong to it under the new membership (before the fix, a write routed just before
    the join could land after the barrier, on the row's old server)."""
    _table(embedded, "t2")
    stop, errors = threading.Event(), []

    def load() -> None:
        n = 0
        with embedded.client() as client:
            while not stop.is_set():
                try:
                    client.batch("t2", [Cell(r, b"f", b"q", 1_000 + n, CellType.PUT, b"%06d" % n) for r in ROWS])
                except Exception as exc:  # reported by the assertion below
                    errors.append(exc)
                    return
                n += 1

    before = sorted(embedded.servers)
    writer = threading.Thread(target=load, daemon=True)
    writer.start()
    time.sleep(0.5)
    joined = embedded.start_region_server()
    time.sleep(1.0)
    stop.set()
    writer.join(30)
    assert not errors, errors
    after = sorted([*before, joined])
    first = read_barriers(zk_abs, embedded.paths)[joined][0].epoch  # the epoch the join started
    moved = 0
    for server in before:
        barrier = next(b for b in read_barriers(zk_abs, embedded.paths)[server] if b.epoch >= first)
        for path in wal_files(embedded.root, server):
            for item in open_wal(path):
                if (path.rsplit("/", 1)[-1], item.start) < (barrier.wal, barrier.offset):
                    continue
                for cell in item.entry.cells:
                    assert owner_of(cell.row, after) == server, (
                        f"{cell.row!r} (version {cell.value!r}) on {server} after its barrier for epoch "
                        f"{epoch_name(barrier.epoch)}, but routed to {owner_of(cell.row, after)} in it"
                    )
        moved += sum(owner_of(r, before) == server and owner_of(r, after) != server for r in ROWS)
    assert moved, "no row moved with the join: the test proves nothing"
    assert any(wal_entries(embedded.root, joined)), "the joined server took no writes"
