"""``hbrep wal play`` with bad input: one clear line and a non-zero exit, before any cluster or Spark job is
touched (an unknown target table on a real HBase: tests/hbase_source/test_wal_play_from_hbase.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replication.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    # a cluster key no ZooKeeper answers at: a check that reached it would fail differently
    code = main(["--cluster", "127.0.0.1:1:/nowhere", "wal", "play", *args])
    return code, capsys.readouterr().err.strip().splitlines()


def test_a_missing_wal_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, str(tmp_path / "missing"), "--table", "t")
    assert code == 1 and err == [f"hbrep: error: WAL path {tmp_path}/missing does not exist"]


def test_a_bad_or_empty_time_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, str(tmp_path), "--table", "t", "--starttime", "200", "--endtime", "100")
    assert code == 1 and err == ["hbrep: error: --starttime 200 is after --endtime 100: the time range is empty"]
    code, err = _run(capsys, str(tmp_path), "--table", "t", "--endtime", "soon")
    assert code == 1 and len(err) == 1 and err[0].startswith("hbrep: error: --endtime must be specified")


def test_a_file_that_is_no_wal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rs%2C1%2C1.100").write_bytes(b"not a WAL at all")
    code, err = _run(capsys, str(tmp_path), "--table", "t")
    assert code == 1 and len(err) == 1 and err[0].startswith(f"hbrep: error: {tmp_path}/rs%2C1%2C1.100: not a WAL")


def test_a_mapping_of_a_table_not_replayed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, str(tmp_path), "--table", "t", "--map", "u:v")
    assert code == 1 and err == ["hbrep: error: --map u:v: u is not one of the --table tables (t)"]
