"""master_errors and procedures: HBase's exceptions (as its RPC and its procedures send them) as one line
of the right kind, and the client's poll backoff."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replication.hbase.master_errors import (
    MasterError,
    MasterNotRunning,
    PeerModificationDisabled,
    ProcedureFailed,
    TableExists,
    TableNotFound,
    innermost,
    procedure_error,
    remote_master_error,
)
from replication.hbase.procedures import MAX_SLEEP_S, backoff_s
from replication.proto import ErrorHandling_pb2, RPC_pb2
from replication.zk.peer_storage import PeerExists, PeerNotFound


def remote(name: str, message: str) -> RPC_pb2.ExceptionResponse:
    return RPC_pb2.ExceptionResponse(
        exception_class_name=name, stack_trace=f"{name}: {message}\n\tat org.apache.hadoop.hbase.X.y(X.java:1)\n"
    )


def test_remote_exceptions_map_to_their_kind_in_one_line():
    cases = [
        ("org.apache.hadoop.hbase.TableNotFoundException", "t9", TableNotFound),
        ("org.apache.hadoop.hbase.TableExistsException", "t1", TableExists),
        ("org.apache.hadoop.hbase.ipc.ServerNotRunningYetException", "Server is not running yet", MasterNotRunning),
        ("org.apache.hadoop.hbase.PleaseHoldException", "Master is initializing", MasterNotRunning),
        ("org.apache.hadoop.hbase.DoNotRetryIOException", "Replication peer 7 already exists", PeerExists),
        ("org.apache.hadoop.hbase.replication.ReplicationPeerNotFoundException", "7", PeerNotFound),
        ("org.apache.hadoop.hbase.DoNotRetryIOException", "Replication peer modification disabled",
         PeerModificationDisabled),
        ("java.io.IOException", "something else", MasterError),
    ]  # fmt: skip
    for name, message, kind in cases:
        error = remote_master_error(remote(name, message), "m:16000", "Call")
        assert type(error) is kind, (name, error)
        assert str(error).startswith("HBase master m:16000 Call: ") and "\n" not in str(error)
        assert message in str(error)


def test_a_wrapped_cause_is_shown_by_its_innermost_class():
    assert innermost(
        "org.apache.hadoop.hbase.DoNotRetryIOException: org.apache.hadoop.hbase.TableNotFoundException: t"
    ) == (
        "TableNotFoundException",
        "t",
    )
    assert innermost("plain words") == ("", "plain words")


def test_a_failed_procedure_is_one_line_of_its_kind():
    failure = ErrorHandling_pb2.ForeignExceptionMessage(
        source="master",
        generic_exception=ErrorHandling_pb2.GenericExceptionMessage(
            class_name="org.apache.hadoop.hbase.DoNotRetryIOException",
            message="org.apache.hadoop.hbase.TableExistsException: t1",
        ),
    )
    error = procedure_error(failure, "m:1", "create_table t1")
    assert (
        type(error) is TableExists
        and str(error) == "HBase master m:1: create_table t1 failed: TableExistsException: t1"
    )
    failure.generic_exception.message = "java.io.IOException: region server refused"
    assert type(procedure_error(failure, "m:1", "enable_peer 1")) is ProcedureFailed


@given(st.text(max_size=300), st.text(max_size=100))
def test_any_exception_text_gives_one_line(trace, name):
    exc = RPC_pb2.ExceptionResponse(exception_class_name=name, stack_trace=trace)
    line = str(remote_master_error(exc, "m:1", "Call"))
    assert "\n" not in line and line.startswith("HBase master m:1 Call: ")


def test_poll_backoff_grows_as_hbases_and_is_capped():
    sleeps = [backoff_s(i) for i in range(20)]
    assert sleeps[:4] == [0.1, 0.2, 0.30000000000000004, 0.5]
    assert sleeps == sorted(sleeps) and max(sleeps) == MAX_SLEEP_S
