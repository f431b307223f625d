"""The error of a queue read or write, and how one batched read's result becomes a value or that error."""

from __future__ import annotations

from typing import Any

from kazoo.exceptions import NoAuthError

from replication.errors import HbrepError


class QueueStorageError(HbrepError):
    """A queue operation could not be done (the message names the znode)."""


def checked(result: Any, path: str) -> Any:
    """The value of one ``multi_read`` result; NoAuth re-raised, other errors as QueueStorageError naming ``path``."""
    if isinstance(result, Exception):
        if isinstance(result, NoAuthError):
            raise result
        raise QueueStorageError(f"reading {path}: {type(result).__name__}")
    return result
