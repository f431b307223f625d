"""Errors a user can cause with tables; each message is one line naming the table or family."""

from __future__ import annotations

from replication.errors import HbrepError


class TableError(HbrepError):
    """Base of every table error."""


class IllegalTableName(TableError):
    """A table or namespace name HBase would refuse (``TableName.isLegal*``)."""


class IllegalFamilyName(TableError):
    """A column family name HBase would refuse (``ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName``)."""


class IllegalDescriptor(TableError):
    """A descriptor value out of range (scope, max versions, no families, reserved namespace)."""


class UnknownTable(TableError):
    """The table has no descriptor under the root (HBase: TableNotFoundException)."""


class UnknownFamily(TableError):
    """The table has no such column family (HBase: NoSuchColumnFamilyException)."""


class TableNotEnabled(TableError):
    """The table is disabled: no writes (HBase: TableNotEnabledException)."""


class TableNotDisabled(TableError):
    """The table is enabled where a disabled one is needed (HBase: TableNotDisabledException)."""


class TableExists(TableError):
    """A table with that name already exists (HBase: TableExistsException)."""


class CorruptTableFile(TableError):
    """A descriptor or table file cannot be read (the message names the path)."""
