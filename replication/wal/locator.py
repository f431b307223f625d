"""Finding many WALs at once: each candidate directory is listed once, not stat-ed once per WAL.

The places are those of ``replication.wal.names.find_wal`` (spec §2): ``WALs/<owner>/``, ``oldWALs/``,
``oldWALs/<owner>/``, then ``WALs/<dead>/`` and ``WALs/<dead>-splitting/`` of each server given. A snapshot
of thousands of queued WALs costs one listing per directory instead of up to five stats per WAL.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from replication.fs import FileSystem
from replication.wal.names import wal_candidates


class WalLocator:
    """Resolves WAL names to paths from cached directory listings (a listing is taken when first needed)."""

    def __init__(self, fs: FileSystem, root: str):
        self.fs = fs
        self.root = root
        self._listings: dict[str, frozenset[str]] = {}

    def _names(self, directory: str) -> frozenset[str]:
        names = self._listings.get(directory)
        if names is None:
            names = frozenset(status.name for status in self.fs.list(directory) if not status.is_dir)
            self._listings[directory] = names
        return names

    def find(self, name: str, servers: Iterable[str] = ()) -> str | None:
        """The WAL's path as of the listings (first match in find_wal's order), or None."""
        for path in wal_candidates(self.root, name, servers):
            directory, base = posixpath.split(path)
            if base in self._names(directory):
                return path
        return None
