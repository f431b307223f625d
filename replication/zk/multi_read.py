"""Batched reads: ZooKeeper's ``multiRead`` (OpCode 22, ZooKeeper 3.6+) sent through a kazoo session.

Why. kazoo pays a fixed Python cost per request (queue it, wake the I/O thread through a socket
pair, one ``select`` per request sent and per response read, an ``AsyncResult`` with a lock), which
capped pipelined ``get_async`` at ~2,000 znodes/s on our 2-core machines (profiled with pyinstrument:
most of the time in the wake-up ``socket.send`` and GIL hand-offs, not on the wire). ``multiRead``
carries many ``getData``/``getChildren`` ops in ONE request and ONE response, so 30,000 znodes take
~20 requests, and ZooKeeper's request counters grow with batches, not with znodes.

Unlike ``multi``, ``multiRead`` is not atomic and never fails as a whole: each op gets its own result
or error (``MultiResponse`` with ``GetDataResult`` / ``GetChildrenResult`` / ``ErrorResult``), which is
what a snapshot wants. Each batch is bounded (``max_ops`` and an estimate of the response size) so
no request or response nears ``jute.maxbuffer`` (1 MiB); a few batches are kept in flight at once.

kazoo has no ``multiRead``; the request class below is a kazoo-compatible request (``type``,
``serialize``, ``deserialize``) handed to ``KazooClient._call``, the same path kazoo's own requests
take, so the session, its auth (ACLs) and its chroot apply unchanged.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from kazoo.client import KazooClient
from kazoo.exceptions import EXCEPTIONS, NoAuthError
from kazoo.protocol.states import ZnodeStat

MULTI_READ = 22  # ZooDefs.OpCode.multiRead
GET_DATA = 4  # ZooDefs.OpCode.getData
GET_CHILDREN = 8  # ZooDefs.OpCode.getChildren
ERROR = -1

DEFAULT_MAX_OPS = 2_000
DEFAULT_MAX_RESPONSE_BYTES = 384 * 1024  # estimated; far below jute.maxbuffer (0xfffff)
DEFAULT_WINDOW = 4  # batches in flight at once

# Requests and ops sent by this process (benchmarks and logs; never used for decisions).
STATS: dict[str, int] = {"requests": 0, "ops": 0}

_INT = struct.Struct("!i")
_HEADER = struct.Struct("!iBi")  # MultiHeader: type, done, err
_STAT = struct.Struct("!qqqqiiiqiiq")
_DONE = _HEADER.pack(-1, True, -1)
_STAT_BYTES = _STAT.size
_PER_OP_RESPONSE = _HEADER.size + 4 + _STAT_BYTES  # header + data length + stat, without the data


class Read(NamedTuple):
    """One op of a multiRead: ``kind`` is ``"data"`` (bytes + stat) or ``"children"`` (names)."""

    kind: str
    path: str
    expect_bytes: int = 16  # the caller's guess of the data (or children names) size, for batching


class _MultiReadRequest:
    """A kazoo request object for OpCode 22 (kazoo's connection calls serialize/deserialize)."""

    type = MULTI_READ

    def __init__(self, ops: Sequence[tuple[int, bytes]]):
        self.ops = ops  # (op type, utf-8 path already chrooted)

    def serialize(self) -> bytes:
        parts = []
        for op_type, path in self.ops:
            # MultiHeader(type, done=false, err=-1) + GetDataRequest/GetChildrenRequest(path, watch=false)
            parts.append(_HEADER.pack(op_type, False, -1) + _INT.pack(len(path)) + path + b"\x00")
        parts.append(_DONE)
        return b"".join(parts)

    @staticmethod
    def deserialize(buffer: bytes, offset: int) -> list[Any]:
        results: list[Any] = []
        unpack_header, unpack_int, unpack_stat = _HEADER.unpack_from, _INT.unpack_from, _STAT.unpack_from
        make_stat = ZnodeStat._make
        while True:
            op_type, done, _err = unpack_header(buffer, offset)
            offset += 9
            if done:
                return results
            if op_type == GET_DATA:
                length = unpack_int(buffer, offset)[0]
                offset += 4
                if length < 0:
                    data = b""
                else:
                    data = bytes(buffer[offset : offset + length])
                    offset += length
                results.append((data, make_stat(unpack_stat(buffer, offset))))
                offset += _STAT_BYTES
            elif op_type == GET_CHILDREN:
                count = unpack_int(buffer, offset)[0]
                offset += 4
                names = []
                for _ in range(max(count, 0)):
                    length = unpack_int(buffer, offset)[0]
                    offset += 4
                    names.append(buffer[offset : offset + length].decode("utf-8"))
                    offset += length
                results.append(names)
            elif op_type == ERROR:
                code = unpack_int(buffer, offset)[0]
                offset += 4
                results.append(EXCEPTIONS[code]())
            else:
                raise ValueError(f"multiRead: unexpected result type {op_type}")


def _batches(ops: Sequence[Read], max_ops: int, max_bytes: int) -> Iterable[Sequence[Read]]:
    start, size = 0, 0
    for index, op in enumerate(ops):
        cost = _PER_OP_RESPONSE + op.expect_bytes
        if index > start and (index - start >= max_ops or size + cost > max_bytes):
            yield ops[start:index]
            start, size = index, 0
        size += cost
    if start < len(ops):
        yield ops[start:]


def multi_read(
    zk: KazooClient,
    ops: Sequence[Read],
    *,
    max_ops: int = DEFAULT_MAX_OPS,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    window: int = DEFAULT_WINDOW,
) -> list[Any]:
    """Read every op; one result per op, in order: ``(data, ZnodeStat)``, ``[child names]`` or an exception.

    A missing znode gives a ``NoNodeError`` instance in its slot (nothing is raised for it); a denied
    read raises ``NoAuthError`` (so :func:`replication.zk.acl.zk_access` can name the znode); a lost
    connection raises the session's error. Requests never exceed ``max_ops`` ops, and responses are
    estimated from ``Read.expect_bytes`` to stay under ``max_response_bytes``.
    """
    chroot = (zk.chroot or "").encode("utf-8")
    results: list[Any] = []
    pending: deque[Any] = deque()

    def collect() -> None:
        batch_results = pending.popleft().get()
        for result in batch_results:
            if isinstance(result, NoAuthError):
                raise result
        results.extend(batch_results)

    for batch in _batches(ops, max_ops, max_response_bytes):
        request = _MultiReadRequest(
            [(GET_DATA if op.kind == "data" else GET_CHILDREN, chroot + op.path.encode("utf-8")) for op in batch]
        )
        async_result = zk.handler.async_result()
        zk._call(request, async_result)  # kazoo's own request path (see module doc)
        STATS["requests"] += 1
        STATS["ops"] += len(batch)
        pending.append(async_result)
        if len(pending) >= window:
            collect()
    while pending:
        collect()
    if len(results) != len(ops):  # a server that answered fewer results than ops: never guess
        raise RuntimeError(f"multiRead returned {len(results)} results for {len(ops)} ops")
    return results
