"""FSHLog: the WAL of one region server — append, group sync, roll, archive (spec §2).

Promises:
- ``append`` + ``sync(txid)``: when ``sync`` returns, that entry (and all before it) is fsynced.
- ``roll``: the new WAL's name is passed to ``pre_log_roll`` (which puts it into every peer's queue)
  *before* anything is written to it; if that hook raises, the roll fails and the server must abort.
  The old writer is then closed cleanly (trailer).
- ``archivable``: closed WALs whose edits are all flushed (per region, the WAL's highest sequence id
  <= the region's flushed sequence id), oldest first; ``archive`` renames one to ``oldWALs/`` and sets
  its mtime to now (``CommonFSUtils.renameAndSetModifyTime``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from replication.cluster.errors import RegionServerAborted
from replication.fs import FileSystem
from replication.wal.key_codec import encode_key
from replication.wal.model import Entry, WALKey
from replication.wal.names import old_wal_dir, wal_dir, wal_file_name
from replication.wal.varint import delimited
from replication.wal.writer import ProtobufLogWriter

LOG = logging.getLogger(__name__)


class FSHLog:
    """The single WAL group of a region server (no meta WAL: the embedded cluster has no meta table)."""

    def __init__(
        self,
        fs: FileSystem,
        root: str,
        server_name: str,
        *,
        roll_size: int,
        roll_period_ms: int,
        pre_log_roll: Callable[[str], None],
        separate_old_dir: bool = False,
    ):
        self.fs = fs
        self.root = root
        self.server_name = server_name
        self.roll_size = roll_size
        self.roll_period_ms = roll_period_ms
        self._pre_log_roll = pre_log_roll
        self.dir = wal_dir(root, server_name)
        # hbase.separate.oldlogdir.by.regionserver (AbstractFSWALProvider.getWALArchiveDirectoryName):
        # archive into oldWALs/<server>/ instead of oldWALs/ (find_wal and the cleaner look in both)
        self.old_dir = fs.join(old_wal_dir(root), server_name) if separate_old_dir else old_wal_dir(root)
        fs.mkdirs(self.dir)
        fs.mkdirs(self.old_dir)
        # Lock order: append_lock, then _sync_lock; never the other way round.
        self.append_lock = threading.RLock()  # order of appends, rolls; held by the peer watcher too
        self._sync_lock = threading.Lock()  # one fsync at a time; the writer is swapped only under it
        self._txid = 0
        self._synced_txid = 0
        self._filenum = 0
        self.writer: ProtobufLogWriter | None = None
        self.current_name: str = ""
        self._created_ms = 0
        self._entries_in_current = 0
        # WAL name -> {encoded region -> highest sequence id written in that WAL}; every un-archived WAL
        self.region_sequences: dict[str, dict[str, int]] = {}
        self.closed: list[str] = []  # closed, not yet archived, oldest first
        self.entries_written = 0
        self.closed_flag = False

    # -- writing ----------------------------------------------------------------------------------
    def append(
        self, entry: Entry, on_appended: Callable[[], None] | None = None, encoded_cells: bytes | None = None
    ) -> int:
        """Append ``entry`` to the current WAL; return its txid for :meth:`sync`.

        ``on_appended`` runs under the append lock right after the append (the memstore insert, so the
        memstore stays in sequence order). ``encoded_cells``, when given, must be ``encode_cells(entry.cells)``
        (the caller has those bytes already); it is written as is.
        """
        if encoded_cells is not None:
            return self.append_encoded(entry.key, len(entry.cells), encoded_cells, on_appended)
        return self._append(entry.key, lambda writer: writer.append(entry), on_appended)

    def append_encoded(
        self, key: WALKey, cell_count: int, encoded_cells: bytes, on_appended: Callable[[], None] | None = None
    ) -> int:
        """As :meth:`append` for an entry of ``cell_count`` cells given only as their encoding."""

        def write(writer: ProtobufLogWriter) -> None:
            # two writes, not one of the joined bytes: a sink's cell block is up to a batch (64 MB),
            # and joining copied all of it once more (py-spy, the 1 KB-row backlog)
            writer.append_raw(delimited(encode_key(key, cell_count)))
            writer.append_raw(encoded_cells)

        return self._append(key, write, on_appended)

    def _append(
        self, key: WALKey, write: Callable[[ProtobufLogWriter], None], on_appended: Callable[[], None] | None
    ) -> int:
        with self.append_lock:
            if self.writer is None:
                raise RegionServerAborted(f"WAL of {self.server_name} is closed")
            write(self.writer)
            region = key.encoded_region_name.decode()
            seqs = self.region_sequences[self.current_name]
            seqs[region] = max(seqs.get(region, 0), key.log_sequence_number)
            self._entries_in_current += 1
            self.entries_written += 1
            self._txid += 1
            if on_appended is not None:
                on_appended()
            return self._txid

    def sync(self, txid: int) -> None:
        """Return once every entry up to ``txid`` is durable (one fsync serves all waiting callers)."""
        if self._synced_txid >= txid:
            return
        with self._sync_lock:
            if self._synced_txid >= txid:
                return
            # Lock order is append_lock -> _sync_lock (roll and close hold the first to take the second),
            # so the append lock must not be taken here: it deadlocked every writer of a server whose
            # chore rolled the WAL while a caller waited to sync. The writer is swapped only under
            # _sync_lock, so it is this WAL's writer for the whole sync; every entry up to ``target`` was
            # written to it before its txid was counted (or to an older writer, closed and fsynced).
            target, writer = self._txid, self.writer
            if writer is None:
                raise RegionServerAborted(f"WAL of {self.server_name} is closed")
            # appends may continue while we fsync; they are covered by a later sync
            writer.sync()
            self._synced_txid = max(self._synced_txid, target)

    @property
    def current_path(self) -> str:
        return self.fs.join(self.dir, self.current_name)

    @property
    def current_length(self) -> int:
        writer = self.writer
        return writer.length if writer is not None else 0

    # -- rolling ----------------------------------------------------------------------------------
    def should_roll(self, now_ms: int | None = None) -> bool:
        """Size reached (roll size = blocksize x multiplier), or the period elapsed with entries written."""
        if self.writer is None:
            return False
        now_ms = now_ms if now_ms is not None else _now_ms()
        if self.writer.length >= self.roll_size:
            return True
        return self._entries_in_current > 0 and now_ms - self._created_ms >= self.roll_period_ms

    def roll(self, force: bool = True) -> str:
        """Close the current WAL and start a new one; return the new WAL's name.

        Without ``force``, a WAL with no entries is kept (HBase's rollWriter skips it the same way).
        Raises RegionServerAborted if the new WAL could not be registered in the replication queues.
        """
        with self.append_lock:
            if not force and self.writer is not None and self._entries_in_current == 0:
                return self.current_name
            filenum = max(self._filenum + 1, _now_ms())
            name = wal_file_name(self.server_name, filenum)
            try:
                self._pre_log_roll(name)
            except Exception as exc:
                raise RegionServerAborted(
                    f"could not add WAL {name} to the replication queues of {self.server_name}: {exc}"
                ) from exc
            new_writer = ProtobufLogWriter(self.fs.join(self.dir, name), fs=self.fs)
            new_writer.sync()
            old_writer, old_name = self.writer, self.current_name
            with self._sync_lock:
                if old_writer is not None:
                    old_writer.close()  # flush + fsync + trailer
                self._synced_txid = self._txid
                self.writer = new_writer
            self._filenum = filenum
            self.current_name = name
            self._created_ms = _now_ms()
            self._entries_in_current = 0
            self.region_sequences[name] = {}
            if old_writer is not None:
                self.closed.append(old_name)
            LOG.info("rolled WAL %s -> %s", old_name or "(none)", name)
            return name

    # -- archiving --------------------------------------------------------------------------------
    def archivable(self, flushed: Callable[[str], int]) -> list[str]:
        """Closed WALs whose every region edit has sequence id <= ``flushed(region)``, oldest first."""
        with self.append_lock:
            return [
                name
                for name in self.closed
                if all(seq <= flushed(region) for region, seq in self.region_sequences.get(name, {}).items())
            ]

    def regions_of(self, name: str) -> dict[str, int]:
        """{encoded region: highest sequence id} written in WAL ``name``."""
        with self.append_lock:
            return dict(self.region_sequences.get(name, {}))

    def archive(self, name: str) -> str:
        """Move closed WAL ``name`` to ``oldWALs/`` (or ``oldWALs/<server>/``) with mtime = now; return its new path."""
        src = self.fs.join(self.dir, name)
        dst = self.fs.join(self.old_dir, name)
        self.fs.rename(src, dst)
        self.fs.set_mtime(dst, _now_ms())
        with self.append_lock:
            if name in self.closed:
                self.closed.remove(name)
            self.region_sequences.pop(name, None)
        LOG.info("archived WAL %s to %s", name, self.old_dir)
        return dst

    def close(self) -> None:
        """Close the current WAL cleanly (trailer); it stays in WALs/ as the last one of this server."""
        with self.append_lock, self._sync_lock:
            if self.writer is not None:
                self.writer.close()
                self.writer = None
                self.closed.append(self.current_name)
            self.closed_flag = True


def _now_ms() -> int:
    return int(time.time() * 1000)
