"""HBase's remote exceptions from a MasterService call or a failed procedure, as one-line HbrepErrors.

HBase sends the exception's class name and its stack trace (``Class: message`` first); a failed
procedure comes back as a ForeignExceptionMessage (``GenericExceptionMessage{class_name, message}``),
whose message often wraps the cause as ``Class: message`` again. The line shown is the innermost
``Class: message``, with the class's short name; its kind picks the HbrepError subclass (a peer that
exists or is missing reuses ``zk.peer_storage``'s errors, so both kinds of cluster fail alike).
"""

from __future__ import annotations

import re

from replication.cluster.hbase_rpc.remote_errors import first_line, short_name
from replication.errors import HbrepError
from replication.proto import ErrorHandling_pb2, RPC_pb2
from replication.zk.peer_storage import PeerExists, PeerNotFound


class MasterError(HbrepError):
    """The master refused or failed the call (the message is HBase's own, in one line)."""


class MasterNotRunning(MasterError):
    """The master is stopping, not yet initialized, or not the active one."""


class TableNotFound(MasterError):
    """HBase's TableNotFoundException."""


class TableExists(MasterError):
    """HBase's TableExistsException."""


class TableNotDisabled(MasterError):
    """HBase's TableNotDisabledException (delete, truncate need a disabled table)."""


class TableNotEnabled(MasterError):
    """HBase's TableNotEnabledException."""


class PeerModificationDisabled(MasterError):
    """The master's replication peer modification switch is off."""


class ProcedureFailed(MasterError):
    """A master procedure ended with an exception."""


class ProcedureTimeout(MasterError):
    """A master procedure did not finish within the wait."""


NOT_RUNNING = frozenset(
    {
        "MasterNotRunningException",
        "ServerNotRunningYetException",
        "PleaseHoldException",
        "MasterStoppedException",
        "RegionServerStoppedException",
        "ConnectionClosingException",
    }
)
_CLASS_LINE = re.compile(r"^((?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)): ?(.*)$")


def innermost(line: str) -> tuple[str, str]:
    """``(short class name, message)`` of the innermost ``pkg.Class: message`` in ``line``."""
    name, message = "", line.strip()
    while True:
        match = _CLASS_LINE.match(message)
        if not match:
            return name, message
        name, message = short_name(match.group(1)), match.group(2).strip()


def _classify(class_name: str, message: str, line: str) -> HbrepError:
    kinds = [class_name]
    line = " ".join(line.split())  # one line, whatever the server sent
    if re.search(r"Replication peer modification disabled", message, re.I):
        return PeerModificationDisabled(line)
    if class_name in NOT_RUNNING:
        return MasterNotRunning(line)
    if "TableNotFoundException" in kinds:
        return TableNotFound(line)
    if "TableExistsException" in kinds:
        return TableExists(line)
    if "TableNotDisabledException" in kinds:
        return TableNotDisabled(line)
    if "TableNotEnabledException" in kinds:
        return TableNotEnabled(line)
    if class_name == "ReplicationPeerNotFoundException" or re.search(r"peer \S+ does not exist", message, re.I):
        return PeerNotFound(line)
    if re.search(r"peer \S+ already exists|already exists", message, re.I) and "peer" in message.lower():
        return PeerExists(line)
    return MasterError(line)


def remote_master_error(exc: RPC_pb2.ExceptionResponse, master: str, method: str) -> HbrepError:
    """The HbrepError for the exception the master at ``master`` returned to ``method``."""
    outer = short_name(exc.exception_class_name)
    name, message = innermost(first_line(exc))
    name = " ".join((name or outer).split()) or "RemoteException"
    said = f"{name}: {message}" if message and message != exc.exception_class_name else name
    if name == "ReplicationPeerNotFoundException" and message:
        said = f"peer {message} does not exist ({name})"
    return _classify(name if name in NOT_RUNNING or outer not in NOT_RUNNING else outer, message,
                     f"HBase master {master} {method}: {said}")  # fmt: skip


def procedure_error(exc: ErrorHandling_pb2.ForeignExceptionMessage, master: str, what: str) -> HbrepError:
    """The HbrepError for a procedure (``what``) that failed on the master with ``exc``."""
    generic = exc.generic_exception
    name, message = innermost(generic.message or "")
    name = name or short_name(generic.class_name or "") or "procedure failure"
    said = f"{name}: {message}" if message else name
    if name == "ReplicationPeerNotFoundException" and message:
        said = f"peer {message} does not exist ({name})"  # the call's own wording (remote_master_error)
    line = f"HBase master {master}: {what} failed: {said}"
    error = _classify(name, message, line)
    return ProcedureFailed(line) if type(error) is MasterError else error
