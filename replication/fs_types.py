"""What every filesystem backend shares: the interface hbrep needs, a path's status, the error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Protocol

from replication.errors import HbrepError


class FileSystemError(HbrepError):
    """A filesystem operation failed (the message names the path)."""


@dataclass(frozen=True)
class FileStatus:
    """What a listing or stat returns for one path."""

    path: str
    length: int
    mtime_ms: int
    is_dir: bool

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


class FileSystem(Protocol):
    """The operations hbrep needs from a filesystem."""

    def open_read(self, path: str, offset: int = 0) -> BinaryIO: ...
    def read_range(self, path: str, offset: int, length: int | None = None) -> bytes: ...
    def create(self, path: str, overwrite: bool = False) -> BinaryIO: ...
    def sync(self, stream: BinaryIO) -> None: ...
    def write_atomic(self, path: str, data: bytes) -> None: ...
    def exists(self, path: str) -> bool: ...
    def status(self, path: str) -> FileStatus: ...
    def list(self, path: str) -> list[FileStatus]: ...
    def mkdirs(self, path: str) -> None: ...
    def rename(self, src: str, dst: str) -> None: ...
    def delete(self, path: str, recursive: bool = False) -> bool: ...
    def set_mtime(self, path: str, mtime_ms: int) -> None: ...
    def join(self, *parts: str) -> str: ...
