"""Regions of the embedded cluster and how rows are routed to region servers.

One region per (table, region server): its region name is ``<table>,,<server start code>.<server>``
and its encoded name the 32-char hex MD5 of that name, as HBase's ``RegionInfo.encodeRegionName``
does. Rows go to ``sorted(live servers)[row_hash(row) % n]`` (a stable hash, so the same row keeps
going to the same server while membership stays the same).

Departure from HBase: regions are not key ranges assigned by a master; any server accepts any row
(its own region of the table takes it), and the hash only spreads load. Readers merge every region
directory of a table, so correctness never depends on routing.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence

LATEST_TIMESTAMP = 2**63 - 1  # HConstants.LATEST_TIMESTAMP: "use the server's clock"


def region_name(table: str, server_name: str) -> str:
    """The (unencoded) region name of ``table``'s region on ``server_name``."""
    return f"{table},,{server_name}."


def encoded_region_name(table: str, server_name: str) -> str:
    """32-char lowercase hex MD5 of the region name (stable for a given table and server)."""
    return hashlib.md5(region_name(table, server_name).encode()).hexdigest()


def row_hash(row: bytes) -> int:
    """A stable, process-independent hash of a row key (CRC32; Python's hash() is salted)."""
    return zlib.crc32(row)


def owner_of(row: bytes, servers: Sequence[str]) -> str:
    """The server a row is routed to: ``sorted(servers)[row_hash(row) % len(servers)]``.

    Raises ValueError on an empty server list (callers turn that into a ClusterError).
    """
    if not servers:
        raise ValueError("no live region server")
    ordered = sorted(servers)
    return ordered[row_hash(row) % len(ordered)]
