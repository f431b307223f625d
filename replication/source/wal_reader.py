"""ReplicationSourceWALReader + WALEntryStream: a queue's WALs in order → filtered batches (spec §4.3-4.4).

A batch closes when its size reaches ``replication.source.size.capacity``, its entry count reaches
``replication.source.nb.capacity``, or the WAL ends (then it is marked ``end_of_file``). Every batch
records the WAL and the position just after the last entry read, filtered entries included, so the
position moves past edits that do not ship.

End-of-file rules: the newest WAL of a live region server's normal queue is *being written*: it is read
up to its last whole entry and never marked finished. Every other WAL is finished once read to its end;
a truncated tail (crashed writer, no trailer) is counted in ``uncleanlyClosedLogs`` and accepted, as
HBase's ``checkAllBytesParsed`` does. A WAL found nowhere stops the queue (:class:`WALMissing`), except
the being-written one, which a region server registers just before it creates the file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from replication.config import Config
from replication.errors import HbrepError
from replication.fs import FileSystem
from replication.fs.types import FileSystemError
from replication.source.filters import EntryFilter, ShipEntry
from replication.source.manifest import QueueTask, WalTask
from replication.source.metrics import SourceMetrics
from replication.source.serial_replication import SerialChecker
from replication.wal.errors import WALNotFound
from replication.wal.names import find_wal, order_wals
from replication.wal.reader import open_wal

LOG = logging.getLogger(__name__)


class WALMissing(HbrepError):
    """A queued WAL is in none of the places it can have moved to."""


class ZeroLengthWAL(HbrepError):
    """A finished WAL has no bytes at all (HBase keeps such a queue stuck unless eof.autorecovery)."""


@dataclass
class WALEntryBatch:
    """Entries to ship together, and where reading stopped."""

    wal: WalTask
    entries: list[ShipEntry] = field(default_factory=list)
    heap_size: int = 0
    last_position: int = 0
    end_of_file: bool = False
    last_write_time: int = 0
    # the write time of the batch's last entry (HBase's ageOfLastShippedOp is measured from it)
    last_entry_write_time: int = 0
    # where this batch's reading started (an empty batch that moved past it means "caught up")
    start_position: int = 0
    nb_row_keys: int = 0
    # serial peers: the highest sequence id read per region (filtered entries too), HBase's lastSeqIds
    last_seq_ids: dict[str, int] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not self.entries


class ReplicationSourceWALReader:
    """Reads one queue's WALs from their recorded positions and yields filtered batches."""

    def __init__(
        self,
        fs: FileSystem,
        root: str,
        queue: QueueTask,
        entry_filter: EntryFilter,
        conf: Config,
        metrics: SourceMetrics,
        serial: SerialChecker | None = None,
    ):
        self.fs = fs
        self.serial = serial
        self.waiting = ""  # set when a serial peer's entry must wait: why (the queue stops there)
        self.root = root
        self.queue = queue
        self.filter = entry_filter
        self.size_capacity = conf.get_int("replication.source.size.capacity")
        self.nb_capacity = conf.get_int("replication.source.nb.capacity")
        self.eof_autorecovery = conf.get_bool("replication.source.eof.autorecovery")
        self.metrics = metrics

    def being_written(self, wal: WalTask, group: list[WalTask]) -> bool:
        """True for the newest WAL of its group in a live server's normal (not recovered) queue."""
        return self.queue.replicator_alive and not self.queue.recovered and wal is group[-1]

    def resolve(self, wal: WalTask) -> str | None:
        """Where the WAL is now: the snapshot's path if still there, else wherever it moved (spec §2)."""
        if wal.path and self.fs.exists(wal.path):
            return wal.path
        servers = [self.queue.replicator, *self.queue.dead_servers]
        return find_wal(self.fs, self.root, wal.name, servers=servers)

    def batches(self) -> Iterator[WALEntryBatch]:
        """Every batch of the queue, in order; raises WALMissing / reader errors to stop the queue."""
        for group in order_wals(self.queue.wals):
            for wal in group:
                writing = self.being_written(wal, group)
                path = self.resolve(wal)
                if path is None:
                    if writing:  # registered before the file exists: nothing to read yet
                        yield WALEntryBatch(wal, last_position=wal.position, start_position=wal.position)
                        continue
                    raise WALMissing(
                        f"WAL {wal.name} of queue {self.queue.key} is in none of WALs/, oldWALs/ or the dead "
                        f"servers' directories under {self.root}"
                    )
                yield from self._read_wal(wal, path, writing)
                if self.waiting:
                    return

    def _open_where_it_is(self, wal: WalTask, path: str, start_at: Callable[[int], int]) -> tuple[str, int, Any]:
        """(path, readable length, reader) of the WAL, looked up again if it moved since ``resolve``.

        A region server archives a closed WAL to oldWALs/ whenever its edits are flushed, so the file can
        move between the lookup and the open. HBase's WALEntryStream then opens the archived path instead
        of failing (the guide: no error mid-read); so does this, up to twice, before WALMissing.
        """
        for _ in range(3):
            try:
                length = self.fs.readable_length(path)  # a WAL being written on HDFS: up to its hflushed bytes
                return path, length, open_wal(path, fs=self.fs, start=start_at(length))
            except (FileSystemError, WALNotFound):
                moved = find_wal(
                    self.fs, self.root, wal.name, servers=[self.queue.replicator, *self.queue.dead_servers]
                )
                if moved is None:
                    break
                if moved == path:
                    raise  # still there: not a move (an unreachable file system, say); its own error
                LOG.info("WAL %s of queue %s moved to %s before it was opened; reading it there", path,
                         self.queue.key, moved)  # fmt: skip
                path = moved
        raise WALMissing(
            f"WAL {wal.name} of queue {self.queue.key} moved while being opened and is in none of WALs/, oldWALs/ "
            f"or the dead servers' directories under {self.root}"
        )

    def _read_wal(self, wal: WalTask, path: str, writing: bool) -> Iterator[WALEntryBatch]:
        path, length, reader = self._open_where_it_is(
            wal, path, lambda length: wal.position if wal.position <= length else 0
        )
        if length == 0 and not writing:
            if not self.eof_autorecovery:
                _close(reader)
                raise ZeroLengthWAL(
                    f"WAL {path} of queue {self.queue.key} is zero-length; set "
                    "replication.source.eof.autorecovery=true to drop it from the queue"
                )
            LOG.warning("Dropping zero-length WAL %s from queue %s (eof.autorecovery)", path, self.queue.key)
            _close(reader)
            yield WALEntryBatch(wal, last_position=0, end_of_file=True)
            return
        start = wal.position if wal.position <= length else 0
        if start != wal.position:
            LOG.warning(
                "Position %d is past the end of %s (%d bytes); reading it again from 0", wal.position, path, length
            )
            self.metrics.inc("restartedLogReading")
        batch = WALEntryBatch(wal, last_position=start, start_position=start)
        try:
            for raw in reader.raw_entries():
                if self.serial is not None:
                    region = raw.key.encoded_region_name.decode()
                    if not self.serial.can_push(wal.name, raw.start, region, raw.key.log_sequence_number):
                        # stop before this entry; the queue goes on from here in a later pass
                        self.waiting = self.serial.reason
                        self.metrics.inc("serialWaits")
                        batch.last_position = raw.start
                        yield batch
                        return
                    batch.last_seq_ids[region] = max(batch.last_seq_ids.get(region, 0), raw.key.log_sequence_number)
                self.metrics.inc("logEditsRead")
                self.metrics.inc("logReadInBytes", raw.end - raw.start)
                batch.last_position = raw.end
                shipped = self.filter.filter(raw.key, raw.cell_count, raw.cell_bytes)
                if shipped is None:
                    self.metrics.inc("logEditsFiltered")
                    continue
                batch.entries.append(shipped)
                batch.heap_size += shipped.size
                batch.last_write_time = max(batch.last_write_time, raw.key.write_time)
                batch.last_entry_write_time = raw.key.write_time
                if batch.heap_size >= self.size_capacity or len(batch.entries) >= self.nb_capacity:
                    yield batch
                    batch = WALEntryBatch(wal, last_position=raw.end, start_position=raw.end)
            # Past the header (position 0 = "from the start") or a trailing marker, the reader knows
            # where the next read starts even when no entry was read.
            batch.last_position = max(batch.last_position, reader.position)
            if not writing:
                batch.end_of_file = True
                if getattr(reader, "truncated_tail_bytes", 0):
                    self.metrics.inc("uncleanlyClosedLogs")
                    self.metrics.inc("ignoredUncleanlyClosedLogContentsInBytes", reader.truncated_tail_bytes)
                    LOG.warning(
                        "WAL %s ends with %d bytes that are not a whole entry (unclean close); shipped up to offset %d",
                        path,
                        reader.truncated_tail_bytes,
                        reader.position,
                    )
            yield batch
        finally:
            _close(reader)


def _close(reader: Any) -> None:
    close = getattr(reader, "close", None)
    if close is not None:
        close()
