from __future__ import annotations

import pytest

from replication.zk.queue_storage import QueueStorageError, ReplicationQueueStorage

RS = "rs1,16020,1700000000000"


def wal(n: int) -> str:
    return f"rs1%2C16020%2C1700000000000.{1700000000000 + n}"


def test_add_set_get_remove(zkc, paths):
    queues = ReplicationQueueStorage(zkc, paths)
    for n in (3, 1, 2):
        queues.add_wal(RS, "2", wal(n))
    queues.add_wal(RS, "2", wal(1))  # idempotent
    assert zkc.get(paths.wal(RS, "2", wal(1)))[0] == b""  # created empty, as addWAL
    assert queues.get_wals_in_queue(RS, "2") == [wal(1), wal(2), wal(3)]
    assert queues.get_wal_position(RS, "2", wal(1)) == 0
    queues.set_wal_position(RS, "2", wal(1), 254)
    assert zkc.get(paths.wal(RS, "2", wal(1)))[0] == bytes.fromhex("5042554608FE01")
    assert queues.get_wal_position(RS, "2", wal(1)) == 254
    queues.set_wal_position(RS, "2", wal(2), 0)  # not written, as setWALPosition
    assert zkc.get(paths.wal(RS, "2", wal(2)))[1].version == 0
    with pytest.raises(QueueStorageError, match="nope"):
        queues.set_wal_position(RS, "2", "nope", 5)
    assert queues.remove_wals_before(RS, "2", wal(2), inclusive=True) == [wal(1), wal(2)]
    assert queues.get_wals_in_queue(RS, "2") == [wal(3)]
    assert queues.get_all_queues(RS) == ["2"]
    assert queues.get_list_of_replicators() == [RS]
    assert queues.remove_replicator_if_queue_is_empty(RS) is False
    queues.remove_queue(RS, "2")
    assert queues.remove_replicator_if_queue_is_empty(RS) is True
    assert queues.get_list_of_replicators() == []


def test_legacy_positions_are_read(zkc, paths):
    queues = ReplicationQueueStorage(zkc, paths)
    queues.add_wal(RS, "2", wal(1))
    zkc.set(paths.wal(RS, "2", wal(1)), (77).to_bytes(8, "big"))
    assert queues.get_wal_position(RS, "2", wal(1)) == 77


def test_snapshot_and_all_wals(zkc, paths):
    queues = ReplicationQueueStorage(zkc, paths)
    assert queues.get_all_wals() == set()
    expected = {}
    for s in range(5):
        server = f"h{s},16020,1"
        for q in ("1", "2", f"3-d{s},1,1"):
            for n in range(4):
                name = f"h{s}%2C16020%2C1.{100 + n}"
                queues.add_wal(server, q, name)
                queues.set_wal_position(server, q, name, s * 1000 + n)
                expected.setdefault(server, {}).setdefault(q, {})[name] = s * 1000 + n
    zkc.create(paths.lock("h0,16020,1"), b"PBUF\x0a\x01x")  # the claim lock is not a queue
    snap = queues.snapshot()
    assert snap.as_dict() == expected
    queue = snap.replicators["h1,16020,1"]["2"]
    assert list(queue.wals) == [f"h1%2C16020%2C1.{100 + n}" for n in range(4)]
    assert queue.wals["h1%2C16020%2C1.101"].version == 1
    assert snap.rs_cversion == zkc.exists(paths.queues).cversion
    assert queues.get_all_wals() == {w for qs in expected.values() for ws in qs.values() for w in ws}


def test_set_wal_positions_is_one_guarded_multi(zkc, paths):
    queues = ReplicationQueueStorage(zkc, paths)
    for n in (1, 2, 3):
        queues.add_wal(RS, "2-dead,1,1", wal(n))
    seen = {w: zkc.get(paths.wal(RS, "2-dead,1,1", w))[1].version for w in (wal(1), wal(2), wal(3))}
    # a stale version anywhere refuses the whole multi: nothing is written
    refused = queues.set_wal_positions(RS, "2-dead,1,1", {wal(2): (99, seen[wal(2)] + 1)}, {wal(1): seen[wal(1)]})
    assert refused == "BadVersionError"
    assert queues.get_wals_in_queue(RS, "2-dead,1,1") == [wal(1), wal(2), wal(3)]
    assert queues.get_wal_position(RS, "2-dead,1,1", wal(2)) == 0
    # with the versions seen: positions set and finished WALs dropped together
    assert queues.set_wal_positions(RS, "2-dead,1,1", {wal(2): (99, seen[wal(2)])}, {wal(1): seen[wal(1)]}) is None
    assert queues.get_wals_in_queue(RS, "2-dead,1,1") == [wal(2), wal(3)]
    assert queues.get_wal_position(RS, "2-dead,1,1", wal(2)) == 99
    # a drained recovered queue goes with its last WALs
    versions = {w: zkc.get(paths.wal(RS, "2-dead,1,1", w))[1].version for w in (wal(2), wal(3))}
    assert queues.set_wal_positions(RS, "2-dead,1,1", {}, versions, remove_queue=True) is None
    assert queues.get_all_queues(RS) == []
