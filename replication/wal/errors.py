"""Errors of the WAL layer; each message is one line naming the file (and offset where it applies)."""

from __future__ import annotations

from replication.errors import HbrepError


class WALError(HbrepError):
    """Base of every WAL read/write/name error."""


class WALNotFound(WALError):
    """The WAL file does not exist (the message names the path)."""


class CorruptWALError(WALError):
    """Bytes that cannot be a WAL, or an entry that does not decode (the message names file and offset)."""


class CompressedWALNotSupported(WALError):
    """A compression hbrep does not decode: a value codec it lacks (the message names it), or the 0.94
    SequenceFile's compression."""


class InvalidWALName(WALError):
    """A WAL file name or server name that does not follow HBase's naming rules."""
