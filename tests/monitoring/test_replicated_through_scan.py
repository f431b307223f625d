"""What a queue has pending, per table, from real WAL bytes: HBase's replication markers hold nothing back."""

from __future__ import annotations

from replication.fs import LocalFileSystem
from replication.monitoring.replicated_through import scan_pending
from replication.source.manifest import WalTask
from replication.wal.locator import WalLocator
from replication.wal.markers import METAFAMILY, REPLICATION_MARKER
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.names import wal_dir, wal_file_name
from replication.wal.writer import ProtobufLogWriter

SERVER = "127.0.0.1,16020,1700000000000"


def write_wal(root, entries) -> str:
    name = wal_file_name(SERVER, 1700000000001)
    folder = wal_dir(str(root), SERVER)
    LocalFileSystem().mkdirs(folder)
    writer = ProtobufLogWriter(f"{folder}/{name}")
    for seq, (table, when, cells) in enumerate(entries, start=1):
        scopes = {c.family: 1 for c in cells}
        writer.append(Entry(WALKey(b"0" * 32, table, seq, when, scopes=scopes), cells))
    writer.close()
    return name


def marker(when: int):
    return (b"t1", when, [Cell(b"\x00", METAFAMILY, REPLICATION_MARKER, when, int(CellType.PUT), b"")])


def data(table: bytes, when: int):
    return (table, when, [Cell(b"r", b"f", b"q", when, int(CellType.PUT), b"v")])


def scan(root, name):
    fs = LocalFileSystem()
    return scan_pending(fs, WalLocator(fs, str(root)), [SERVER], [WalTask(name, None, 0, 0)])


def test_markers_are_not_pending_data(tmp_path):
    pending = scan(tmp_path, write_wal(tmp_path, [marker(100), data(b"t1", 200), marker(250), data(b"t2", 300)]))
    assert pending.first_ms == 200
    assert pending.first_by_table == {"t1": 200, "t2": 300}
    assert pending.complete


def test_a_queue_with_only_markers_pending_holds_nothing_back(tmp_path):
    pending = scan(tmp_path, write_wal(tmp_path, [marker(100), marker(200)]))
    assert pending.first_ms is None and pending.first_by_table == {}


def test_an_unreadable_wal_bounds_every_table_by_its_creation_time(tmp_path):
    name = write_wal(tmp_path, [data(b"t1", 1700000000500)])
    path = tmp_path / "WALs" / SERVER / name
    path.write_bytes(b"PWAL" + b"\xff" * 64)  # garbage after the magic: not an entry
    pending = scan(tmp_path, name)
    assert not pending.complete and pending.error.startswith(name)
    assert pending.first_ms == pending.last_read_ms == 1700000000001  # the WAL's start timestamp
