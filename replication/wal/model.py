"""The data a WAL holds: cells, the WALKey that heads each entry, and entries (spec §1.3, §1.4)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import IntEnum


class CellType(IntEnum):
    """``KeyValue.Type`` codes."""

    MINIMUM = 0
    PUT = 4
    DELETE = 8
    DELETE_FAMILY_VERSION = 10
    DELETE_COLUMN = 12
    DELETE_FAMILY = 14
    MAXIMUM = 255


_DELETE_TYPES = frozenset((8, 10, 12, 14))


@dataclass(frozen=True, slots=True)
class Cell:
    """One KeyValue: coordinates, timestamp (ms), type code, value and the raw tags block (may be empty)."""

    row: bytes
    family: bytes
    qualifier: bytes
    timestamp: int
    type: int
    value: bytes = b""
    tags: bytes = b""

    @property
    def is_delete(self) -> bool:
        """True for the four delete marker types (Delete, DeleteFamilyVersion, DeleteColumn, DeleteFamily)."""
        return self.type in _DELETE_TYPES


@dataclass(slots=True)
class WALKey:
    """The WALKey of one entry (WALKeyImpl). ``table_name`` is ``t1`` or ``ns:t1`` as HBase writes it."""

    encoded_region_name: bytes
    table_name: bytes
    log_sequence_number: int
    write_time: int
    scopes: dict[bytes, int] = field(default_factory=dict)
    cluster_ids: list[uuid.UUID] = field(default_factory=list)
    nonce_group: int = 0
    nonce: int = 0
    orig_sequence_number: int = 0
    extended_attributes: dict[str, bytes] = field(default_factory=dict)


@dataclass(slots=True)
class Entry:
    """One WAL entry: its key and the cells that followed it."""

    key: WALKey
    cells: list[Cell]
