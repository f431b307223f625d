"""The HDFS backend of :mod:`replication.fs`, through WebHDFS (the ``hdfs`` package).

Roots: ``webhdfs://nn:9870/hbase`` (HTTP), ``swebhdfs://nn:9871/hbase`` (HTTPS) and ``hdfs://nn:9870/hbase``,
which is read as WebHDFS on the NameNode's *HTTP* port (hbrep never speaks the HDFS RPC protocol;
9870 is assumed when no port is given). Several NameNodes (HA) are given comma-separated:
``webhdfs://nn1:9870,nn2:9870/hbase``; the client fails over between them.

Authentication, from the URI query or the environment (the query wins):
``?user=hbase`` / ``HBREP_WEBHDFS_USER`` (simple auth: ``user.name``; default: the OS user) and
``?auth=kerberos`` / ``HBREP_WEBHDFS_AUTH=kerberos`` (SPNEGO, ``spnego.py``, as the process's Kerberos identity:
its keytab login, ``hbase.client.keytab.file``, or the ticket cache of ``kinit``; ``user`` is then a proxy user,
``doas``, which the NameNode allows only through ``hadoop.proxyuser.*``).

How the FileSystem promises map onto WebHDFS:

- ``open_read(path, offset)`` sends ``OPEN&offset=N``: the bytes before ``offset`` are never
  transferred; the stream re-opens at the new offset on ``seek``.
- A file still open for write (a region server's current WAL): the NameNode's length counts the last
  block only up to its last fsync (for an HBase WAL, usually just the header), while the DataNode
  serves every hflushed byte, as HDFS's own ``DFSInputStream`` reads them. ``readable_length`` asks the
  DataNode holding the file's end (the Content-Length of an OPEN whose body is not read), and an OPEN
  at an offset the NameNode refuses as "out of the range" of its length is sent straight to that
  DataNode (WebHDFS's two-step OPEN, the second step with the offset asked for).
- ``create`` creates the (empty) file at once; written bytes are buffered and every ``flush``/``sync``
  sends them with one ``APPEND``. WebHDFS has no hflush/hsync on an open stream, but an APPEND
  request returns only after the DataNode pipeline has closed the block, so bytes are durable and
  visible to readers when ``sync`` returns (needs ``dfs.support.append``, on by default since 2.x).
- ``rename`` is the NameNode's atomic RENAME (archive = rename). HDFS refuses to rename onto an
  existing file where POSIX replaces it; to keep the local backend's contract, an existing
  destination *file* is deleted first. That step is not atomic with the rename, so ``write_atomic``
  readers may briefly see no file (never a partial one).
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, TypeVar
from urllib.parse import parse_qs, parse_qsl, quote, urlencode, urlparse, urlsplit, urlunsplit

from replication.fs.types import FileStatus, FileSystemError
from replication.kerberos import KerberosError

ENV_USER = "HBREP_WEBHDFS_USER"
ENV_AUTH = "HBREP_WEBHDFS_AUTH"
DEFAULT_HTTP_PORT = 9870
DEFAULT_HTTPS_PORT = 9871
# HDFS answers these while a previous APPEND's lease or block recovery is still settling. The last two come
# from the NameNode's redirect of an APPEND (NamenodeWebHdfsMethods.chooseDatanode -> bestNode) when no live
# DataNode is listed yet for the file's last block, before any byte is sent: seen on the dev stack's one
# DataNode for the second APPEND of a WAL just created (make bench ONLY=failover_events at e47f8dc). All of
# them are refusals before any byte is sent, so they are safe to send again.
_RETRIABLE_APPEND = (
    "AlreadyBeingCreatedException",
    "RecoveryInProgressException",
    "RetriableException",
    "No active nodes contain this block",
    "No nodes contain this block",
)
# How long an APPEND refused so is sent again. An APPEND whose close failed on the DataNode (its DFSClient
# ran out of completeFile retries) leaves the file's lease with that dead client: every later APPEND gets
# AlreadyBeingCreatedException until the NameNode's lease soft limit (60 s, HdfsServerConstants) has passed,
# then RecoveryInProgressException until the block recovery it starts is over. Seen at 13918c7 (make bench
# ONLY=dist_vs_one_host): 3.5 s of retries were not enough and the WAL sync failed.
APPEND_REFUSED_RETRY_S = 90.0


def _refused_before_any_byte(exc: FileSystemError) -> bool:
    """Whether an APPEND failed with one of HDFS's refusals that come before any byte is sent."""
    return any(kind in str(exc) for kind in _RETRIABLE_APPEND)


T = TypeVar("T")


def webhdfs_urls(uri: str) -> str:
    """The ``hdfs`` package's URL string (``http://nn1:9870;http://nn2:9870``) for a root URI.

    Raises FileSystemError naming the URI for a scheme other than webhdfs/swebhdfs/hdfs or no host.
    """
    parsed = urlparse(uri)
    if parsed.scheme not in ("webhdfs", "swebhdfs", "hdfs"):
        raise FileSystemError(f"not a WebHDFS URI: {uri!r} (expected webhdfs://, swebhdfs:// or hdfs://)")
    hosts = [h.strip() for h in parsed.netloc.rsplit("@", 1)[-1].split(",") if h.strip()]
    if not hosts:
        raise FileSystemError(f"WebHDFS URI {uri!r} names no NameNode host")
    http = "https" if parsed.scheme == "swebhdfs" else "http"
    default = DEFAULT_HTTPS_PORT if http == "https" else DEFAULT_HTTP_PORT
    return ";".join(f"{http}://{h if ':' in h else f'{h}:{default}'}" for h in hosts)


class WebHdfsFileSystem:
    """FileSystem over WebHDFS; paths are absolute HDFS paths (``/hbase/WALs/...``)."""

    def __init__(self, client: Any, url: str) -> None:
        self.client = client
        self.url = url

    @classmethod
    def from_uri(
        cls,
        uri: str,
        *,
        user: str | None = None,
        auth: str | None = None,
        timeout: float | None = 60.0,
        env: dict[str, str] | None = None,
    ) -> WebHdfsFileSystem:
        """A backend for ``webhdfs://``/``swebhdfs://``/``hdfs://`` roots (see the module docstring).

        Raises FileSystemError (one line) for a malformed URI, an unknown ``auth`` or a missing
        Kerberos package. No request is sent here.
        """
        environ = os.environ if env is None else env
        query = {k: v[-1] for k, v in parse_qs(urlparse(uri).query).items()}
        url = webhdfs_urls(uri)
        user = user or query.get("user") or environ.get(ENV_USER) or None
        mode = (auth or query.get("auth") or environ.get(ENV_AUTH) or "simple").strip().lower()
        if mode == "simple":
            from hdfs import InsecureClient  # hdfs/requests load only when a WebHDFS root is opened

            client = InsecureClient(url, user=user, timeout=timeout)
        elif mode == "kerberos":
            import requests
            from hdfs import Client

            from replication.fs.spnego import SpnegoAuth

            session = requests.Session()
            session.auth = SpnegoAuth()  # the process's Kerberos identity; ``user`` becomes doas (a proxy user)
            client = Client(url, proxy=user, timeout=timeout, session=session)
        else:
            raise FileSystemError(f"unknown WebHDFS auth {mode!r} for {uri} (expected simple or kerberos)")
        return cls(client, url)

    # -- error mapping --------------------------------------------------------------------------
    def _call(self, what: str, path: str, func: Callable[[], T]) -> T:
        from hdfs.util import HdfsError  # loaded with the client (see open), not by every fs user
        from requests import RequestException

        try:
            return func()
        except HdfsError as exc:
            raise self._error(what, path, exc) from None
        except RequestException as exc:
            raise FileSystemError(
                f"WebHDFS at {self.url} unreachable during {what} {path}: {type(exc).__name__}"
            ) from None
        except KerberosError as exc:  # SPNEGO (spnego.py): no ticket, a refused or unproven authentication
            raise FileSystemError(f"WebHDFS {what} {path}: {exc}") from None

    def _error(self, what: str, path: str, exc: Any) -> FileSystemError:
        kind = getattr(exc, "exception", None)
        if kind == "FileNotFoundException":
            return FileSystemError(f"file not found: {path}")
        if kind == "FileAlreadyExistsException":
            return FileSystemError(f"file already exists: {path}")
        # a real NameNode appends the Java stack trace ("\n\tat org.apache...") to the message: keep
        # only what it says, so the error stays one line
        text = str(exc.message if hasattr(exc, "message") else exc)
        message = " ".join(text.split("\n\tat ", 1)[0].split())
        if kind is None and message.startswith("Authentication failure"):  # the hdfs package's words for a 401
            return FileSystemError(
                f"WebHDFS {what} {path}: {self.url} refused the request as not authenticated; a Kerberized "
                f"HDFS wants SPNEGO: open the root with ?auth=kerberos (or {ENV_AUTH}=kerberos)"
            )
        return FileSystemError(f"WebHDFS {what} {path} failed: {kind or 'error'}: {message}")

    # -- reads ----------------------------------------------------------------------------------
    def open_read(self, path: str, offset: int = 0) -> BinaryIO:
        """A buffered stream of ``path`` from ``offset`` (OPEN&offset: nothing before it is fetched)."""
        raw = _WebHdfsInput(self, path, offset)
        return io.BufferedReader(raw, buffer_size=1 << 20)  # type: ignore[return-value]

    def read_range(self, path: str, offset: int, length: int | None = None) -> bytes:
        """The bytes of ``path`` from ``offset`` (to the end, or ``length`` bytes) in one OPEN."""
        if length == 0:
            self.status(path)
            return b""
        response = self._open_response("read", path, offset, length)
        try:
            return self._call("read", path, lambda: response.raw.read())
        finally:
            response.close()

    def readable_length(self, path: str) -> int:
        """The bytes a reader can read now: the length for a closed file; for a file still open for
        write, up to its last hflushed byte (see the module docstring). FileSystemError if missing."""
        known = self.status(path).length
        anchor = max(0, known - 1)
        response = self._open_response("open", path, anchor, None)
        try:
            size = response.headers.get("Content-Length")
        finally:
            response.close()
        return known if size is None else max(known, anchor + int(size))

    def _open_raw(self, path: str, offset: int) -> tuple[Any, Any]:
        response = self._open_response("open", path, offset, None)
        return response, response.raw

    def _open_response(self, what: str, path: str, offset: int, length: int | None) -> Any:
        """The streamed response of ``OPEN&offset`` (its body not yet read).

        An offset at the end of the file reads nothing (a local read returns b""); past the end it is
        one EOFException line. The NameNode refuses any offset at or past the length it knows ("Offset=N
        out of the range [0, N)"), which for a file being written excludes its hflushed bytes: then the
        DataNode is asked directly, and it answers up to the bytes it holds.
        """
        params = {"offset": offset} if length is None else {"offset": offset, "length": length}
        try:
            return self._call(what, path, lambda: self.client._open(path, **params))
        except FileSystemError as exc:
            if "out of the range" not in str(exc):
                raise
        known = self.status(path).length
        if known == 0 or offset < known:  # not the case above: the file changed meanwhile
            raise FileSystemError(f"WebHDFS {what} {path} failed: the file changed during the OPEN") from None
        return self._call(what, path, lambda: self._open_on_datanode(path, known - 1, params))

    def _open_on_datanode(self, path: str, anchor: int, params: dict[str, int]) -> Any:
        """WebHDFS's two-step OPEN by hand: the NameNode redirects an OPEN at ``anchor`` (a byte it
        knows) to the DataNode holding it; that DataNode is sent the OPEN with ``params`` instead."""
        # the hdfs package (pinned 2.7.3) has no OPEN without redirects: its session (auth, user.name),
        # current NameNode URL and error mapping are reused from its internals
        from hdfs.client import _to_error

        host = self.client._urls[0].rstrip("/")
        url = f"{host}/webhdfs/v1{quote(self.client.resolve(path), '/= ')}"
        first = self.client._request("GET", url, params={"op": "OPEN", "offset": anchor}, allow_redirects=False)
        first.close()
        location = first.headers.get("Location")
        if first.status_code >= 400:
            raise _to_error(first)
        if first.status_code not in (301, 302, 303, 307) or not location:
            status = first.status_code
            raise FileSystemError(f"WebHDFS open {path} failed: the NameNode named no DataNode (HTTP {status})")
        parts = urlsplit(location)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ("offset", "length")]
        query += [(k, str(v)) for k, v in params.items()]
        response = self.client._request("GET", urlunsplit(parts._replace(query=urlencode(query))), stream=True)
        if response.status_code >= 400:
            error = _to_error(response)  # reads the body: before closing
            response.close()
            raise error
        return response

    # -- writes ---------------------------------------------------------------------------------
    def create(self, path: str, overwrite: bool = False) -> BinaryIO:
        """A new file (created now, parents too) open for writing; bytes go out on flush/sync/close.

        FileSystemError if it exists and not ``overwrite``.
        """
        self._call("create", path, lambda: self.client.write(path, data=b"", overwrite=overwrite))
        return _WebHdfsOutput(self, path)  # type: ignore[return-value]

    def _append(self, path: str, data: bytes) -> None:
        """One APPEND of ``data``, sent again while HDFS refuses it before any byte (``_RETRIABLE_APPEND``),
        for up to ``APPEND_REFUSED_RETRY_S``. Any other failure is raised: whether its bytes landed is not
        known (see ``_WebHdfsOutput.flush``)."""
        deadline = time.monotonic() + APPEND_REFUSED_RETRY_S
        delay = 0.05
        while True:
            try:
                self._call("append", path, lambda: self.client.write(path, data=data, append=True))
                return
            except FileSystemError as exc:
                if not _refused_before_any_byte(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def sync(self, stream: BinaryIO) -> None:
        """Send what was written (one APPEND): durable on the DataNodes when this returns."""
        stream.flush()

    def write_atomic(self, path: str, data: bytes) -> None:
        """Write a temp file next to ``path``, then RENAME it over ``path`` (see module docstring)."""
        directory, name = posixpath.split(path)
        tmp = posixpath.join(directory, f".{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        self._call("create", tmp, lambda: self.client.write(tmp, data=data, overwrite=True))
        try:
            self.rename(tmp, path)
        except BaseException:
            with contextlib.suppress(FileSystemError):
                self.delete(tmp)
            raise

    # -- metadata -------------------------------------------------------------------------------
    def _status_json(self, path: str) -> dict[str, Any] | None:
        return self._call("status", path, lambda: self.client.status(path, strict=False))

    def exists(self, path: str) -> bool:
        return self._status_json(path) is not None

    def status(self, path: str) -> FileStatus:
        """Length, mtime (ms) and kind of ``path``; FileSystemError if missing."""
        st = self._status_json(path)
        if st is None:
            raise FileSystemError(f"file not found: {path}")
        return _to_status(path, st)

    def list(self, path: str) -> list[FileStatus]:
        """The entries of directory ``path`` sorted by name ([] when it does not exist)."""
        if self._status_json(path) is None:
            return []
        try:
            entries = self._call("list", path, lambda: self.client.list(path, status=True))
        except FileSystemError as exc:
            if str(exc) == f"file not found: {path}":  # removed since the status call
                return []
            raise
        return sorted((_to_status(posixpath.join(path, name), st) for name, st in entries), key=lambda s: s.name)

    def mkdirs(self, path: str) -> None:
        self._call("mkdirs", path, lambda: self.client.makedirs(path))

    def rename(self, src: str, dst: str) -> None:
        """Atomically move ``src`` to ``dst`` (parents of dst created); FileSystemError if src is missing."""
        self.mkdirs(posixpath.dirname(dst) or "/")
        if self._rename(src, dst):
            return
        if self._status_json(src) is None:
            raise FileSystemError(f"cannot rename {src}: file not found")
        existing = self._status_json(dst)
        if existing is not None and existing.get("type") == "FILE":
            self.delete(dst)  # HDFS never replaces; POSIX does (see module docstring)
            if self._rename(src, dst):
                return
        raise FileSystemError(f"cannot rename {src} to {dst}: the NameNode refused")

    def _rename(self, src: str, dst: str) -> bool:
        """One RENAME; False when the NameNode answered {"boolean": false}."""
        from hdfs.util import HdfsError  # loaded with the client, not by every fs user

        def rename() -> bool:
            try:
                self.client.rename(src, dst)
            except HdfsError as exc:
                if exc.exception is None and str(exc.message).startswith("Unable to rename"):
                    return False
                raise
            return True

        return self._call("rename", src, rename)

    def delete(self, path: str, recursive: bool = False) -> bool:
        """Delete a file (or a directory tree when ``recursive``); False if it did not exist."""
        return bool(self._call("delete", path, lambda: self.client.delete(path, recursive=recursive)))

    def set_mtime(self, path: str, mtime_ms: int) -> None:
        # accesstime -1 = unchanged (WebHDFS SETTIMES)
        self._call("settimes", path, lambda: self.client.set_times(path, access_time=-1, modification_time=mtime_ms))

    def join(self, *parts: str) -> str:
        return posixpath.join(*parts)

    def __repr__(self) -> str:
        return f"WebHdfsFileSystem({self.url!r})"


def _to_status(path: str, st: dict[str, Any]) -> FileStatus:
    is_dir = st.get("type") == "DIRECTORY"
    return FileStatus(path, 0 if is_dir else int(st.get("length", 0)), int(st.get("modificationTime", 0)), is_dir)


class _WebHdfsInput(io.RawIOBase):
    """A seekable raw stream over OPEN responses; a seek drops the response and re-opens there."""

    def __init__(self, fs: WebHdfsFileSystem, path: str, offset: int) -> None:
        super().__init__()
        self._fs = fs
        self._path = path
        self._pos = offset
        self._manager: Any = None  # the OPEN response (None: nothing to close)
        self._raw: Any = None
        self._open()  # errors (missing file, offset past the end) surface at open, as locally

    def _open(self) -> None:
        self._manager, self._raw = self._fs._open_raw(self._path, self._pos)

    def _drop(self) -> None:
        if self._manager is not None:
            with contextlib.suppress(Exception):
                self._manager.close()
        self._manager = None
        self._raw = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            offset += self._fs.status(self._path).length
        if offset != self._pos:
            self._drop()
            self._pos = offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        if self._raw is None:
            self._open()
        view = memoryview(buffer).cast("B")
        try:
            data = self._raw.read(len(view))
        except Exception as exc:
            raise FileSystemError(
                f"WebHDFS read of {self._path} at offset {self._pos} failed: {type(exc).__name__}"
            ) from None
        n = len(data)
        view[:n] = data
        self._pos += n
        return n

    def close(self) -> None:
        self._drop()
        super().close()


class _WebHdfsOutput(io.RawIOBase):
    """Buffers writes; ``flush`` APPENDs the buffered bytes (nothing is sent when there are none).

    An APPEND that failed may still have written its bytes: the DataNode closes the file after the
    bytes are in the pipeline, and that close can fail (a lease or completeFile error reported after the
    write). Sending them again would write them twice. So after such a failure the next ``flush`` first
    asks how long the file is (``readable_length``): if the failed APPEND's bytes are there, they are not
    sent again; if none are, they are; a part of them is a FileSystemError (the file's end is then not a
    whole write, and the writer must move to a new file)."""

    def __init__(self, fs: WebHdfsFileSystem, path: str) -> None:
        super().__init__()
        self._fs = fs
        self.name = path
        self._pending = bytearray()
        self._written = 0  # bytes of this stream known to be in the file
        self._unsure = 0  # bytes of a failed APPEND that may be in the file (0: none)

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError(f"write to closed WebHDFS stream {self.name}")
        view = memoryview(data).cast("B")
        self._pending += view
        return len(view)

    def flush(self) -> None:
        if self.closed or not self._pending:
            return
        if self._unsure:
            self._settle_failed_append()
            if not self._pending:
                return
        data = bytes(self._pending)
        try:
            self._fs._append(self.name, data)
        except FileSystemError as exc:
            if not _refused_before_any_byte(exc):
                self._unsure = len(data)
            raise
        del self._pending[: len(data)]
        self._written += len(data)

    def _settle_failed_append(self) -> None:
        """Drop from the buffer what a failed APPEND did write (see the class docstring)."""
        landed = self._fs.readable_length(self.name) - self._written
        if landed not in (0, self._unsure):
            raise FileSystemError(
                f"WebHDFS append to {self.name}: a failed APPEND of {self._unsure} bytes left {landed} of them "
                "in the file; its end is not a whole write"
            )
        del self._pending[:landed]
        self._written += landed
        self._unsure = 0

    def close(self) -> None:
        if not self.closed:
            try:
                self.flush()
            finally:
                super().close()

    def __iter__(self) -> Iterator[bytes]:  # pragma: no cover - not readable
        raise io.UnsupportedOperation("not readable")
