"""The HBase shell's data commands: ``get``, ``scan`` and ``count``, with its output shape.

They read the cluster named by ``--cluster`` (the source, or a peer's key to look at what was replicated
there): an hbrep cluster through its table files, or a running real HBase 2.x (no hbrep cluster info, a
master znode) through HBase's own RPC (``replication.hbase.table_client``), with the same output. Rows
and values print as ``Bytes.toStringBinary`` does; a row argument may use ``\\xHH`` escapes, as in the shell.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.wal.model import Cell, CellType
from replication.wal.printable import from_string_binary, to_string_binary

ROW_WIDTH = 34  # the shell pads the ROW / COLUMN column
TYPE_NAMES = {  # KeyValue.Type's names, as the shell prints them
    int(CellType.PUT): "Put",
    int(CellType.DELETE): "Delete",
    int(CellType.DELETE_FAMILY_VERSION): "DeleteFamilyVersion",
    int(CellType.DELETE_COLUMN): "DeleteColumn",
    int(CellType.DELETE_FAMILY): "DeleteFamily",
}


def _client(ctx: CliContext):  # type: ignore[no-untyped-def]
    from replication.cluster.client import ClusterClient

    return ClusterClient(ctx.cluster, ctx.conf)


def real_hbase(ctx: CliContext):  # type: ignore[no-untyped-def]
    """An HBaseTableClient when ``--cluster`` names a running real HBase, else None (an hbrep cluster)."""
    from replication.hbase.table_client import HBaseTableClient

    return HBaseTableClient.if_real_hbase(ctx.cluster, ctx.conf)


@contextmanager
def table_rows(ctx: CliContext, table: str, spec: Any) -> Iterator[Iterator[tuple[bytes, list[Cell]]]]:
    """(row, cells) of ``table`` as a scan with ``spec`` (a ``ScanSpec``) returns them, from whichever
    kind of cluster ``--cluster`` names."""
    hbase = real_hbase(ctx)
    if hbase is None:
        from replication.cluster.table_reader import scan_rows

        with _client(ctx) as client:
            yield scan_rows(client, table, spec)
        return
    from replication.hbase.scanner import ScanOptions

    options = ScanOptions(spec.start_row, spec.stop_row, tuple(f.encode() for f in spec.families or ()),
                          versions=spec.versions, raw=spec.raw, limit=spec.limit)  # fmt: skip
    with hbase:
        if spec.limit == 1 and spec.stop_row == spec.start_row + b"\x00" and not spec.raw:  # one row: a Get
            cells = hbase.get(table, spec.start_row, families=options.families, versions=spec.versions)
            yield iter([(spec.start_row, cells)] if cells else [])
        else:
            yield hbase.scan(table, options)


def _timestamp(ts: int) -> str:
    """HBase 2.4+'s shell prints a cell's timestamp as local ISO time with milliseconds."""
    try:
        return datetime.fromtimestamp(ts / 1000).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return str(ts)


def _cell_text(cell: Cell) -> str:
    column = f"column={to_string_binary(cell.family)}:{to_string_binary(cell.qualifier)}"
    if cell.type != int(CellType.PUT):
        return f"{column}, timestamp={_timestamp(cell.timestamp)}, type={TYPE_NAMES.get(cell.type, str(cell.type))}"
    return f"{column}, timestamp={_timestamp(cell.timestamp)}, value={to_string_binary(cell.value)}"


def _cell_json(cell: Cell) -> dict[str, Any]:
    return {
        "family": to_string_binary(cell.family),
        "qualifier": to_string_binary(cell.qualifier),
        "timestamp": cell.timestamp,
        "type": TYPE_NAMES.get(cell.type, str(cell.type)),
        "value": to_string_binary(cell.value),
    }


def _families(spec: str | None) -> tuple[str, ...] | None:
    return tuple(f for f in spec.split(",") if f) if spec else None


@click.command("scan")
@click.argument("table")
@click.option("--limit", type=int, default=None, help="At most this many rows.")
@click.option("--start-row", default="", help="First row (inclusive); \\xHH escapes allowed.")
@click.option("--stop-row", default="", help="Row to stop before (exclusive).")
@click.option("--versions", type=int, default=1, show_default=True, help="Versions per column.")
@click.option("--raw", is_flag=True, help="Delete markers and the cells they mask too.")
@click.option("--columns", "families", default=None, metavar="F1,F2", help="Only these families.")
@json_option
@pass_context
def scan(ctx: CliContext, table: str, limit: int | None, start_row: str, stop_row: str, versions: int,
         raw: bool, families: str | None, as_json: bool) -> None:  # fmt: skip
    """Rows of TABLE as the HBase shell's scan shows them (hbrep clusters: memstores flushed first)."""
    from replication.cluster.table_reader import ScanSpec

    spec = ScanSpec(
        from_string_binary(start_row), from_string_binary(stop_row), versions, raw, limit, _families(families)
    )
    with table_rows(ctx, table, spec) as found:
        rows = list(found)
    if as_json:
        emit_json({"table": table, "rows": [{"row": to_string_binary(r), "cells": [_cell_json(c) for c in cells]}
                                            for r, cells in rows], "count": len(rows)})  # fmt: skip
        return
    click.echo(f"{'ROW':<{ROW_WIDTH + 1}} COLUMN+CELL")
    for row, cells in rows:
        for cell in cells:
            click.echo(f" {to_string_binary(row):<{ROW_WIDTH}} {_cell_text(cell)}")
    click.echo(f"{len(rows)} row(s)")


@click.command("get")
@click.argument("table")
@click.argument("row")
@click.option("--versions", type=int, default=1, show_default=True, help="Versions per column.")
@click.option("--raw", is_flag=True, help="Delete markers and the cells they mask too.")
@click.option("--columns", "families", default=None, metavar="F1,F2", help="Only these families.")
@json_option
@pass_context
def get(ctx: CliContext, table: str, row: str, versions: int, raw: bool, families: str | None, as_json: bool) -> None:
    """ROW of TABLE as the HBase shell's get shows it ("0 row(s)" when it has no cells)."""
    from replication.cluster.table_reader import ScanSpec

    key = from_string_binary(row)
    spec = ScanSpec(key, key + b"\x00", versions, raw, 1, _families(families))
    with table_rows(ctx, table, spec) as rows:
        found = list(rows)
    cells = found[0][1] if found else []
    if as_json:
        emit_json({"table": table, "row": row, "cells": [_cell_json(c) for c in cells]})
        return
    click.echo(f"{'COLUMN':<{ROW_WIDTH + 1}} CELL")
    for cell in cells:
        column = f"{to_string_binary(cell.family)}:{to_string_binary(cell.qualifier)}"
        click.echo(f" {column:<{ROW_WIDTH}} {_cell_text(cell).split(', ', 1)[1]}")
    click.echo(f"{1 if cells else 0} row(s)")


@click.command("count")
@click.argument("table")
@json_option
@pass_context
def count(ctx: CliContext, table: str, as_json: bool) -> None:
    """How many rows TABLE has (rows with at least one visible cell), as the HBase shell's count."""
    from replication.cluster.table_reader import ScanSpec

    with table_rows(ctx, table, ScanSpec()) as rows:
        total = sum(1 for _ in rows)
    if as_json:
        emit_json({"table": table, "count": total})
        return
    click.echo(f"{total} row(s)")


COMMANDS = (get, scan, count)
