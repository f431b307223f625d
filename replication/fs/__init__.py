"""The file system room: every WAL, table-file, manifest and metrics access goes through it.

A root is chosen by URI: a plain path or ``file://`` -> :class:`LocalFileSystem` (``local.py``); ``webhdfs://``
and ``hdfs://`` -> the WebHDFS backend (``webhdfs.py``). Paths passed to a FileSystem are POSIX-style
strings as the backend understands them. The interface itself (``FileSystem``, ``FileStatus``,
``FileSystemError``) is ``types.py``, shared by both backends and re-exported here with ``get_filesystem``.

Promises: ``open_read(path, offset)`` starts at ``offset`` without reading what comes before it;
``rename`` is atomic within one filesystem (archive = rename); ``create`` writes a new file and
``sync`` makes what was written durable before returning; ``readable_length`` is what a reader can
read now (on HDFS, past the NameNode's length for a file still open for write: its hflushed bytes).
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from replication.fs.local import LocalFileSystem
from replication.fs.types import FileStatus, FileSystem, FileSystemError
from replication.fs.webhdfs import WebHdfsFileSystem


def get_filesystem(root: str) -> tuple[FileSystem, str]:
    """The backend for a root URI and the root as a path that backend understands.

    ``/data/hbase`` and ``file:///data/hbase`` → local; ``webhdfs://nn:9870/hbase`` and
    ``hdfs://nn:9870/hbase`` → WebHDFS. Raises FileSystemError for any other scheme.
    """
    parsed = urlparse(root)
    if parsed.scheme in ("", "file"):
        return LocalFileSystem(), os.path.abspath(parsed.path if parsed.scheme else root)
    if parsed.scheme in ("webhdfs", "hdfs", "swebhdfs"):
        return WebHdfsFileSystem.from_uri(root), parsed.path or "/"
    raise FileSystemError(f"unsupported filesystem scheme {parsed.scheme!r} in root {root!r}")


__all__ = ["FileStatus", "FileSystem", "FileSystemError", "LocalFileSystem", "WebHdfsFileSystem", "get_filesystem"]
