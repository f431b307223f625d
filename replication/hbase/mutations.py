"""Puts and deletes as ClientService's ``MutationProto`` (``ProtobufUtil.toMutation``), cells inside it.

A Put is ``mutate_type=PUT`` with one ``ColumnValue{family, QualifierValue{qualifier, value, timestamp}}``
per family; a timestamp left out is the server's clock. Deletes follow HBase's ``Delete``:

- the whole row: ``mutate_type=DELETE`` and no column (the region adds a DeleteFamily per family);
- a family: ``DELETE_FAMILY``; a family's one version: ``DELETE_FAMILY_VERSION`` (needs a timestamp);
- a column, all versions up to the timestamp: ``DELETE_MULTIPLE_VERSIONS`` (DeleteColumn);
- a column's one version: ``DELETE_ONE_VERSION`` (Delete; without a timestamp: the latest version).
"""

from __future__ import annotations

from collections.abc import Iterable

from replication.errors import HbrepError
from replication.proto import Client_pb2
from replication.wal.model import Cell, CellType

MutationProto = Client_pb2.MutationProto
LATEST_TIMESTAMP = (1 << 63) - 1  # HConstants.LATEST_TIMESTAMP: "now" on the server

DELETE_TYPES = {
    CellType.DELETE: MutationProto.DELETE_ONE_VERSION,
    CellType.DELETE_COLUMN: MutationProto.DELETE_MULTIPLE_VERSIONS,
    CellType.DELETE_FAMILY: MutationProto.DELETE_FAMILY,
    CellType.DELETE_FAMILY_VERSION: MutationProto.DELETE_FAMILY_VERSION,
}


def put_mutation(row: bytes, cells: Iterable[tuple[bytes, bytes, bytes, int | None]]) -> Client_pb2.MutationProto:
    """A Put of ``row`` with (family, qualifier, value, timestamp or None = server clock) cells."""
    mutation = MutationProto(row=row, mutate_type=MutationProto.PUT)
    by_family: dict[bytes, Client_pb2.MutationProto.ColumnValue] = {}
    for family, qualifier, value, ts in cells:
        column = by_family.get(family)
        if column is None:
            column = by_family[family] = mutation.column_value.add(family=family)
        qv = column.qualifier_value.add(qualifier=qualifier, value=value)
        if ts is not None and ts != LATEST_TIMESTAMP:
            qv.timestamp = ts
    return mutation


def delete_mutation(
    row: bytes,
    family: bytes | None = None,
    qualifier: bytes | None = None,
    ts: int | None = None,
    kind: CellType | None = None,
) -> Client_pb2.MutationProto:
    """A Delete as the shell's delete/deleteall (the same rules as hbrep's ``ClusterClient.delete``): no family
    → the row; family only → DeleteFamily; family+qualifier → DeleteColumn; ``kind`` overrides the type
    (DELETE and DELETE_FAMILY_VERSION need ``ts``)."""
    mutation = MutationProto(row=row, mutate_type=MutationProto.DELETE)
    if ts is not None and ts != LATEST_TIMESTAMP:
        mutation.timestamp = ts
    if family is None:
        if kind is not None:
            raise HbrepError(f"a {kind.name} delete of row {row!r} needs a family")
        return mutation
    cell_type = kind or (CellType.DELETE_FAMILY if qualifier is None else CellType.DELETE_COLUMN)
    if cell_type in (CellType.DELETE, CellType.DELETE_FAMILY_VERSION) and ts is None:
        raise HbrepError(f"a {cell_type.name} delete of row {row!r} needs an explicit timestamp")
    qv = mutation.column_value.add(family=family).qualifier_value.add(delete_type=DELETE_TYPES[cell_type])
    if cell_type in (CellType.DELETE, CellType.DELETE_COLUMN):
        qv.qualifier = qualifier or b""
    if ts is not None and ts != LATEST_TIMESTAMP:
        qv.timestamp = ts
    return mutation


def cell_mutation(cell: Cell) -> Client_pb2.MutationProto:
    """One hbrep Cell (a Put or one of the delete markers) as a MutationProto; a cell whose timestamp is
    LATEST_TIMESTAMP gets the server's clock. A DeleteFamily with an empty family deletes the row."""
    ts = None if cell.timestamp == LATEST_TIMESTAMP else cell.timestamp
    if cell.type == int(CellType.PUT):
        return put_mutation(cell.row, [(cell.family, cell.qualifier, cell.value, ts)])
    kind = CellType(cell.type)
    if kind == CellType.DELETE_FAMILY and not cell.family:
        return delete_mutation(cell.row, ts=ts)
    qualifier = cell.qualifier if kind in (CellType.DELETE, CellType.DELETE_COLUMN) else None
    return delete_mutation(cell.row, cell.family, qualifier, ts, kind)
