"""``hbrep wal play``: what HBase's WALPlayer replays, decided without Spark or a cluster.

WALPlayer (hbase-mapreduce, ``WALPlayer [options] <WAL inputdir> [<tables> <tableMappings>]``) reads the
WAL files under its input paths (WALInputFormat) and writes each entry of the chosen tables, as Puts and
Deletes, into the mapped table of a live cluster. This module keeps its rules:

- files: every file under each input path, recursively; a file whose name carries a start timestamp
  (``WAL.getTimestamp``) is read only when ``wal.start.time <= timestamp <= wal.end.time``
  (``WALInputFormat.addFile``), so a WAL created before the start time is skipped whole;
- entries: within a file, entries written before ``wal.start.time`` are skipped and the first entry
  written after ``wal.end.time`` ends the file (``WALRecordReader.nextKeyValue``); both bounds inclusive;
- cells: only entries of the chosen tables; ``METAFAMILY`` cells (flush, compaction, region event and
  bulk-load markers: ``WALEdit.isMetaEditFamily``) are never replayed;
- times: milliseconds, or ``yyyy-MM-dd'T'HH:mm:ss.SS`` (``WALPlayer.setupTime``; read in UTC here);
- counters: WALPlayer's ``WALEDITS``, ``CELLS_READ``, ``CELLS_WRITTEN``, ``PUTS``, ``DELETES`` (a Put or
  Delete is written at each change of row or cell type, as its mapper writes them).

Unlike WALPlayer, ``wal play`` always names its tables (WALPlayer replays every table, hbase:meta too,
when none is given), and offers no HFile (``wal.bulk.output``) mode: edits go to the target's sinks.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from replication.errors import HbrepError
from replication.fs import FileSystem, FileSystemError
from replication.wal.errors import InvalidWALName
from replication.wal.markers import METAFAMILY
from replication.wal.model import Entry, WALKey
from replication.wal.names import wal_start_timestamp

EARLIEST = -(2**63)  # Long.MIN_VALUE / MAX_VALUE: WALInputFormat's defaults
LATEST = 2**63 - 1
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d+)")
_TABLE = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.-]*:)?[A-Za-z0-9_][A-Za-z0-9_.-]*")
COUNTERS = ("WALEDITS", "CELLS_READ", "CELLS_WRITTEN", "PUTS", "DELETES")


class WalPlayError(HbrepError):
    """Bad input to ``wal play`` (one line naming what is wrong)."""


def parse_time(option: str, value: str) -> int:
    """Milliseconds since the epoch from ``value``: a number of ms, or ``yyyy-MM-dd'T'HH:mm:ss.SS`` (UTC), as
    WALPlayer's setupTime reads ``wal.start.time``/``wal.end.time``; WalPlayError naming ``option`` else."""
    text = value.strip()
    match = _DATE.fullmatch(text)
    if match:
        year, month, day, hour, minute, second, fraction = match.groups()
        try:
            moment = dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=dt.UTC)
        except ValueError as exc:
            raise WalPlayError(f"{option} {value!r}: {exc}") from None
        # SimpleDateFormat's "SS" reads the digits as a number of milliseconds (".99" is 99 ms)
        return int(moment.timestamp()) * 1000 + int(fraction)
    if re.fullmatch(r"-?\d+", text) and EARLIEST <= int(text) <= LATEST:
        return int(text)
    raise WalPlayError(
        f"{option} must be specified either in the form 2001-02-20T16:35:06.99 or as number of milliseconds,"
        f" not {value!r}"
    )


@dataclass(frozen=True)
class TableMap:
    """Which tables are replayed and into which table each goes (itself unless mapped)."""

    targets: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, tables: Iterable[str], mappings: Iterable[str]) -> TableMap:
        """``--table T`` (one or more) and ``--map SRC:DST`` (SRC one of the tables; a namespaced name is
        ``ns:t``, so ``ns:src:ns:dst`` maps it); WalPlayError for an empty, unknown or doubled name."""
        targets: dict[str, str] = {}
        for table in tables:
            targets[_table_name(table, "--table")] = _table_name(table, "--table")
        if not targets:
            raise WalPlayError("--table: name at least one table to replay")
        for mapping in mappings:
            source, target = _split_mapping(mapping)
            if source not in targets:
                raise WalPlayError(f"--map {mapping}: {source} is not one of the --table tables ({', '.join(targets)})")
            if targets[source] != source:
                raise WalPlayError(f"--map {mapping}: {source} is already mapped to {targets[source]}")
            targets[source] = target
        return cls(targets)

    def target_of(self, table_name: bytes) -> str | None:
        """The table an entry of ``table_name`` (as a WALKey names it) is replayed into; None: not replayed."""
        name = table_name.decode("utf-8", "replace").removeprefix("default:")
        return self.targets.get(name)


def _table_name(name: str, option: str) -> str:
    text = name.strip().removeprefix("default:")
    if not _TABLE.fullmatch(text):
        raise WalPlayError(f"{option}: {name!r} is not a table name")
    return text


def _split_mapping(mapping: str) -> tuple[str, str]:
    parts = mapping.split(":")
    if len(parts) == 2:
        source, target = parts
    elif len(parts) == 4:
        source, target = f"{parts[0]}:{parts[1]}", f"{parts[2]}:{parts[3]}"
    else:
        raise WalPlayError(f"--map {mapping!r}: expected SRC:DST (a namespaced table as ns:t)")
    return _table_name(source, "--map"), _table_name(target, "--map")


@dataclass(frozen=True)
class TimeRange:
    """WALPlayer's ``[wal.start.time, wal.end.time]``, both inclusive."""

    start: int = EARLIEST
    end: int = LATEST

    @classmethod
    def parse(cls, start: str | None, end: str | None) -> TimeRange:
        """The range of ``--starttime``/``--endtime`` (either may be absent); WalPlayError when it is empty."""
        low = parse_time("--starttime", start) if start is not None else EARLIEST
        high = parse_time("--endtime", end) if end is not None else LATEST
        if low > high:
            raise WalPlayError(f"--starttime {start} is after --endtime {end}: the time range is empty")
        return cls(low, high)

    def takes_file(self, name: str) -> bool:
        """WALInputFormat.addFile: a WAL whose name has a start timestamp inside the range (or none at all)."""
        try:
            stamp = wal_start_timestamp(name)
        except InvalidWALName:
            return True
        return stamp <= 0 or self.start <= stamp <= self.end


def wal_files(fs: FileSystem, paths: Iterable[str], times: TimeRange) -> list[str]:
    """Every file under ``paths`` (files or folders, recursively, sorted per folder) that ``times`` takes;
    WalPlayError naming a path that does not exist."""
    found: list[str] = []
    for path in paths:
        try:
            status = fs.status(path)
        except FileSystemError:
            raise WalPlayError(f"WAL path {path} does not exist") from None
        if not status.is_dir:
            if times.takes_file(posixpath.basename(path)):
                found.append(path)
            continue
        found.extend(_walk(fs, path, times))
    return found


def _walk(fs: FileSystem, folder: str, times: TimeRange) -> Iterator[str]:
    for child in sorted(fs.list(folder), key=lambda s: s.name):
        if child.is_dir:
            yield from _walk(fs, child.path, times)
        elif times.takes_file(child.name):
            yield child.path


@dataclass
class PlayCounters:
    """WALPlayer's counters (``COUNTERS``) over what was replayed."""

    WALEDITS: int = 0
    CELLS_READ: int = 0
    CELLS_WRITTEN: int = 0
    PUTS: int = 0
    DELETES: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters by WALPlayer's names."""
        return {name: getattr(self, name) for name in COUNTERS}

    def add(self, other: Mapping[str, int]) -> None:
        """Add another task's counters."""
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + int(other.get(name, 0)))


def entries_in_range(entries: Iterable[Entry], times: TimeRange) -> Iterator[Entry]:
    """WALRecordReader: skip entries written before the start, stop at the first written after the end."""
    for entry in entries:
        if entry.key.write_time < times.start:
            continue
        if entry.key.write_time > times.end:
            return
        yield entry


def replayed(entry: Entry, tables: TableMap, counters: PlayCounters) -> Entry | None:
    """The entry as it is replayed (its table mapped, METAFAMILY cells left out, no cluster ids: a replayed
    edit is a new write of the target cluster, as WALPlayer's Puts are), or None when nothing of it is;
    counts it in ``counters`` as WALPlayer's mapper does."""
    counters.WALEDITS += 1
    target = tables.target_of(entry.key.table_name)
    if target is None:
        return None
    counters.CELLS_READ += len(entry.cells)
    cells = [c for c in entry.cells if c.family != METAFAMILY]
    if not cells:
        return None
    counters.CELLS_WRITTEN += len(cells)
    _count_mutations(cells, counters)
    key = entry.key
    return Entry(
        WALKey(
            encoded_region_name=key.encoded_region_name,
            table_name=target.encode("utf-8"),
            log_sequence_number=key.log_sequence_number,
            write_time=key.write_time,
        ),
        cells,
    )


def _count_mutations(cells: list, counters: PlayCounters) -> None:
    """PUTS and DELETES exactly as WALPlayer's WALMapper counts its writes: at each change of row or type it
    writes out the Put and the Delete it holds (neither is dropped after being written, so one may be
    counted again), and both once more at the end of the entry."""
    put = delete = False
    previous = None
    for cell in cells:
        if previous is None or previous.row != cell.row or previous.type != cell.type:
            counters.PUTS += put
            counters.DELETES += delete
            if cell.is_delete:
                delete = True
            else:
                put = True
        previous = cell
    counters.PUTS += put
    counters.DELETES += delete
