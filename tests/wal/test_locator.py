from __future__ import annotations

import os

from replication.fs import LocalFileSystem
from replication.wal.locator import WalLocator
from replication.wal.names import find_wal

OWNER = "rs1,16020,1"
DEAD = "rs2,16020,2"
NAME = "rs1%2C16020%2C1.1700000000001"


def touch(path: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").close()
    return path


def test_same_answers_as_find_wal_in_every_place(tmp_path):
    fs, root = LocalFileSystem(), str(tmp_path)
    places = [
        f"{root}/WALs/{OWNER}/{NAME}",
        f"{root}/oldWALs/{NAME}",
        f"{root}/oldWALs/{OWNER}/{NAME}",
        f"{root}/WALs/{DEAD}/{NAME}",
        f"{root}/WALs/{DEAD}-splitting/{NAME}",
    ]
    for place in reversed(places):  # add places from least to most preferred
        touch(place)
        assert WalLocator(fs, root).find(NAME, [DEAD]) == find_wal(fs, root, NAME, [DEAD]) == place
    assert WalLocator(fs, root).find("rs9%2C1%2C1.1", [DEAD]) is None


def test_lists_each_directory_once(tmp_path):
    fs, root = LocalFileSystem(), str(tmp_path)
    for i in range(50):
        touch(f"{root}/oldWALs/rs1%2C16020%2C1.{1700000000000 + i}")
    calls: list[str] = []
    real_list = fs.list
    fs.list = lambda path: calls.append(path) or real_list(path)  # type: ignore[method-assign]
    locator = WalLocator(fs, root)
    found = [locator.find(f"rs1%2C16020%2C1.{1700000000000 + i}") for i in range(50)]
    assert all(found)
    assert len(calls) == len(set(calls)) <= 3
