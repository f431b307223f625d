"""Backends for the FileSystem contract tests.

``backend`` runs each contract test against:
- ``local``: :class:`replication.fs.LocalFileSystem` on a temp dir;
- ``webhdfs-test-server``: :class:`replication.fs_webhdfs.WebHdfsFileSystem` against
  ``tests/webhdfs_server.py`` (a WebHDFS *protocol* test server, not HDFS);
- ``webhdfs-real``: the same backend against a real HDFS when ``HBREP_TEST_WEBHDFS_URL`` is set
  (e.g. ``webhdfs://namenode:9870/tmp/hbrep-tests?user=hdfs``); a fresh directory under its path
  is used and removed afterwards. Skipped otherwise.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest
from webhdfs_server import WebHdfsTestServer

from replication.fs import FileSystem, LocalFileSystem, get_filesystem

REAL_URL_ENV = "HBREP_TEST_WEBHDFS_URL"


@dataclass
class Backend:
    """A filesystem under test and a fresh, existing directory on it."""

    name: str
    fs: FileSystem
    base: str
    server: WebHdfsTestServer | None = None


@pytest.fixture(scope="session")
def webhdfs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebHdfsTestServer]:
    """A WebHDFS protocol test server (namenode + datanode ports) for the session."""
    with WebHdfsTestServer(tmp_path_factory.mktemp("webhdfs")) as server:
        yield server


@pytest.fixture(params=["local", "webhdfs-test-server", "webhdfs-real"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each FileSystem backend, with a fresh base directory."""
    if request.param == "local":
        base = tmp_path / "fs"
        base.mkdir()
        yield Backend("local", LocalFileSystem(), str(base))
        return
    if request.param == "webhdfs-test-server":
        server = request.getfixturevalue("webhdfs_server")
        base = f"/t-{uuid.uuid4().hex[:10]}"
        fs, root = get_filesystem(server.uri(base))
        fs.mkdirs(root)
        yield Backend("webhdfs-test-server", fs, root, server)
        fs.delete(root, recursive=True)
        return
    url = os.environ.get(REAL_URL_ENV)
    if not url:
        pytest.skip(f"set {REAL_URL_ENV}=webhdfs://namenode:9870/some/dir to run against a real HDFS")
    parsed = urlparse(url)
    sub = f"{parsed.path.rstrip('/')}/hbrep-{uuid.uuid4().hex[:10]}"
    fs, root = get_filesystem(parsed._replace(path=sub).geturl())
    fs.mkdirs(root)
    yield Backend("webhdfs-real", fs, root)
    fs.delete(root, recursive=True)
