"""Issue 23: a WAL archived to oldWALs/ between the reader's lookup and its open is read at its new place
(HBase's WALEntryStream opens the archived path; the guide: no error mid-read), not failed for a cycle.

The move is made at the exact moment (right after the lookup said the file is in WALs/) by a file system
that does the real rename on the real local file system, as FSHLog.archive does, before answering.
"""

from __future__ import annotations

import os
import uuid

import pytest

from replication.config import Config
from replication.fs import LocalFileSystem
from replication.source.filters import EntryFilter
from replication.source.manifest import QueueTask, WalTask
from replication.source.metrics import SourceMetrics
from replication.source.wal_reader import ReplicationSourceWALReader, WALMissing
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.names import old_wal_dir, wal_dir, wal_file_name
from replication.wal.writer import ProtobufLogWriter

SERVER = "127.0.0.1,16020,1700000000000"


class ArchivesOnOpen(LocalFileSystem):
    """The local file system, archiving (renaming) ``path`` into ``targets`` in turn when it is first
    opened: the race of a region server archiving the WAL just after the reader looked it up."""

    def __init__(self, path: str, targets: list[str | None]):
        super().__init__()
        self.path, self.targets = path, list(targets)

    def readable_length(self, path: str) -> int:
        if path == self.path and self.targets:
            target = self.targets.pop(0)
            if target is None:
                os.remove(path)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.rename(path, target)
                self.path = target
        return super().readable_length(path)


def _write_wal(root: str, entries: int) -> str:
    os.makedirs(wal_dir(root, SERVER))
    path = os.path.join(wal_dir(root, SERVER), wal_file_name(SERVER, 1700000000001))
    writer = ProtobufLogWriter(path)
    for i in range(entries):
        key = WALKey(b"0" * 32, b"t", i + 1, 1700000000000 + i, scopes={b"f": 1})
        writer.append(Entry(key, [Cell(b"r%04d" % i, b"f", b"q", 1000, int(CellType.PUT), b"v")]))
    writer.close()
    return path


def _read(fs, root: str, path: str):
    wal = WalTask(os.path.basename(path), path, 0, 0)
    queue = QueueTask(SERVER, "1", "1", True, False, [SERVER], [wal])  # a dead server's recovered queue
    reader = ReplicationSourceWALReader(
        fs,
        root,
        queue,
        EntryFilter(lambda t, f: True, uuid.uuid4(), uuid.uuid4()),
        Config.load(env={}),
        SourceMetrics(),
    )
    return list(reader.batches())


def test_a_wal_archived_between_lookup_and_open_is_read_from_oldwals(tmp_path):
    root = str(tmp_path)
    path = _write_wal(root, 50)
    archived = os.path.join(old_wal_dir(root), os.path.basename(path))
    fs = ArchivesOnOpen(path, [archived])
    batches = _read(fs, root, path)
    assert not os.path.exists(path) and os.path.exists(archived)  # the move did happen mid-read
    sequence_ids = [entry.key.log_sequence_number for batch in batches for entry in batch.entries]
    assert sequence_ids == list(range(1, 51))  # every entry, once, in order
    assert batches[-1].end_of_file  # the WAL is finished (its trailer is past the last entry)


def test_moved_twice_is_followed_and_gone_is_one_clear_error(tmp_path):
    root = str(tmp_path)
    path = _write_wal(root, 5)
    per_server = os.path.join(old_wal_dir(root), SERVER, os.path.basename(path))
    flat = os.path.join(old_wal_dir(root), os.path.basename(path))
    batches = _read(ArchivesOnOpen(path, [flat, per_server]), root, path)
    assert sum(len(b.entries) for b in batches) == 5 and os.path.exists(per_server)
    with pytest.raises(WALMissing, match="moved while being opened and is in none of"):
        _read(ArchivesOnOpen(per_server, [None]), root, per_server)
