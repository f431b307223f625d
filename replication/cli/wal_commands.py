"""``hbrep wal dump FILE [--json]``: print a WAL's entries, like HBase's WALPrettyPrinter; ``hbrep wal play``:
replay WALs into tables of a cluster, like HBase's WALPlayer."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any
from urllib.parse import urlparse

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.fs import get_filesystem
from replication.wal.model import CellType, Entry
from replication.wal.printable import to_string_binary
from replication.wal.reader import open_wal

# KeyValue.Type names as WALPrettyPrinter prints them.
TYPE_NAMES = {
    CellType.MINIMUM: "Minimum",
    CellType.PUT: "Put",
    CellType.DELETE: "Delete",
    CellType.DELETE_FAMILY_VERSION: "DeleteFamilyVersion",
    CellType.DELETE_COLUMN: "DeleteColumn",
    CellType.DELETE_FAMILY: "DeleteFamily",
    CellType.MAXIMUM: "Maximum",
}


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def _time(ms: int) -> str:
    try:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return "?"


def entry_as_dict(entry: Entry, start: int, end: int) -> dict[str, Any]:
    """One entry as the JSON object ``wal dump --json`` prints.

    Row, family, qualifier, value, tags and scope families are rendered as HBase renders bytes
    (``Bytes.toStringBinary``, as WALPrettyPrinter prints them), so the two outputs compare as text.
    """
    key = entry.key
    return {
        "table": _text(key.table_name),
        "region": _text(key.encoded_region_name),
        "sequence": key.log_sequence_number,
        "orig_sequence": key.orig_sequence_number,
        "write_time": key.write_time,
        "nonce_group": key.nonce_group,
        "nonce": key.nonce,
        "cluster_ids": [str(c) for c in key.cluster_ids],
        "scopes": {to_string_binary(f): s for f, s in key.scopes.items()},
        "extended_attributes": {k: to_string_binary(v) for k, v in sorted(key.extended_attributes.items())},
        "start": start,
        "end": end,
        "cells": [
            {
                "row": to_string_binary(c.row),
                "family": to_string_binary(c.family),
                "qualifier": to_string_binary(c.qualifier),
                "timestamp": c.timestamp,
                "type": c.type,
                "type_name": TYPE_NAMES.get(c.type, str(c.type)),
                "value": to_string_binary(c.value),
                "value_length": len(c.value),
                "tags": to_string_binary(c.tags),
            }
            for c in entry.cells
        ],
    }


@click.group()
def wal() -> None:
    """WAL files: dump their entries (protobuf WALs and 0.94 SequenceFile HLogs), replay them into tables."""


@wal.command()
@click.argument("file")
@click.option("--start", type=click.IntRange(min=0), default=0, help="Byte offset of the first entry to print.")
@json_option
def dump(file: str, start: int, as_json: bool) -> None:
    """Print every entry of FILE (table, region, sequence id, write time, cluster ids, scopes, cells)
    and a summary. With --json: one object per entry, then {"entries", "cells", "tables", "cell_types"}."""
    fs, path = get_filesystem(file)
    reader = open_wal(path, fs=fs, start=start)
    tables: Counter[str] = Counter()
    types: Counter[int] = Counter()
    n_entries = n_cells = 0
    if not as_json:
        header = reader.header
        click.echo(
            f"File: {path} format={reader.format} length={reader.file_length}"
            + (f" writer={header.writer_cls_name} codec={header.cell_codec_cls_name}" if header is not None else "")
            + (_compression(reader) if reader.compressed else "")
        )
    for read in reader:
        entry = read.entry
        n_entries += 1
        n_cells += len(entry.cells)
        tables[_text(entry.key.table_name)] += 1
        types.update(c.type for c in entry.cells)
        if as_json:
            emit_json(entry_as_dict(entry, read.start, read.end))
            continue
        key = entry.key
        click.echo(
            f"Sequence={key.log_sequence_number} , table={_text(key.table_name)} , "
            f"region={_text(key.encoded_region_name)} at write timestamp={_time(key.write_time)} "
            f"({key.write_time}) offset={read.start}..{read.end}"
        )
        click.echo(
            f"  cluster ids=[{', '.join(str(c) for c in key.cluster_ids)}] "
            f"scopes={{{', '.join(f'{_text(f)}: {s}' for f, s in key.scopes.items())}}}"
        )
        for c in entry.cells:
            click.echo(
                f"    row={_text(c.row)}, column={_text(c.family)}:{_text(c.qualifier)}, "
                f"timestamp={c.timestamp}, type={TYPE_NAMES.get(c.type, c.type)}, vlen={len(c.value)}"
            )
    summary = {
        "entries": n_entries,
        "cells": n_cells,
        "tables": dict(tables),
        "cell_types": {str(t): n for t, n in sorted(types.items())},
        "position": reader.position,
        "file_length": reader.file_length,
        "trailer_present": reader.trailer_present,
        "truncated_tail_bytes": reader.truncated_tail_bytes,
    }
    if as_json:
        emit_json(summary)
        return
    per_table = ", ".join(f"{t}={n}" for t, n in sorted(tables.items())) or "none"
    click.echo(f"Summary: {n_entries} entries, {n_cells} cells; entries per table: {per_table}")
    tail = "trailer present" if reader.trailer_present else "no trailer"
    if reader.truncated_tail_bytes:
        tail += f"; truncated tail: {reader.truncated_tail_bytes} bytes after offset {reader.position}"
    click.echo(f"End: position {reader.position} of {reader.file_length} ({tail})")


def _compression(reader) -> str:
    """`` compression=dictionary[+tags][+values:CODEC]`` of a compressed WAL's header line."""
    parts = ["dictionary"]
    if reader.header.has_tag_compression:
        parts.append("tags")
    if reader.value_codec is not None:
        parts.append(f"values:{reader.value_codec.name}")
    return f" compression={'+'.join(parts)}"


@wal.command()
@click.argument("wals", nargs=-1, required=True, metavar="WAL...")
@click.option("--table", "tables", multiple=True, required=True, help="A table whose edits are replayed (repeat).")
@click.option("--map", "mappings", multiple=True, metavar="SRC:DST", help="Replay SRC's edits into DST (repeat).")
@click.option("--starttime", help="wal.start.time: ms, or yyyy-MM-dd'T'HH:mm:ss.SS (UTC).")
@click.option("--endtime", help="wal.end.time: ms, or yyyy-MM-dd'T'HH:mm:ss.SS (UTC).")
@json_option
@pass_context
def play(
    ctx: CliContext,
    wals: tuple[str, ...],
    tables: tuple[str, ...],
    mappings: tuple[str, ...],
    starttime: str | None,
    endtime: str | None,
    as_json: bool,
) -> None:
    """Replay the edits of the WAL files (or folders of them) into the cluster --cluster names (hbrep's or a
    real HBase), as HBase's WALPlayer does: the tables' entries written in [--starttime, --endtime], each
    table into itself or its --map target, as a Spark job (the WALs spread over its tasks, each read whole by
    one). Prints WALPlayer's counters."""
    from replication.operations.wal_play import TableMap, TimeRange, WalPlayError, wal_files
    from replication.operations.wal_play_job import check_tables, resolve_target, run_wal_play
    from replication.wal.errors import WALError

    table_map = TableMap.parse(tables, mappings)
    times = TimeRange.parse(starttime, endtime)
    files: list[str] = []
    for given in wals:
        fs, path = get_filesystem(given)
        for found in wal_files(fs, [path], times):
            try:  # a file that is no WAL: one line, before any job
                with open_wal(found, fs=fs):
                    pass
            except WALError as exc:
                raise WalPlayError(f"{found}: not a WAL ({exc})") from None
            files.append(_same_filesystem(given, found))
    target = resolve_target(ctx.cluster, ctx.conf)
    check_tables(target, table_map, ctx.conf)
    spark = ctx.spark("hbrep-wal-play")  # after the checks
    counters = run_wal_play(spark, files, table_map, times, target, ctx.conf)
    if as_json:
        emit_json({"files": len(files), "tables": table_map.targets, "target": str(ctx.cluster), **counters})
        return
    mapped = ", ".join(f"{src} -> {dst}" for src, dst in table_map.targets.items())
    click.echo(f"replayed {len(files)} WAL file(s) into {ctx.cluster} ({mapped})")
    for name, value in counters.items():
        click.echo(f"{name}={value}")


def _same_filesystem(given: str, path: str) -> str:
    """``path`` (as the file system of ``given`` names it) as a URI an executor can open again."""
    parsed = urlparse(given)
    return path if parsed.scheme in ("", "file") else f"{parsed.scheme}://{parsed.netloc}{path}"
