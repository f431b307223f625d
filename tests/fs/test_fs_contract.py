"""The FileSystem contract (replication/fs.py), run against every backend in conftest.py."""

from __future__ import annotations

import pytest

from replication.fs import FileSystemError


def test_create_sync_makes_bytes_visible_before_close(backend):
    fs = backend.fs
    path = fs.join(backend.base, "WALs", "rs1,16020,1", "rs1%2C16020%2C1.1700000000000")
    stream = fs.create(path)
    assert fs.exists(path)  # the file exists as soon as it is created, as HDFS's does
    stream.write(b"PWAL")
    stream.write(b"header")
    fs.sync(stream)
    assert fs.read_range(path, 0) == b"PWALheader"
    stream.write(b"-entry-1")
    fs.sync(stream)
    assert fs.status(path).length == len(b"PWALheader-entry-1")
    stream.write(b"-tail")
    stream.close()
    assert fs.read_range(path, 0) == b"PWALheader-entry-1-tail"


def test_create_refuses_an_existing_file_unless_overwrite(backend):
    fs = backend.fs
    path = fs.join(backend.base, "f")
    with fs.create(path) as stream:
        stream.write(b"old contents")
    with pytest.raises(FileSystemError, match="already exists"):
        fs.create(path)
    with fs.create(path, overwrite=True) as stream:
        stream.write(b"new")
    assert fs.read_range(path, 0) == b"new"


def test_open_read_and_read_range_from_offsets(backend):
    fs = backend.fs
    path = fs.join(backend.base, "data.bin")
    payload = bytes(range(256)) * 40
    fs.write_atomic(path, payload)
    with fs.open_read(path, 1000) as stream:
        assert stream.read(10) == payload[1000:1010]
        assert stream.read() == payload[1010:]
    assert fs.read_range(path, 5000, 100) == payload[5000:5100]
    assert fs.read_range(path, 10200) == payload[10200:]
    assert fs.read_range(path, len(payload)) == b""
    assert fs.read_range(path, len(payload) - 3, 100) == payload[-3:]


def test_missing_paths_raise_one_line_errors_naming_the_path(backend):
    fs = backend.fs
    path = fs.join(backend.base, "nope", "missing.wal")
    assert not fs.exists(path)
    for call in (lambda: fs.open_read(path, 0), lambda: fs.read_range(path, 0), lambda: fs.status(path)):
        with pytest.raises(FileSystemError) as info:
            call()
        assert path in str(info.value) and "\n" not in str(info.value)
    assert fs.list(fs.join(backend.base, "nope")) == []


def test_write_atomic_replaces_and_leaves_no_temp_file(backend):
    fs = backend.fs
    path = fs.join(backend.base, "t", ".tabledesc", "descriptor.json")
    fs.write_atomic(path, b'{"v": 1}')
    fs.write_atomic(path, b'{"v": 2}')
    assert fs.read_range(path, 0) == b'{"v": 2}'
    assert [s.name for s in fs.list(fs.join(backend.base, "t", ".tabledesc"))] == ["descriptor.json"]


def test_status_list_and_mkdirs(backend):
    fs = backend.fs
    d = fs.join(backend.base, "oldWALs")
    fs.mkdirs(fs.join(d, "sub", "deeper"))
    fs.mkdirs(fs.join(d, "sub"))  # idempotent
    fs.write_atomic(fs.join(d, "b.1"), b"12345")
    fs.write_atomic(fs.join(d, "a.2"), b"")
    listing = fs.list(d)
    assert [s.name for s in listing] == ["a.2", "b.1", "sub"]
    assert [s.is_dir for s in listing] == [False, False, True]
    assert listing[1].length == 5 and listing[1].path == fs.join(d, "b.1")
    st = fs.status(d)
    assert st.is_dir and st.name == "oldWALs"


def test_rename_archives_into_a_new_directory(backend):
    fs = backend.fs
    src = fs.join(backend.base, "WALs", "rs1,1,1", "w.1")
    dst = fs.join(backend.base, "oldWALs", "w.1")
    fs.write_atomic(src, b"wal bytes")
    fs.rename(src, dst)
    assert not fs.exists(src)
    assert fs.read_range(dst, 0) == b"wal bytes"
    with pytest.raises(FileSystemError, match="not found"):
        fs.rename(src, dst)


def test_rename_onto_an_existing_file_replaces_it(backend):
    fs = backend.fs
    src, dst = fs.join(backend.base, "new"), fs.join(backend.base, "old")
    fs.write_atomic(src, b"new")
    fs.write_atomic(dst, b"old")
    fs.rename(src, dst)
    assert fs.read_range(dst, 0) == b"new" and not fs.exists(src)


def test_delete_files_and_trees(backend):
    fs = backend.fs
    f = fs.join(backend.base, "x", "f")
    fs.write_atomic(f, b"1")
    with pytest.raises((FileSystemError, OSError)):  # LocalFileSystem lets OSError through here
        fs.delete(fs.join(backend.base, "x"))
    assert fs.delete(f) is True
    assert fs.delete(f) is False
    fs.write_atomic(fs.join(backend.base, "x", "y", "z"), b"1")
    assert fs.delete(fs.join(backend.base, "x"), recursive=True) is True
    assert not fs.exists(fs.join(backend.base, "x"))


def test_set_mtime_round_trips_in_milliseconds(backend):
    fs = backend.fs
    path = fs.join(backend.base, "w")
    fs.write_atomic(path, b"1")
    fs.set_mtime(path, 1_700_000_123_456)
    assert fs.status(path).mtime_ms == 1_700_000_123_456


def test_join_builds_posix_paths(backend):
    assert backend.fs.join("/hbase", "WALs", "rs") == "/hbase/WALs/rs"
