"""Waiting on a master procedure as HBase's client does (``ProcedureFuture``, ``RawAsyncHBaseAdmin``).

A MasterService call that starts a procedure answers with its ``proc_id``; the client then polls
``getProcedureResult(proc_id)`` until FINISHED, sleeping ``hbase.client.pause`` (100 ms) times HBase's
``RETRY_BACKOFF`` factor between polls, up to a timeout. NOT_FOUND means the master already
forgot the procedure (finished and evicted), which HBase's client also takes as done. A FINISHED
procedure with an exception raises it as one line (``master_errors.procedure_error``); a timeout
raises ProcedureTimeout naming the procedure id, which stays running on the master.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from replication.hbase.master_errors import ProcedureTimeout, procedure_error
from replication.proto import Master_pb2

RETRY_BACKOFF = (1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200)  # HConstants.RETRY_BACKOFF
PAUSE_S = 0.1  # hbase.client.pause
MAX_SLEEP_S = 2.0  # hbrep's cap: a command waits seconds, not HBase's 20 s between polls

Poll = Callable[[int], Master_pb2.GetProcedureResultResponse]


def backoff_s(attempt: int, pause_s: float = PAUSE_S) -> float:
    """The sleep before poll ``attempt`` (0-based): pause × RETRY_BACKOFF[attempt], capped at MAX_SLEEP_S."""
    factor = RETRY_BACKOFF[min(attempt, len(RETRY_BACKOFF) - 1)]
    return min(pause_s * factor, MAX_SLEEP_S)


def wait_for_procedure(
    poll: Poll,
    proc_id: int,
    what: str,
    master: str,
    timeout_s: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bytes:
    """Poll until procedure ``proc_id`` (``what``) finished; its result bytes.

    Raises the procedure's own failure as one line, or ProcedureTimeout after ``timeout_s``.
    """
    deadline = clock() + timeout_s
    attempt = 0
    while True:
        answer = poll(proc_id)
        if answer.state == Master_pb2.GetProcedureResultResponse.NOT_FOUND:
            return b""
        if answer.state == Master_pb2.GetProcedureResultResponse.FINISHED:
            if answer.HasField("exception"):
                raise procedure_error(answer.exception, master, what)
            return answer.result
        if clock() >= deadline:
            raise ProcedureTimeout(
                f"HBase master {master}: {what} (procedure {proc_id}) did not finish within {timeout_s:.0f}s; "
                "it is still running on the master (see its procedures in the master UI or `hbase shell> "
                "list_procedures`)"
            )
        sleep(min(backoff_s(attempt), max(0.0, deadline - clock())))
        attempt += 1
