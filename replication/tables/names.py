"""Table and column family names, validated as HBase validates them.

``TableName`` follows ``org.apache.hadoop.hbase.TableName``: ``ns:qualifier``, or just ``qualifier`` in
the ``default`` namespace; ``as_bytes()`` is what ``TableName.getName()`` writes into a WALKey (``t1``,
``ns:t1``). Qualifiers use ``[A-Za-z0-9_.-]`` and may not start with ``.`` or ``-``
(``isLegalTableQualifierName``); namespaces use ``[A-Za-z0-9_]`` (``isLegalNamespaceName``). HBase also
accepts non-ASCII letters there; we keep to ASCII because names become directory names on any filesystem.
Family names follow ``ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName``: not empty, no leading
``.``, no ISO control character, no ``:``, ``\\`` or ``/``, and not ``recovered.edits``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replication.tables.errors import IllegalFamilyName, IllegalTableName

DEFAULT_NAMESPACE = "default"
SYSTEM_NAMESPACE = "hbase"
NAMESPACE_DELIM = ":"
RECOVERED_EDITS_DIR = "recovered.edits"

_QUALIFIER_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_NAMESPACE_RE = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True, slots=True)
class TableName:
    """A validated table name: ``namespace`` and ``qualifier`` (``str()`` drops ``default:``)."""

    namespace: str
    qualifier: str

    def __post_init__(self) -> None:
        shown = self.qualifier if self.namespace == DEFAULT_NAMESPACE else f"{self.namespace}:{self.qualifier}"
        _check_namespace(self.namespace, shown)
        _check_qualifier(self.qualifier, shown)

    @classmethod
    def parse(cls, name: str | bytes | TableName) -> TableName:
        """``"t1"`` → default:t1, ``"ns:t1"`` → ns:t1; IllegalTableName for anything HBase refuses."""
        if isinstance(name, TableName):
            return name
        if isinstance(name, bytes):
            try:
                name = name.decode("utf-8")
            except UnicodeDecodeError:
                raise IllegalTableName(f"illegal table name {name!r}: not UTF-8") from None
        if name.count(NAMESPACE_DELIM) > 1:
            raise IllegalTableName(f"illegal table name {name!r}: more than one ':'")
        if NAMESPACE_DELIM in name:
            namespace, qualifier = name.split(NAMESPACE_DELIM)
        else:
            namespace, qualifier = DEFAULT_NAMESPACE, name
        return cls(namespace, qualifier)

    @property
    def is_system(self) -> bool:
        """True for tables in the reserved ``hbase`` namespace (HBase's system tables)."""
        return self.namespace == SYSTEM_NAMESPACE

    def __str__(self) -> str:
        if self.namespace == DEFAULT_NAMESPACE:
            return self.qualifier
        return f"{self.namespace}{NAMESPACE_DELIM}{self.qualifier}"

    def as_bytes(self) -> bytes:
        """The name as HBase writes it in a WALKey (``TableName.getName()``)."""
        return str(self).encode("utf-8")


def _check_namespace(namespace: str, full: str) -> None:
    if not namespace:
        raise IllegalTableName(f"illegal table name {full!r}: empty namespace")
    if not _NAMESPACE_RE.fullmatch(namespace):
        raise IllegalTableName(f"illegal table name {full!r}: namespace may only contain [A-Za-z0-9_]")


def _check_qualifier(qualifier: str, full: str) -> None:
    if not qualifier:
        raise IllegalTableName(f"illegal table name {full!r}: empty table qualifier")
    if qualifier[0] in ".-":
        raise IllegalTableName(f"illegal table name {full!r}: qualifier may not start with {qualifier[0]!r}")
    if not _QUALIFIER_RE.fullmatch(qualifier):
        raise IllegalTableName(f"illegal table name {full!r}: qualifier may only contain [A-Za-z0-9_.-]")


def validate_family_name(family: str | bytes, table: str = "") -> str:
    """Return ``family`` as str if HBase would accept it as a column family name, else IllegalFamilyName."""
    where = f" of table {table}" if table else ""
    if isinstance(family, bytes):
        try:
            family = family.decode("utf-8")
        except UnicodeDecodeError:
            raise IllegalFamilyName(f"illegal column family {family!r}{where}: not UTF-8") from None
    if not family:
        raise IllegalFamilyName(f"illegal column family {family!r}{where}: empty name")
    if family[0] == ".":
        raise IllegalFamilyName(f"illegal column family {family!r}{where}: starts with '.'")
    for ch in family:
        if ch in ":\\/" or _is_iso_control(ch):
            raise IllegalFamilyName(f"illegal column family {family!r}{where}: contains {ch!r}")
    if family == RECOVERED_EDITS_DIR:
        raise IllegalFamilyName(f"illegal column family {family!r}{where}: reserved name")
    return family


def _is_iso_control(ch: str) -> bool:
    code = ord(ch)
    return code <= 0x1F or 0x7F <= code <= 0x9F
