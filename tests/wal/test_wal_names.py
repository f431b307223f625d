"""Server names, WAL file names, group ids, directories and find_wal (spec §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replication.fs import LocalFileSystem
from replication.wal.errors import InvalidWALName
from replication.wal.names import (
    ServerName,
    find_wal,
    is_meta_wal,
    old_wal_dir,
    server_of_wal,
    wal_dir,
    wal_file_name,
    wal_group_id,
    wal_start_timestamp,
)

SERVER = "rs1.example.com,16020,1700000000000"


def test_server_name_parse_and_format() -> None:
    sn = ServerName.parse("RS1.Example.com,16020,1700000000000")
    assert sn == ServerName("rs1.example.com", 16020, 1700000000000)
    assert str(sn) == SERVER
    for bad in ("rs1", "rs1,16020", ",1,2", "rs1,port,2", "rs1,1,code"):
        with pytest.raises(InvalidWALName, match="bad server name"):
            ServerName.parse(bad)


def test_wal_file_names_as_hbase_writes_them() -> None:
    assert wal_file_name(SERVER, 1700000123456) == "rs1.example.com%2C16020%2C1700000000000.1700000123456"
    assert wal_file_name(ServerName.parse(SERVER), 1700000123456, meta=True) == (
        "rs1.example.com%2C16020%2C1700000000000.meta.1700000123456.meta"
    )
    assert wal_file_name("a b~,1,2", 5) == "a+b%7E%2C1%2C2.5"  # java.net.URLEncoder rules


@pytest.mark.parametrize("meta", [False, True])
def test_timestamp_group_and_server_of_a_name(meta: bool) -> None:
    name = wal_file_name(SERVER, 1700000123456, meta=meta)
    assert wal_start_timestamp(name) == 1700000123456
    assert wal_start_timestamp("/root/oldWALs/" + name) == 1700000123456
    assert wal_group_id(name) == "rs1.example.com%2C16020%2C1700000000000"
    assert server_of_wal(name) == SERVER
    assert is_meta_wal(name) is meta


def test_group_id_keeps_hbase_regex_quirk_and_bad_names() -> None:
    # ".meta" is used as a regex by HBase, so "xmeta" inside a host name is stripped as well.
    assert wal_group_id("h-metastore%2C1%2C2.17") == "hstore%2C1%2C2"
    assert wal_group_id("rs%2C1%2C2.regiongroup-0.17") == "rs%2C1%2C2.regiongroup-0"
    assert server_of_wal("rs%2C1%2C2.regiongroup-0.17") == "rs,1,2"
    with pytest.raises(InvalidWALName):
        wal_start_timestamp("rs%2C1%2C2.abc")
    with pytest.raises(InvalidWALName):
        server_of_wal("notaserver.17")


def test_find_wal_follows_it_wherever_it_moved(tmp_path: Path) -> None:
    fs, root = LocalFileSystem(), str(tmp_path)
    name = wal_file_name(SERVER, 17)
    assert wal_dir(root, SERVER) == f"{root}/WALs/{SERVER}"
    assert old_wal_dir(root) == f"{root}/oldWALs"
    assert find_wal(fs, root, name) is None
    places = [
        f"{root}/WALs/dead,1,2-splitting/{name}",
        f"{root}/WALs/dead,1,2/{name}",
        f"{root}/oldWALs/{SERVER}/{name}",
        f"{root}/oldWALs/{name}",
        f"{root}/WALs/{SERVER}/{name}",
    ]
    for place in places:  # from the least to the most preferred place
        Path(place).parent.mkdir(parents=True, exist_ok=True)
        Path(place).write_bytes(b"")
        assert find_wal(fs, root, name, servers=["dead,1,2"]) == place
    assert find_wal(fs, root, name) == places[-1]
    Path(places[-1]).unlink()
    Path(places[-2]).unlink()
    Path(places[-3]).unlink()
    assert find_wal(fs, root, name) is None
    assert find_wal(fs, root, name, servers=[ServerName.parse("dead,1,2")]) == places[1]
