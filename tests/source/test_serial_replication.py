"""SerialReplicationChecker: an entry waits until every other server finished what it wrote before the
entry's routing epoch (source/serial_replication.py)."""

from __future__ import annotations

from replication.source.serial_replication import SerialReplicationChecker
from replication.wal.names import wal_file_name
from replication.zk.serial_barriers import Barrier

A = "127.0.0.1,16020,1000"
B = "127.0.0.1,16021,2000"
C = "127.0.0.1,16022,3000"


def wal(server: str, n: int) -> str:
    return wal_file_name(server, n)


def checker(queued: dict[str, int], live=(A, B), barriers=None) -> SerialReplicationChecker:
    barriers = barriers or {
        A: [Barrier(1, wal(A, 1), 100), Barrier(3, wal(A, 2), 500)],
        B: [Barrier(2, wal(B, 1), 100), Barrier(3, wal(B, 1), 900)],
    }
    made = SerialReplicationChecker(barriers, set(live), queued)
    return SerialReplicationChecker.from_dict(made.to_dict())  # through the manifest form


def test_an_entry_before_the_writers_first_barrier_goes():
    assert checker({wal(A, 2): 0}).can_push(wal(B, 1), 50)


def test_the_epoch_is_the_writers_last_barrier_at_or_before_the_entry():
    check = checker({})
    assert check.epoch_of(wal(A, 1), 100) == 1
    assert check.epoch_of(wal(A, 1), 99_999) == 1
    assert check.epoch_of(wal(A, 2), 499) == 1
    assert check.epoch_of(wal(A, 2), 500) == 3
    assert check.epoch_of(wal(B, 1), 900) == 3


def test_an_entry_waits_for_the_other_servers_edits_before_its_epoch():
    # B's entry in epoch 3 while A's queue still stands before A's epoch-3 barrier (wal 2 offset 500)
    check = checker({wal(A, 2): 200, wal(B, 1): 900})
    assert not check.can_push(wal(B, 1), 950)
    assert A in check.reason and "epoch 0.3" in check.reason
    # ... and an older WAL of A still queued holds it back as well
    assert not checker({wal(A, 1): 99_999, wal(A, 2): 600}).can_push(wal(B, 1), 950)


def test_an_entry_goes_once_the_other_servers_stand_at_their_barrier():
    assert checker({wal(A, 2): 500, wal(B, 1): 900}).can_push(wal(B, 1), 950)
    assert checker({wal(A, 2): 800}).can_push(wal(B, 1), 950)
    # A's WALs all shipped (none queued)
    assert checker({wal(B, 1): 900}).can_push(wal(B, 1), 950)


def test_a_live_server_that_has_not_entered_the_epoch_holds_it():
    barriers = {A: [Barrier(1, wal(A, 1), 100)], B: [Barrier(1, wal(B, 1), 100), Barrier(2, wal(B, 1), 400)]}
    check = checker({}, live=(A, B), barriers=barriers)
    assert not check.can_push(wal(B, 1), 500)
    assert "has not entered routing epoch 0.2" in check.reason


def test_a_gone_server_has_finished_once_none_of_its_wals_is_queued():
    barriers = {A: [Barrier(1, wal(A, 1), 100)], B: [Barrier(1, wal(B, 1), 100), Barrier(2, wal(B, 1), 400)]}
    waiting = checker({wal(A, 1): 300}, live=(B,), barriers=barriers)
    assert not waiting.can_push(wal(B, 1), 500)
    assert "gone region server" in waiting.reason
    assert checker({}, live=(B,), barriers=barriers).can_push(wal(B, 1), 500)


def test_a_server_that_started_in_a_later_epoch_has_nothing_before_it():
    barriers = {
        A: [Barrier(1, wal(A, 1), 100), Barrier(2, wal(A, 1), 300)],
        C: [Barrier(2, wal(C, 1), 100)],
    }
    assert checker({wal(C, 1): 100}, live=(A, C), barriers=barriers).can_push(wal(A, 1), 300)
