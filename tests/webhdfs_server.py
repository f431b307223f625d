"""A WebHDFS-protocol TEST server. It is NOT HDFS: no blocks, replication, leases or permissions.

It speaks exactly the REST subset of ``https://hadoop.apache.org/docs/stable/hadoop-project-dist/
hadoop-hdfs/WebHDFS.html`` that ``replication.fs_webhdfs`` (through the ``hdfs`` package) uses, with
the shapes a real NameNode/DataNode pair returns, backed by a temporary local directory:

- two listeners on 127.0.0.1, a "namenode" and a "datanode" port, like a real cluster:
  ``CREATE`` (PUT), ``APPEND`` (POST) and ``OPEN`` (GET) on the namenode answer
  ``307 Temporary Redirect`` with a ``Location`` on the datanode port, and only the datanode moves
  file bytes (CREATE answers ``201 Created``);
- ``OPEN`` honours ``offset`` and ``length`` (``offset`` past the end → 403 ``EOFException``, as
  ``DFSInputStream.seek`` does; ``offset`` == length → empty body);
- ``GETFILESTATUS`` → ``{"FileStatus": {...}}``, ``LISTSTATUS`` → ``{"FileStatuses": {"FileStatus":
  [...]}}`` (a file lists as itself with ``pathSuffix`` ""), ``MKDIRS``/``RENAME``/``DELETE`` →
  ``{"boolean": ...}``, ``SETTIMES`` → 200 with no body, ``GETHOMEDIRECTORY`` → ``{"Path": ...}``;
- errors as ``{"RemoteException": {"exception", "javaClassName", "message"}}`` with 404 for
  ``FileNotFoundException`` and 403 for the rest; RENAME follows HDFS: false when the source is
  missing, the destination is an existing file or its parent is missing; into an existing directory.

Every request is recorded in ``server.requests`` (``RequestRecord``: port role, method, op, path,
query, bytes of body sent or received), so tests can check e.g. that a read from an offset never
transferred the bytes before it.

Run standalone (for manual checks or other processes): ``python tests/webhdfs_server.py --root DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

PREFIX = "/webhdfs/v1"
HOST = "127.0.0.1"
BLOCK_SIZE = 134217728

_EXCEPTIONS = {
    "FileNotFoundException": ("java.io.FileNotFoundException", HTTPStatus.NOT_FOUND),
    "FileAlreadyExistsException": ("org.apache.hadoop.fs.FileAlreadyExistsException", HTTPStatus.FORBIDDEN),
    "PathIsNotEmptyDirectoryException": (
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
        HTTPStatus.FORBIDDEN,
    ),
    "EOFException": ("java.io.EOFException", HTTPStatus.FORBIDDEN),
    "IllegalArgumentException": ("java.lang.IllegalArgumentException", HTTPStatus.BAD_REQUEST),
    "ParentNotDirectoryException": ("org.apache.hadoop.fs.ParentNotDirectoryException", HTTPStatus.FORBIDDEN),
    "UnsupportedOperationException": ("java.lang.UnsupportedOperationException", HTTPStatus.BAD_REQUEST),
}


class RemoteError(Exception):
    """An error answered as a WebHDFS RemoteException."""

    def __init__(self, exception: str, message: str):
        super().__init__(message)
        self.exception = exception
        self.message = message


@dataclass(frozen=True)
class RequestRecord:
    """One request the server handled."""

    role: str  # "namenode" or "datanode"
    method: str
    op: str
    path: str
    query: dict[str, str]
    bytes_in: int
    bytes_out: int
    status: int


class _Handler(BaseHTTPRequestHandler):
    server: _RoleServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    # Buffered: the response leaves in one flush after _dispatch returns, so a request is always
    # recorded before its client can see the answer (tests read server.requests right after a call).
    wbufsize = -1

    def log_message(self, format: str, *args: object) -> None:
        pass

    # -- dispatch -------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        op = query.get("op", "").upper()
        self._bytes_in = 0
        self._bytes_out = 0
        self._status = 500
        if not parts.path.startswith(PREFIX):
            self._read_body()
            self._send_json(HTTPStatus.NOT_FOUND, {"error": f"not a WebHDFS path: {parts.path}"})
            self._record(method, op, parts.path, query)
            return
        hdfs_path = "/" + unquote(parts.path[len(PREFIX) :]).strip("/")
        try:
            handler = getattr(self, f"_{self.server.role}_{method}_{op}", None)
            if handler is None:
                self._read_body()
                raise RemoteError("UnsupportedOperationException", f"{method} op={op} is not supported")
            handler(hdfs_path, query)
        except RemoteError as exc:
            java, status = _EXCEPTIONS[exc.exception]
            self._send_json(
                status,
                {"RemoteException": {"exception": exc.exception, "javaClassName": java, "message": exc.message}},
            )
        self._record(method, op, hdfs_path, query)

    def _record(self, method: str, op: str, path: str, query: dict[str, str]) -> None:
        self.server.owner._record(
            RequestRecord(self.server.role, method, op, path, query, self._bytes_in, self._bytes_out, self._status)
        )

    # -- helpers --------------------------------------------------------------------------------
    def _local(self, hdfs_path: str) -> Path:
        return self.server.owner.local_path(hdfs_path)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            data = b"".join(chunks)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else b""
        self._bytes_in = len(data)
        return data

    def _send_json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self._status = int(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_empty(self, status: int, headers: dict[str, str] | None = None) -> None:
        self._status = int(status)
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _redirect(self, hdfs_path: str, query: dict[str, str]) -> None:
        """307 to the datanode, as a NameNode does for CREATE, APPEND and OPEN."""
        owner = self.server.owner
        params = dict(query)
        params["namenoderpcaddress"] = f"{HOST}:{owner.namenode_port}"
        location = f"http://{HOST}:{owner.datanode_port}{PREFIX}{_quote(hdfs_path)}?{urlencode(params)}"
        self._read_body()  # a client may send a body to the namenode; it is ignored there
        self._send_empty(HTTPStatus.TEMPORARY_REDIRECT, {"Location": location})

    def _status_of(self, local: Path, suffix: str) -> dict[str, object]:
        st = local.stat()
        is_dir = local.is_dir()
        return {
            "accessTime": 0 if is_dir else st.st_atime_ns // 1_000_000,
            "blockSize": 0 if is_dir else BLOCK_SIZE,
            "childrenNum": len(list(local.iterdir())) if is_dir else 0,
            "fileId": st.st_ino,
            "group": "supergroup",
            "length": 0 if is_dir else st.st_size,
            "modificationTime": st.st_mtime_ns // 1_000_000,
            "owner": self.server.owner.user,
            "pathSuffix": suffix,
            "permission": "755" if is_dir else "644",
            "replication": 0 if is_dir else 1,
            "storagePolicy": 0,
            "type": "DIRECTORY" if is_dir else "FILE",
        }

    def _require(self, hdfs_path: str) -> Path:
        local = self._local(hdfs_path)
        if not local.exists():
            raise RemoteError("FileNotFoundException", f"File does not exist: {hdfs_path}")
        return local

    def _make_parents(self, hdfs_path: str, local: Path) -> None:
        for parent in reversed(local.parents):
            if parent.exists() and not parent.is_dir():
                raise RemoteError("ParentNotDirectoryException", f"Parent path is not a directory: {hdfs_path}")
        local.parent.mkdir(parents=True, exist_ok=True)

    # -- namenode operations --------------------------------------------------------------------
    def _namenode_GET_GETFILESTATUS(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._require(hdfs_path)
        self._send_json(HTTPStatus.OK, {"FileStatus": self._status_of(local, "")})

    def _namenode_GET_LISTSTATUS(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._require(hdfs_path)
        if local.is_dir():
            statuses = [self._status_of(child, child.name) for child in sorted(local.iterdir())]
        else:
            statuses = [self._status_of(local, "")]
        self._send_json(HTTPStatus.OK, {"FileStatuses": {"FileStatus": statuses}})

    def _namenode_GET_GETHOMEDIRECTORY(self, hdfs_path: str, query: dict[str, str]) -> None:
        self._send_json(HTTPStatus.OK, {"Path": f"/user/{query.get('user.name', self.server.owner.user)}"})

    def _namenode_PUT_MKDIRS(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._local(hdfs_path)
        if local.exists() and not local.is_dir():
            raise RemoteError("FileAlreadyExistsException", f"Path is not a directory: {hdfs_path}")
        self._make_parents(hdfs_path, local)
        local.mkdir(exist_ok=True)
        self._send_json(HTTPStatus.OK, {"boolean": True})

    def _namenode_PUT_RENAME(self, hdfs_path: str, query: dict[str, str]) -> None:
        destination = query.get("destination")
        if not destination or not destination.startswith("/"):
            raise RemoteError("IllegalArgumentException", f"Invalid value for destination: {destination}")
        src = self._local(hdfs_path)
        dst = self._local(destination)
        if dst.is_dir():
            dst = dst / src.name
        ok = src.exists() and not dst.exists() and dst.parent.is_dir() and hdfs_path != "/"
        if ok:
            os.rename(src, dst)
        self._send_json(HTTPStatus.OK, {"boolean": ok})

    def _namenode_DELETE_DELETE(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._local(hdfs_path)
        recursive = query.get("recursive", "false").lower() == "true"
        if not local.exists():
            self._send_json(HTTPStatus.OK, {"boolean": False})
            return
        if local.is_dir():
            if any(local.iterdir()) and not recursive:
                raise RemoteError(
                    "PathIsNotEmptyDirectoryException", f"{hdfs_path} is non empty': Directory is not empty"
                )
            shutil.rmtree(local)
        else:
            local.unlink()
        self._send_json(HTTPStatus.OK, {"boolean": True})

    def _namenode_PUT_SETTIMES(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._require(hdfs_path)
        st = local.stat()
        mtime = int(query.get("modificationtime", "-1"))
        atime = int(query.get("accesstime", "-1"))
        mtime_ns = st.st_mtime_ns if mtime == -1 else mtime * 1_000_000
        atime_ns = st.st_atime_ns if atime == -1 else atime * 1_000_000
        os.utime(local, ns=(atime_ns, mtime_ns))
        self._send_empty(HTTPStatus.OK)

    def _namenode_PUT_CREATE(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._local(hdfs_path)
        if local.exists() and (local.is_dir() or query.get("overwrite", "false").lower() != "true"):
            self._read_body()
            raise RemoteError("FileAlreadyExistsException", f"{hdfs_path} for client 127.0.0.1 already exists")
        self._redirect(hdfs_path, query)

    def _namenode_POST_APPEND(self, hdfs_path: str, query: dict[str, str]) -> None:
        self._require(hdfs_path)
        self._redirect(hdfs_path, query)

    def _namenode_GET_OPEN(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._require(hdfs_path)
        if local.is_dir():
            raise RemoteError("FileNotFoundException", f"Path is not a file: {hdfs_path}")
        self._redirect(hdfs_path, query)

    # -- datanode operations --------------------------------------------------------------------
    def _datanode_PUT_CREATE(self, hdfs_path: str, query: dict[str, str]) -> None:
        data = self._read_body()
        local = self._local(hdfs_path)
        overwrite = query.get("overwrite", "false").lower() == "true"
        if local.exists() and (local.is_dir() or not overwrite):
            raise RemoteError("FileAlreadyExistsException", f"{hdfs_path} for client 127.0.0.1 already exists")
        self._make_parents(hdfs_path, local)
        with self.server.owner.lock, open(local, "wb") as out:
            out.write(data)
        self._send_empty(
            HTTPStatus.CREATED, {"Location": f"hdfs://{HOST}:{self.server.owner.namenode_port}{hdfs_path}"}
        )

    def _datanode_POST_APPEND(self, hdfs_path: str, query: dict[str, str]) -> None:
        data = self._read_body()
        local = self._require(hdfs_path)
        with self.server.owner.lock, open(local, "ab") as out:
            out.write(data)
        self._send_empty(HTTPStatus.OK)

    def _datanode_GET_OPEN(self, hdfs_path: str, query: dict[str, str]) -> None:
        local = self._require(hdfs_path)
        size = local.stat().st_size
        offset = int(query.get("offset", "0") or 0)
        length = query.get("length")
        if offset < 0 or offset > size:
            raise RemoteError("EOFException", f"Cannot seek after EOF: offset={offset} length={size} {hdfs_path}")
        count = size - offset if length in (None, "") else max(0, min(int(length), size - offset))
        self._status = HTTPStatus.OK
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(count))
        self.end_headers()
        with open(local, "rb") as stream:
            stream.seek(offset)
            left = count
            while left:
                chunk = stream.read(min(left, 1 << 16))
                if not chunk:
                    break
                try:
                    self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):  # the reader stopped (seek, close)
                    self.close_connection = True
                    return
                left -= len(chunk)
                self._bytes_out += len(chunk)


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


class _RoleServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: WebHdfsTestServer, role: str):
        super().__init__((HOST, 0), _Handler)
        self.owner = owner
        self.role = role

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # a reader closed its OPEN stream early (seek or close): normal for a client
        super().handle_error(request, client_address)


class WebHdfsTestServer:
    """A namenode + datanode pair of HTTP listeners speaking WebHDFS over ``root`` (a local folder)."""

    def __init__(self, root: str | os.PathLike[str], user: str = "hbrep"):
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.user = user
        self.lock = threading.Lock()
        self.requests: list[RequestRecord] = []
        self._namenode = _RoleServer(self, "namenode")
        self._datanode = _RoleServer(self, "datanode")
        self._threads: list[threading.Thread] = []

    @property
    def namenode_port(self) -> int:
        return int(self._namenode.server_address[1])

    @property
    def datanode_port(self) -> int:
        return int(self._datanode.server_address[1])

    @property
    def http_url(self) -> str:
        """The namenode's HTTP address, e.g. ``http://127.0.0.1:40123``."""
        return f"http://{HOST}:{self.namenode_port}"

    def uri(self, path: str = "/") -> str:
        """A ``webhdfs://`` root URI for ``path`` on this server."""
        return f"webhdfs://{HOST}:{self.namenode_port}{path}"

    def local_path(self, hdfs_path: str) -> Path:
        """Where an HDFS path lives in the backing folder (never outside it)."""
        parts = [p for p in hdfs_path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise RemoteError("IllegalArgumentException", f"Invalid path name {hdfs_path}")
        return self.root.joinpath(*parts)

    def _record(self, record: RequestRecord) -> None:
        with self.lock:
            self.requests.append(record)

    def start(self) -> WebHdfsTestServer:
        """Serve both listeners on daemon threads; returns self."""
        for server in (self._namenode, self._datanode):
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop serving and close both sockets."""
        for server in (self._namenode, self._datanode):
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> WebHdfsTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:  # pragma: no cover - manual use
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    with WebHdfsTestServer(args.root) as server:
        print(f"namenode {server.http_url}  datanode port {server.datanode_port}  uri {server.uri('/')}", flush=True)
        while True:
            time.sleep(3600)


if __name__ == "__main__":  # pragma: no cover
    main()
