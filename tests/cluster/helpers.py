"""Small helpers shared by the cluster tests (reading a server's WALs, live/old)."""

from __future__ import annotations

import os

from replication.wal.model import Entry
from replication.wal.names import old_wal_dir, server_of_wal, wal_dir
from replication.wal.reader import open_wal


def wal_files(root: str, server: str) -> list[str]:
    """Every WAL path of ``server`` (live dir and oldWALs), ordered by name (= by filenum)."""
    paths = []
    live = wal_dir(root, server)
    if os.path.isdir(live):
        paths += [os.path.join(live, n) for n in os.listdir(live)]
    old = old_wal_dir(root)
    if os.path.isdir(old):
        paths += [os.path.join(old, n) for n in os.listdir(old) if server_of_wal(n) == server]
    return sorted(paths, key=os.path.basename)


def wal_entries(root: str, server: str) -> list[Entry]:
    """Every whole entry in ``server``'s WALs, in write order."""
    out: list[Entry] = []
    for path in wal_files(root, server):
        with open_wal(path) as reader:
            out.extend(item.entry for item in reader)
    return out
