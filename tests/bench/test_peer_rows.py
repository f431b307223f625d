"""bench/scheduler.PeerRows: the peer's WALs read on from the last poll, never a row counted twice or missed."""

from __future__ import annotations

from bench.scheduler import PeerRows
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.writer import ProtobufLogWriter


def _entry(rows: list[bytes], write_time: int) -> Entry:
    key = WALKey(b"r" * 32, b"bench", 1, write_time)
    return Entry(key, [Cell(r, b"f", b"q", write_time - 5, CellType.PUT, b"v") for r in rows])


def test_polls_read_only_what_was_appended_and_a_closed_or_moved_wal_is_not_counted_again(tmp_path):
    wals = tmp_path / "WALs" / "rs1"
    wals.mkdir(parents=True)
    path = wals / "rs1.1"
    peer = PeerRows(str(tmp_path))
    writer = ProtobufLogWriter(str(path))
    writer.append(_entry([b"C1", b"C2"], 1000))
    writer.sync()
    assert peer.count(b"C") == 2
    first_position = peer.seen["rs1.1"][1]
    writer.append(_entry([b"C3", b"K1"], 2000))
    writer.sync()
    assert (peer.count(b"C"), peer.count(b"K")) == (3, 1)
    assert peer.seen["rs1.1"][1] > first_position  # read on from the last entry, not from the start
    writer.close()  # the trailer follows the entries
    assert (peer.count(b"C"), peer.count(b"K")) == (3, 1)
    old = tmp_path / "oldWALs"
    old.mkdir()
    path.rename(old / "rs1.1")
    assert peer.count(b"C") == 3
    assert sorted(row for row, _ts, _d in peer.cells()) == [b"C1", b"C2", b"C3", b"K1"]
    assert {d for _r, _ts, d in peer.cells()} == {5}  # write time - cell timestamp
    first, last = peer.arrival_span(b"C")
    assert (first, last) == (1.0, 2.0)
