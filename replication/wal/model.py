"""The data a WAL holds: cells, the WALKey that heads each entry, and entries (spec §1.3, §1.4)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple


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


# A faster __init__ for the frozen Cell, filling its slots through their descriptors. The generated one
# calls object.__setattr__ per field (that is how frozen dataclasses assign), about 1.5 µs per Cell
# against 0.5 µs this way; a Cell is built for every decoded cell (the sink, the owner hop, the full
# reader), so this was a profiled hot spot (BENCHMARKS.md, hot paths). Instances stay frozen:
# assignment still raises FrozenInstanceError; equality, hash and repr are the dataclass's own.
_SET_ROW, _SET_FAMILY, _SET_QUALIFIER, _SET_TIMESTAMP, _SET_TYPE, _SET_VALUE, _SET_TAGS = (
    getattr(Cell, name).__set__ for name in Cell.__dataclass_fields__
)


def _cell_init(
    self: Cell,
    row: bytes,
    family: bytes,
    qualifier: bytes,
    timestamp: int,
    type: int,
    value: bytes = b"",
    tags: bytes = b"",
) -> None:
    _SET_ROW(self, row)
    _SET_FAMILY(self, family)
    _SET_QUALIFIER(self, qualifier)
    _SET_TIMESTAMP(self, timestamp)
    _SET_TYPE(self, type)
    _SET_VALUE(self, value)
    _SET_TAGS(self, tags)


_cell_init.__qualname__ = "Cell.__init__"
Cell.__init__ = _cell_init  # type: ignore[method-assign]


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


class RawEntry(NamedTuple):
    """An entry for the ship path: the key decoded, the cells still encoded (exactly as in the file)."""

    key: WALKey
    cell_count: int
    cell_bytes: memoryview
    start: int
    end: int
