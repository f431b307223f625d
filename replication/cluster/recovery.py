"""Recovering a dead region server's edits: replay its WALs into table files, then archive the WALs.

Like HBase's log splitting (``WALSplitter`` + region open replaying recovered edits), but written
straight to table files: for every region found in the dead server's WALs, the edits with a sequence id
above the region's highest flushed sequence (the largest table-file name in its directory) are written
as one table file named after their highest sequence id. The WAL files are then moved to ``oldWALs/``
(untouched: replication keeps reading them there, ``find_wal`` looks in oldWALs).

Safe to call twice and concurrently: a second run finds either no WAL left or only edits already in a
table file (skipped by sequence id; an identical file that already exists counts as written), and the
archive is a rename that tolerates a file another caller moved first.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field

from replication.fs import FileSystem, FileSystemError
from replication.tables.descriptors import TableRegistry
from replication.tables.errors import UnknownTable
from replication.tables.table_files import TableFileExists, list_table_files, write_cells
from replication.wal.model import Cell
from replication.wal.names import old_wal_dir, wal_dir, wal_start_timestamp
from replication.wal.reader import open_wal

LOG = logging.getLogger(__name__)
SPLITTING_EXT = "-splitting"


@dataclass
class RecoveryResult:
    """What a recovery did: WALs read and archived, edits replayed, table files written."""

    server: str
    wals: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    entries_read: int = 0
    cells_replayed: int = 0
    cells_already_flushed: int = 0
    files_written: list[str] = field(default_factory=list)
    truncated_tails: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def _flushed_sequence(fs: FileSystem, root: str, table: str, region: str, cache: dict) -> int:
    if table not in cache:
        highest: dict[str, int] = defaultdict(int)
        for tf in list_table_files(fs, root, table):
            highest[tf.encoded_region] = max(highest[tf.encoded_region], tf.max_sequence)
        cache[table] = highest
    return cache[table].get(region, 0)


def recover_dead_server(fs: FileSystem, root: str, server_name: str) -> RecoveryResult:
    """Replay ``server_name``'s un-flushed WAL edits into table files and archive its WALs to ``oldWALs/``.

    Edits of tables that no longer exist are skipped (logged). A WAL's torn tail (the crash) is not an
    error: every whole entry before it is replayed. Returns what was done.
    """
    result = RecoveryResult(server_name)
    dirs = [wal_dir(root, server_name), wal_dir(root, server_name) + SPLITTING_EXT]
    wal_paths: list[str] = []
    for directory in dirs:
        wal_paths += [s.path for s in fs.list(directory) if not s.is_dir and not s.name.startswith(".")]
    wal_paths.sort(key=lambda p: (wal_start_timestamp(p.rsplit("/", 1)[-1]), p))
    # (table, region) -> [(cell, seq)]
    edits: dict[tuple[str, str], list[tuple[Cell, int]]] = defaultdict(list)
    flushed_cache: dict = {}
    registry = TableRegistry(fs, root)
    missing: set[str] = set()
    for path in wal_paths:
        try:
            reader = open_wal(path, fs=fs)
        except FileSystemError:  # archived by a concurrent recovery
            continue
        with reader:
            for item in reader:
                result.entries_read += 1
                key = item.entry.key
                table = key.table_name.decode()
                region = key.encoded_region_name.decode()
                if table in missing:
                    continue
                if not registry.exists(table):
                    missing.add(table)
                    LOG.warning("recovery of %s: table %s no longer exists; its edits are skipped", server_name, table)
                    continue
                seq = key.log_sequence_number
                if seq <= _flushed_sequence(fs, root, table, region, flushed_cache):
                    result.cells_already_flushed += len(item.entry.cells)
                    continue
                edits[(table, region)].extend((cell, seq) for cell in item.entry.cells)
            if reader.truncated_tail_bytes:
                result.truncated_tails[path] = reader.truncated_tail_bytes
        result.wals.append(path)
    for (table, region), cells in sorted(edits.items()):
        if not cells:
            continue
        max_seq = max(seq for _, seq in cells)
        try:
            path = write_cells(fs, root, table, region, cells, max_seq)
        except TableFileExists:
            continue  # a concurrent recovery wrote the same file
        except UnknownTable:
            continue
        result.files_written.append(path)
        result.cells_replayed += len(cells)
    old = old_wal_dir(root)
    fs.mkdirs(old)
    now = int(time.time() * 1000)
    for path in result.wals:
        dst = fs.join(old, path.rsplit("/", 1)[-1])
        try:
            fs.rename(path, dst)
            fs.set_mtime(dst, now)
        except (FileSystemError, FileNotFoundError):
            continue  # moved already by another recovery
        result.archived.append(dst)
    for directory in dirs:
        try:
            if fs.exists(directory) and not fs.list(directory):
                fs.delete(directory)
        except (FileSystemError, OSError):
            pass
    LOG.info(
        "recovered %s: %d WALs, %d cells replayed into %d files",
        server_name, len(result.wals), result.cells_replayed, len(result.files_written),
    )  # fmt: skip
    return result
