"""The serial-peer barriers hbrep keeps per server, on a real ZooKeeper: which servers' barriers the cleaner
may forget (gone from ``rs`` and none of their WALs queued) and which it must keep."""

from __future__ import annotations

from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.serial_barriers import Barrier, forget_gone_servers, read_barriers, record_barrier

LIVE = "host1,16020,1700000000000"
GONE_WITH_WALS = "host2,16020,1700000000000"
GONE = "host3,16020,1700000000000"


def _wal(server: str) -> str:
    return f"{server.replace(',', '%2C')}.1700000000123"


def test_only_the_barriers_of_gone_servers_with_no_queued_wal_are_forgotten(zkc, paths):
    LiveServerStorage(zkc, paths).register(LIVE)
    for server in (LIVE, GONE_WITH_WALS, GONE):
        record_barrier(zkc, paths, server, Barrier(epoch=1, wal=_wal(server), offset=0))
    assert forget_gone_servers(zkc, paths, {_wal(GONE_WITH_WALS), "not-a-wal-name"}) == [GONE]
    assert sorted(read_barriers(zkc, paths)) == [LIVE, GONE_WITH_WALS]
    assert forget_gone_servers(zkc, paths, set()) == [GONE_WITH_WALS]
    assert sorted(read_barriers(zkc, paths)) == [LIVE]


def test_nothing_is_forgotten_before_any_barrier_or_live_server_exists(zkc, paths):
    assert forget_gone_servers(zkc, paths, set()) == []
