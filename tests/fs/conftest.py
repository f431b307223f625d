"""Backends for the FileSystem contract tests, and helpers for tests against the real HDFS.

``backend`` runs each contract test against:
- ``local``: :class:`replication.fs.LocalFileSystem` on a temp dir;
- ``webhdfs-real``: :class:`replication.fs.webhdfs.WebHdfsFileSystem` against a real HDFS: the
  session's ``hdfs_cluster`` (Hadoop's own NameNode and DataNode on loopback), or the HDFS named by
  ``HBREP_TEST_WEBHDFS_URL`` when set (e.g. ``webhdfs://namenode:9870/tmp/hbrep-tests?user=hdfs``).
  A fresh directory under its path is used and removed afterwards.

``hdfs_home(user)`` gives a fresh directory on the session HDFS owned by ``user`` (made by the
superuser, the OS user running the NameNode), and ``HttpLog`` records what the real NameNode and
DataNode answered to each WebHDFS request of one client (status, Location, Content-Length).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from replication.fs import FileSystem, LocalFileSystem, get_filesystem
from replication.fs.webhdfs import WebHdfsFileSystem

REAL_URL_ENV = "HBREP_TEST_WEBHDFS_URL"


@dataclass
class Backend:
    """A filesystem under test and a fresh, existing directory on it."""

    name: str
    fs: FileSystem
    base: str


@pytest.fixture(params=["local", "webhdfs-real"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each FileSystem backend, with a fresh base directory."""
    if request.param == "local":
        base = tmp_path / "fs"
        base.mkdir()
        yield Backend("local", LocalFileSystem(), str(base))
        return
    url = os.environ.get(REAL_URL_ENV) or request.getfixturevalue("hdfs_cluster").webhdfs_root("/tests")
    parsed = urlparse(url)
    sub = f"{parsed.path.rstrip('/')}/hbrep-{uuid.uuid4().hex[:10]}"
    fs, root = get_filesystem(parsed._replace(path=sub).geturl())
    fs.mkdirs(root)
    yield Backend("webhdfs-real", fs, root)
    fs.delete(root, recursive=True)


@pytest.fixture
def hdfs_home(hdfs_cluster) -> Callable[[str], str]:
    """``hdfs_home(user)``: a fresh ``/home-<id>`` on the session HDFS owned by ``user``."""
    superuser, _ = get_filesystem(hdfs_cluster.webhdfs_root("/"))
    made: list[str] = []

    def make(user: str) -> str:
        path = f"/home-{uuid.uuid4().hex[:10]}"
        superuser.mkdirs(path)
        superuser.client.set_owner(path, owner=user)  # type: ignore[attr-defined]
        made.append(path)
        return path

    yield make
    for path in made:
        superuser.delete(path, recursive=True)


@dataclass
class Answer:
    """One HTTP response of the real NameNode or DataNode to a WebHDFS request."""

    method: str
    port: int
    op: str
    path: str
    query: dict[str, str]
    status: int
    content_length: int | None


@dataclass
class HttpLog:
    """Every response a WebHdfsFileSystem's client received (redirects included), in order."""

    answers: list[Answer] = field(default_factory=list)

    @classmethod
    def attach(cls, fs: WebHdfsFileSystem) -> HttpLog:
        log = cls()
        fs.client._session.hooks["response"].append(log._record)  # type: ignore[attr-defined]
        return log

    def _record(self, response: Any, *args: Any, **kwargs: Any) -> None:
        url = urlparse(response.request.url)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = response.headers.get("Content-Length")
        path = unquote(url.path.removeprefix("/webhdfs/v1"))
        self.answers.append(Answer(response.request.method, url.port or 0, query.get("op", ""), path, query,
                                   response.status_code, int(length) if length is not None else None))  # fmt: skip

    def of(self, path: str, op: str) -> list[Answer]:
        return [a for a in self.answers if a.path == path and a.op == op]
