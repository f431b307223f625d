"""FSHLog locking: a sync waiting while the chore rolls the WAL must not deadlock the server's writers."""

from __future__ import annotations

import threading
import time

from replication.cluster.wal_group import FSHLog
from replication.fs import LocalFileSystem
from replication.wal.model import Cell, CellType, Entry, WALKey


def _wal(tmp_path, pre_log_roll) -> FSHLog:
    return FSHLog(
        LocalFileSystem(),
        str(tmp_path),
        "rs1,16020,1",
        roll_size=1 << 30,
        roll_period_ms=3_600_000,
        pre_log_roll=pre_log_roll,
    )


def _entry(seq: int) -> Entry:
    key = WALKey(b"0" * 32, b"t", seq, 1_700_000_000_000 + seq, {b"f": 1})
    return Entry(key, [Cell(b"row%d" % seq, b"f", b"q", 1, int(CellType.PUT), b"v")])


def test_a_sync_that_waits_while_a_roll_holds_the_append_lock_finishes_and_so_does_the_roll(tmp_path):
    # The interleaving that hung every source region server under a heavy load: the chore's roll holds
    # the append lock (registering the new WAL in the queues) while a writer enters sync(); the roll then
    # needs the sync lock to swap writers. The hook holds the roll there until the sync has taken the
    # sync lock (or already finished), which is exactly that interleaving, every time.
    sync_done = threading.Event()
    in_roll = threading.Event()
    rolling = {"on": False}

    def pre_log_roll(_name: str) -> None:
        if not rolling["on"]:
            return  # the first WAL
        in_roll.set()
        deadline = time.monotonic() + 5
        while not (wal._sync_lock.locked() or sync_done.is_set()) and time.monotonic() < deadline:
            time.sleep(0.001)

    wal = _wal(tmp_path, pre_log_roll)
    wal.roll()
    txid = wal.append(_entry(1))
    rolling["on"] = True
    rolled: list[str] = []
    roller = threading.Thread(target=lambda: rolled.append(wal.roll()), daemon=True)
    roller.start()
    assert in_roll.wait(5)
    syncer = threading.Thread(target=lambda: (wal.sync(txid), sync_done.set()), daemon=True)
    syncer.start()
    syncer.join(10)
    roller.join(10)
    assert sync_done.is_set(), "sync() never returned: it waits for the append lock the roll holds"
    assert rolled, "roll() never returned: it waits for the sync lock the sync holds"
    # and the WAL still works: an append after the roll goes to the new file and syncs
    wal.sync(wal.append(_entry(2)))
    assert wal.current_name == rolled[0] and wal.closed and wal.entries_written == 2
    wal.close()
