"""The local-disk backend of the filesystem interface (``fsync`` for durability, ``os.replace`` for rename)."""

from __future__ import annotations

import os
import shutil
from typing import BinaryIO

from replication.fs.types import FileStatus, FileSystemError


class LocalFileSystem:
    """The default backend: the local disk (``fsync`` for durability, ``os.replace`` for rename)."""

    def open_read(self, path: str, offset: int = 0) -> BinaryIO:
        """Open ``path`` for reading, positioned at ``offset``."""
        try:
            stream = open(path, "rb")  # noqa: SIM115 - returned to the caller
        except FileNotFoundError:
            raise FileSystemError(f"file not found: {path}") from None
        if offset:
            stream.seek(offset)
        return stream

    def read_range(self, path: str, offset: int, length: int | None = None) -> bytes:
        """The bytes of ``path`` from ``offset`` (to the end, or ``length`` bytes)."""
        with self.open_read(path, offset) as stream:
            return stream.read() if length is None else stream.read(length)

    def create(self, path: str, overwrite: bool = False) -> BinaryIO:
        """A new file open for writing (parents created); FileSystemError if it exists and not overwrite."""
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            return open(path, "wb" if overwrite else "xb")
        except FileExistsError:
            raise FileSystemError(f"file already exists: {path}") from None

    def sync(self, stream: BinaryIO) -> None:
        """Flush Python's buffer and fsync: what was written survives a crash once this returns."""
        stream.flush()
        os.fsync(stream.fileno())

    def write_atomic(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` so readers see the old file or the whole new one, never a part."""
        directory = os.path.dirname(path) or "."
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp-{os.getpid()}")
        with open(tmp, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
        _fsync_dir(directory)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def status(self, path: str) -> FileStatus:
        """Length, mtime (ms) and kind of ``path``; FileSystemError if missing."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise FileSystemError(f"file not found: {path}") from None
        return FileStatus(path, st.st_size, st.st_mtime_ns // 1_000_000, os.path.isdir(path))

    def readable_length(self, path: str) -> int:
        """The bytes a reader can read now (the file's size); FileSystemError if missing."""
        return self.status(path).length

    def list(self, path: str) -> list[FileStatus]:
        """The entries of directory ``path`` sorted by name ([] when it does not exist)."""
        try:
            names = sorted(os.listdir(path))
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            child = os.path.join(path, name)
            try:
                out.append(self.status(child))
            except FileSystemError:  # removed between listdir and stat
                continue
        return out

    def mkdirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def rename(self, src: str, dst: str) -> None:
        """Atomically move ``src`` to ``dst`` (parents of dst created); FileSystemError if src is missing."""
        os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
        try:
            os.replace(src, dst)
        except FileNotFoundError:
            raise FileSystemError(f"cannot rename {src}: file not found") from None
        _fsync_dir(os.path.dirname(dst) or ".")

    def delete(self, path: str, recursive: bool = False) -> bool:
        """Delete a file (or a directory tree when ``recursive``); False if it did not exist."""
        if os.path.isdir(path) and not os.path.islink(path):
            if recursive:
                shutil.rmtree(path)
            else:
                os.rmdir(path)
            return True
        try:
            os.remove(path)
        except FileNotFoundError:
            return False
        return True

    def set_mtime(self, path: str, mtime_ms: int) -> None:
        ns = mtime_ms * 1_000_000
        os.utime(path, ns=(ns, ns))

    def join(self, *parts: str) -> str:
        return os.path.join(*parts)


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
