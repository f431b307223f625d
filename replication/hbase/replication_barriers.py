"""A real HBase's replication barriers: the ``rep_barrier`` family of hbase:meta, as HBase 2.x writes it.

HBase keeps, per region row of hbase:meta (``<table>,<startkey>,<regionid>.<encoded>.``), for tables with a
replicated (GLOBAL scope) family (``ReplicationBarrierFamilyFormat``, written by ``RegionStateStore``):

- ``rep_barrier:seqnumDuringOpen``: one cell *version* per opening of the region, the value an 8-byte
  big-endian long, the region's open sequence number then (``addReplicationBarrier``); a split or merged
  parent gets one more, its closing one. The barriers are those values, sorted and distinct
  (``getReplicationBarriers``);
- ``rep_barrier:parent``: the full region names of a split daughter's parent or a merged region's parents,
  each 0xFF byte doubled and the names joined by 0xFF 0x00 (``getParentsBytes`` / ``parseParentsBytes``);
- ``info:state``: the region's ``RegionState.State`` name (``OPEN``, ``OPENING``, ...).

:func:`read_replication_barriers` reads all of them in one scan of hbase:meta (every version), keyed by
encoded region name, for the serial replication checker (source/hbase_serial_checker.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from replication.errors import HbrepError
from replication.hbase.client_errors import Retryable
from replication.hbase.client_service import RegionServers
from replication.hbase.meta_locator import MetaLocator
from replication.hbase.region_names import CATALOG_FAMILY, ENC_SEPARATOR, META_REGION_NAME, META_TABLE, BadMetaRow
from replication.hbase.retries import RetryPolicy
from replication.hbase.scanner import RegionScanner, ScanOptions
from replication.wal.model import Cell

REPLICATION_BARRIER_FAMILY = b"rep_barrier"  # HConstants.REPLICATION_BARRIER_FAMILY
SEQNUM_QUALIFIER = b"seqnumDuringOpen"  # HConstants.SEQNUM_QUALIFIER
PARENT_QUALIFIER = b"parent"  # ReplicationBarrierFamilyFormat.REPLICATION_PARENT_QUALIFIER
STATE_QUALIFIER = b"state"  # HConstants.STATE_QUALIFIER
ESCAPE_BYTE, SEPARATED_BYTE = 0xFF, 0x00
ALL_VERSIONS = 2**31 - 1


@dataclass(frozen=True)
class RegionBarriers:
    """One region's replication barriers (sorted, distinct), its state and its parents' encoded names."""

    barriers: tuple[int, ...] = ()
    state: str | None = None
    parents: tuple[str, ...] = field(default_factory=tuple)


def parse_barrier(value: bytes, where: str = "rep_barrier:seqnumDuringOpen") -> int:
    """The open sequence number in one barrier cell (``Bytes.toLong``); BadMetaRow naming ``where`` otherwise."""
    if len(value) != 8:
        raise BadMetaRow(f"{where}: {len(value)} bytes, not an 8-byte sequence number")
    return int(struct.unpack(">q", value)[0])


def parents_bytes(region_names: Iterable[bytes]) -> bytes:
    """``rep_barrier:parent``'s value for these parents (``getParentsBytes``)."""
    escaped = [name.replace(b"\xff", b"\xff\xff") for name in region_names]
    return bytes([ESCAPE_BYTE, SEPARATED_BYTE]).join(escaped)


def parse_parents(value: bytes) -> list[bytes]:
    """The parents' full region names in a ``rep_barrier:parent`` value (``parseParentsBytes``)."""
    parents: list[bytes] = []
    current = bytearray()
    i = 0
    while i < len(value):
        byte = value[i]
        if byte == ESCAPE_BYTE and i + 1 < len(value):
            i += 1
            if value[i] == SEPARATED_BYTE:
                parents.append(bytes(current))
                current.clear()
                i += 1
                continue
        current.append(value[i])
        i += 1
    if current:
        parents.append(bytes(current))
    return parents


def encoded_of(region_name: bytes) -> str:
    """The encoded name in a new-format region name (``RegionInfo.encodeRegionName``: between the last two
    dots); BadMetaRow when the name has none."""
    if len(region_name) < 34 or not region_name.endswith(ENC_SEPARATOR) or region_name[-34:-33] != ENC_SEPARATOR:
        raise BadMetaRow(f"region name {region_name!r} does not end in .<encoded name>.")
    return region_name[-33:-1].decode("ascii", "replace")


def region_barriers(row: bytes, cells: Iterable[Cell]) -> RegionBarriers:
    """The barriers, state and parents in one hbase:meta row's cells (every version of the barrier column)."""
    barriers: set[int] = set()
    state: str | None = None
    parents: tuple[str, ...] = ()
    parent_seen = state_seen = False
    for cell in cells:  # newest version first per column: the first parent/state cell is the current one
        if cell.family == REPLICATION_BARRIER_FAMILY and cell.qualifier == SEQNUM_QUALIFIER:
            barriers.add(parse_barrier(cell.value, f"hbase:meta row {row!r} rep_barrier:seqnumDuringOpen"))
        elif cell.family == REPLICATION_BARRIER_FAMILY and cell.qualifier == PARENT_QUALIFIER and not parent_seen:
            parents, parent_seen = tuple(encoded_of(name) for name in parse_parents(cell.value)), True
        elif cell.family == CATALOG_FAMILY and cell.qualifier == STATE_QUALIFIER and not state_seen:
            state, state_seen = cell.value.decode("utf-8", "replace"), True
    return RegionBarriers(tuple(sorted(barriers)), state, parents)


def read_replication_barriers(locator: MetaLocator, servers: RegionServers,
                              retry: RetryPolicy | None = None) -> dict[str, RegionBarriers]:  # fmt: skip
    """Every region's barriers in hbase:meta by encoded name (regions without any left out), read in one
    scan of every version; retried from the start with HBase's backoff while hbase:meta moves."""
    options = ScanOptions(
        columns=((CATALOG_FAMILY, STATE_QUALIFIER),), families=(REPLICATION_BARRIER_FAMILY,), versions=ALL_VERSIONS
    )
    policy = retry or RetryPolicy()
    last: Exception | None = None
    for _attempt in policy.attempts():
        host, port, _code = locator.meta_server()
        scanner = RegionScanner(servers.get(host, port), META_REGION_NAME, options.to_proto(), META_TABLE, 1000)
        try:
            out: dict[str, RegionBarriers] = {}
            for cells in scanner:
                row = cells[0].row
                found = region_barriers(row, cells)
                if found.barriers or found.parents:
                    out[encoded_of(row)] = found
            return out
        except Retryable as exc:
            last = exc
            locator._meta = None  # hbase:meta may have moved: ZooKeeper again
        finally:
            scanner.close()
    raise HbrepError(f"hbase:meta's replication barriers unreadable after {policy.tries} tries: {last}")
