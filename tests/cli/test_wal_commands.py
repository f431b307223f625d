"""``hbrep wal dump``: human and JSON output on a protobuf WAL and on a real 0.94 HLog."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from replication.cli import main
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.writer import ProtobufLogWriter, WALCompression

CID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def _wal(path: Path, *, close: bool = True) -> list[Entry]:
    batch = [
        Entry(
            WALKey(b"a" * 32, b"t1", 7, 1_700_000_000_000, {b"f": 1}, [CID]),
            [Cell(b"r1", b"f", b"q", 5, CellType.PUT, b"12345"), Cell(b"r1", b"f", b"q2", 5, CellType.DELETE_COLUMN)],
        ),
        Entry(WALKey(b"b" * 32, b"ns:t2", 8, 1_700_000_000_001), [Cell(b"r2", b"g", b"", 6, CellType.PUT, b"x")]),
    ]
    writer = ProtobufLogWriter(str(path))
    for entry in batch:
        writer.append(entry)
    writer.close() if close else writer.abort()
    return batch


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["wal", "dump", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dump_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rs1%2C16020%2C1.17"
    _wal(path)
    code, out, _ = _run(capsys, str(path), "--json")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 3
    first, second, summary = lines
    assert first["table"] == "t1" and first["region"] == "a" * 32 and first["sequence"] == 7
    assert first["write_time"] == 1_700_000_000_000 and first["cluster_ids"] == [str(CID)]
    assert first["scopes"] == {"f": 1} and first["start"] == 85
    assert [(c["row"], c["family"], c["qualifier"], c["type"], c["value_length"]) for c in first["cells"]] == [
        ("r1", "f", "q", 4, 5),
        ("r1", "f", "q2", 12, 0),
    ]
    assert second["table"] == "ns:t2" and second["start"] == first["end"]
    assert summary["entries"] == 2 and summary["cells"] == 3
    assert summary["tables"] == {"t1": 1, "ns:t2": 1}
    assert summary["cell_types"] == {"4": 2, "12": 1}
    assert summary["trailer_present"] is True and summary["position"] == second["end"]


def test_dump_human_and_truncated_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w"
    _wal(path, close=False)
    path.write_bytes(path.read_bytes() + b"\x20\x0a")  # a torn next entry
    code, out, _ = _run(capsys, str(path))
    assert code == 0
    assert "Sequence=7 , table=t1 , region=" + "a" * 32 in out
    assert "row=r1, column=f:q2, timestamp=5, type=DeleteColumn, vlen=0" in out
    assert f"cluster ids=[{CID}] scopes={{f: 1}}" in out
    assert "Summary: 2 entries, 3 cells; entries per table: ns:t2=1, t1=1" in out
    assert "truncated tail: 2 bytes after offset" in out


def test_dump_legacy_hlog(hlog_fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = hlog_fixtures / "TestNamespaceUpgrade" / "localhost%2C36372%2C1411407566650.1411407567922"
    code, out, _ = _run(capsys, str(path), "--json")
    assert code == 0
    *entries, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["entries"] == len(entries) > 0
    assert summary["cells"] == sum(len(e["cells"]) for e in entries)
    assert summary["tables"]["data"] == sum(1 for e in entries if e["table"] == "data")
    assert summary["cell_types"]["12"] == sum(1 for e in entries for c in e["cells"] if c["type"] == 12) > 0


def test_dump_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, str(tmp_path / "missing"))
    assert code == 1 and err.strip().splitlines() == [f"hbrep: error: WAL not found: {tmp_path}/missing"]
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a wal at all")
    code, _, err = _run(capsys, str(junk))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "not a WAL" in err


def test_dump_of_a_compressed_wal_names_its_compression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "rs1%2C16020%2C1.18"
    ttl = b"\x00\x09\x08" + (86_400_000).to_bytes(8, "big")
    entry = Entry(WALKey(b"a" * 32, b"t1", 7, 1), [Cell(b"r1", b"f", b"q", 5, CellType.PUT, b"v" * 100, ttl)])
    with ProtobufLogWriter(str(path), compression=WALCompression(values="SNAPPY")) as writer:
        writer.append(entry)
        writer.append(entry)
    code, out, _ = _run(capsys, str(path))
    assert code == 0 and out.splitlines()[0].endswith(" compression=dictionary+tags+values:SNAPPY")
    code, out, _ = _run(capsys, str(path), "--json")
    *entries, summary = [json.loads(line) for line in out.splitlines()]
    assert [c["tags"] for e in entries for c in e["cells"]] == [r"\x00\x09\x08\x00\x00\x00\x00\x05&\x5C\x00"] * 2
    assert summary["entries"] == 2 and summary["trailer_present"]
