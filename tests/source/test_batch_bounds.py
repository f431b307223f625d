"""Batch bounds of ReplicationSourceWALReader (spec §4.3): a batch closes when its entry count reaches
``replication.source.nb.capacity`` or its size reaches ``replication.source.size.capacity`` (whichever comes
first, at the entry that reaches it), or when the WAL ends; every batch starts where the one before stopped.
Real WAL files written by hbrep's ProtobufLogWriter, read back from a local root."""

from __future__ import annotations

import os
import uuid

import pytest

from replication.config import Config
from replication.fs import LocalFileSystem
from replication.source.filters import EntryFilter
from replication.source.manifest import QueueTask, WalTask
from replication.source.metrics import SourceMetrics
from replication.source.wal_reader import ReplicationSourceWALReader
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.names import wal_dir, wal_file_name
from replication.wal.reader import open_wal
from replication.wal.writer import ProtobufLogWriter

SERVER = "127.0.0.1,16020,1700000000000"
ENTRIES = 50


def _write_wal(root: str) -> str:
    os.makedirs(wal_dir(root, SERVER))
    path = os.path.join(wal_dir(root, SERVER), wal_file_name(SERVER, 1700000000001))
    writer = ProtobufLogWriter(path)
    for i in range(ENTRIES):
        key = WALKey(b"0" * 32, b"t", i + 1, 1700000000000 + i, scopes={b"f": 1})
        writer.append(Entry(key, [Cell(b"r%04d" % i, b"f", b"q", 1000, int(CellType.PUT), b"v" * 10)]))
    writer.close()
    return path


def _batches(root: str, path: str, **capacities: int):
    wal = WalTask(os.path.basename(path), path, 0, 0)
    queue = QueueTask(SERVER, "1", "1", True, False, [SERVER], [wal])  # a dead server's queue: the WAL is finished
    conf = Config.load(
        env={}, overrides={f"replication.source.{k.replace('_', '.')}": v for k, v in capacities.items()}
    )
    entry_filter = EntryFilter(lambda t, f: True, uuid.uuid4(), uuid.uuid4())
    return list(
        ReplicationSourceWALReader(LocalFileSystem(), root, queue, entry_filter, conf, SourceMetrics()).batches()
    )


def _entry_bounds(path: str) -> list[tuple[int, int]]:
    """(start, end) of every entry of the WAL, as the reader finds them."""
    return [(raw.start, raw.end) for raw in open_wal(path, fs=LocalFileSystem()).raw_entries()]


def _check_contiguous(batches, bounds) -> None:
    seqs = [e.key.log_sequence_number for b in batches for e in b.entries]
    assert seqs == list(range(1, ENTRIES + 1))  # every entry once, in order
    position = bounds[0][0]
    for batch in batches:
        if batch.entries:
            first = batch.entries[0].key.log_sequence_number - 1
            assert bounds[first][0] >= position  # starts where the last batch stopped (after the header)
            assert batch.last_position == bounds[batch.entries[-1].key.log_sequence_number - 1][1] or batch.end_of_file
        position = batch.last_position
    assert batches[-1].end_of_file and [b.end_of_file for b in batches[:-1]] == [False] * (len(batches) - 1)


@pytest.mark.parametrize("nb", [1, 7, 25, 50])
def test_a_batch_closes_at_its_entry_bound(tmp_path, nb):
    path = _write_wal(str(tmp_path))
    batches = _batches(str(tmp_path), path, nb_capacity=nb)
    sizes = [len(b.entries) for b in batches]
    full, rest = divmod(ENTRIES, nb)
    # full batches of exactly nb entries; the WAL's end closes the last one (empty when nb divides ENTRIES)
    assert sizes == [nb] * full + [rest]
    _check_contiguous(batches, _entry_bounds(path))


def test_a_batch_closes_at_the_entry_that_reaches_its_size_bound(tmp_path):
    path = _write_wal(str(tmp_path))
    one = _batches(str(tmp_path), path)[0].entries[0].size  # every entry here has the same size
    capacity = 3 * one + 1  # reached by the 4th entry
    batches = _batches(str(tmp_path), path, size_capacity=capacity)
    sizes = [len(b.entries) for b in batches]
    assert sizes == [4] * 12 + [2]
    for batch in batches[:-1]:
        assert batch.heap_size >= capacity > batch.heap_size - batch.entries[-1].size
    _check_contiguous(batches, _entry_bounds(path))


def test_the_first_bound_reached_closes_the_batch(tmp_path):
    path = _write_wal(str(tmp_path))
    one = _batches(str(tmp_path), path)[0].entries[0].size
    by_size = _batches(str(tmp_path), path, size_capacity=5 * one, nb_capacity=8)  # size first: 5 entries
    assert [len(b.entries) for b in by_size] == [5] * 10 + [0]
    by_count = _batches(str(tmp_path), path, size_capacity=5 * one, nb_capacity=3)  # count first: 3 entries
    assert [len(b.entries) for b in by_count] == [3] * 16 + [2]


def test_a_zero_length_finished_wal_stops_the_queue_unless_eof_autorecovery(tmp_path):
    """``replication.source.eof.autorecovery``: false (HBase's default) keeps the queue stuck on an empty
    finished WAL; true drops it (a last batch at position 0, end of file)."""
    from replication.source.wal_reader import ZeroLengthWAL

    root = str(tmp_path)
    os.makedirs(wal_dir(root, SERVER))
    path = os.path.join(wal_dir(root, SERVER), wal_file_name(SERVER, 1700000000001))
    open(path, "wb").close()
    with pytest.raises(ZeroLengthWAL, match=r"set replication\.source\.eof\.autorecovery=true"):
        _batches(root, path)
    wal = WalTask(os.path.basename(path), path, 0, 0)
    queue = QueueTask(SERVER, "1", "1", True, False, [SERVER], [wal])
    conf = Config.load(env={}, overrides={"replication.source.eof.autorecovery": True})
    entry_filter = EntryFilter(lambda t, f: True, uuid.uuid4(), uuid.uuid4())
    (batch,) = ReplicationSourceWALReader(LocalFileSystem(), root, queue, entry_filter, conf, SourceMetrics()).batches()
    assert batch.end_of_file and batch.last_position == 0 and batch.is_empty
