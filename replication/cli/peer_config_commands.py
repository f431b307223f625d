"""The HBase shell's peer-configuration and table-replication commands, with their names and rules.

``set_peer_tableCFs``, ``append_peer_tableCFs``, ``remove_peer_tableCFs``, ``show_peer_tableCFs``,
``set_peer_namespaces``, ``append_peer_namespaces``, ``remove_peer_namespaces``,
``set_peer_exclude_tableCFs``, ``append_peer_exclude_tableCFs``, ``remove_peer_exclude_tableCFs``,
``set_peer_exclude_namespaces``, ``append_peer_exclude_namespaces``, ``remove_peer_exclude_namespaces``,
``set_peer_replicate_all``, ``set_peer_bandwidth``, ``set_peer_serial``, ``get_peer_config``,
``list_peer_configs``, ``update_peer_config``, ``list_replicated_tables``, ``enable_table_replication``
and ``disable_table_replication``. Table-cfs are spelled as in ``add_peer --table-cfs``
(``t1:cf1,cf2;ns:t2``), namespaces as ``ns1,ns2``; an empty argument clears a list. On an hbrep cluster
the peer's znode keeps HBase's protobuf; on a real HBase every edit is the master's
UpdateReplicationPeerConfig procedure and every table change its ModifyTable (``peer_commands.peer_storage``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.cli.peer_commands import parse_config_items, peer_storage
from replication.errors import HbrepError
from replication.hbase.master_peers import MasterPeerStorage
from replication.zk import peer_config_edits as edits
from replication.zk.peer_storage import (
    ReplicationPeerConfig,
    hbase_table_cfs_string,
    parse_namespaces,
    parse_table_cfs,
)

Edit = Callable[[ReplicationPeerConfig], ReplicationPeerConfig]


def _edit(ctx: CliContext, peer_id: str, edit: Edit, what: str) -> None:
    with peer_storage(ctx) as storage:
        if isinstance(storage, MasterPeerStorage):
            storage.edit_peer_config(peer_id, edit)
        else:
            edits.edit_peer_config(storage, peer_id, edit)
    click.echo(f"peer {peer_id}: {what}")


def _exclude_edit(
    edit: Callable[[ReplicationPeerConfig], ReplicationPeerConfig],
) -> Callable[[ReplicationPeerConfig], ReplicationPeerConfig]:
    """``edit`` of the include lists, applied to the exclude lists (HBase's append/remove rules are the same)."""

    def apply(config: ReplicationPeerConfig) -> ReplicationPeerConfig:
        swapped = replace(config, table_cfs=config.exclude_table_cfs, namespaces=config.exclude_namespaces)
        done = edit(swapped)
        return replace(config, exclude_table_cfs=done.table_cfs, exclude_namespaces=done.namespaces)

    return apply


def _cfs(spec: str) -> dict[str, list[str]] | None:
    return parse_table_cfs(spec) if spec.strip() else None


def _spaces(spec: str) -> set[str] | None:
    return parse_namespaces(spec) if spec.strip() else None


def _flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise HbrepError(f"expected true or false, not {value!r}")
    return lowered == "true"


def _peer_and_value(name: str, help_text: str, metavar: str = "VALUE"):  # type: ignore[no-untyped-def]
    def wrap(func):  # type: ignore[no-untyped-def]
        func = click.argument("value", metavar=metavar)(func)
        func = click.argument("peer_id")(func)
        return click.command(name, help=help_text)(pass_context(func))

    return wrap


@_peer_and_value("set_peer_tableCFs", "Replicate only these table-cfs ('t1:cf1,cf2;ns:t2'; '' clears).", "TABLE_CFS")
def set_peer_table_cfs(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.set_table_cfs(c, _cfs(value)), f"table-cfs set to {value!r}")


@_peer_and_value("append_peer_tableCFs", "Add table-cfs to the peer's list.", "TABLE_CFS")
def append_peer_table_cfs(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.append_table_cfs(c, parse_table_cfs(value)), f"table-cfs {value!r} added")


@_peer_and_value("remove_peer_tableCFs", "Remove table-cfs from the peer's list.", "TABLE_CFS")
def remove_peer_table_cfs(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.remove_table_cfs(c, parse_table_cfs(value), peer_id),
          f"table-cfs {value!r} removed")  # fmt: skip


@_peer_and_value("set_peer_namespaces", "Replicate only these namespaces ('ns1,ns2'; '' clears).", "NAMESPACES")
def set_peer_namespaces(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.set_namespaces(c, _spaces(value)), f"namespaces set to {value!r}")


@_peer_and_value("append_peer_namespaces", "Add namespaces to the peer's list.", "NAMESPACES")
def append_peer_namespaces(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.append_namespaces(c, parse_namespaces(value)), f"namespaces {value!r} added")


@_peer_and_value("remove_peer_namespaces", "Remove namespaces from the peer's list.", "NAMESPACES")
def remove_peer_namespaces(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.remove_namespaces(c, parse_namespaces(value)),
          f"namespaces {value!r} removed")  # fmt: skip


@_peer_and_value("set_peer_exclude_tableCFs", "With replicate_all: replicate everything but these table-cfs.",
                 "TABLE_CFS")  # fmt: skip
def set_peer_exclude_table_cfs(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.set_exclude_table_cfs(c, _cfs(value)), f"exclude table-cfs set to {value!r}")


@_peer_and_value("set_peer_exclude_namespaces", "With replicate_all: replicate everything but these namespaces.",
                 "NAMESPACES")  # fmt: skip
def set_peer_exclude_namespaces(ctx: CliContext, peer_id: str, value: str) -> None:
    _edit(ctx, peer_id, lambda c: edits.set_exclude_namespaces(c, _spaces(value)),
          f"exclude namespaces set to {value!r}")  # fmt: skip


@_peer_and_value("append_peer_exclude_tableCFs", "Add table-cfs to the peer's exclude list.", "TABLE_CFS")
def append_peer_exclude_table_cfs(ctx: CliContext, peer_id: str, value: str) -> None:
    edit = _exclude_edit(lambda c: edits.append_table_cfs(c, parse_table_cfs(value)))
    _edit(ctx, peer_id, edit, f"exclude table-cfs {value!r} added")


@_peer_and_value("remove_peer_exclude_tableCFs", "Remove table-cfs from the peer's exclude list.", "TABLE_CFS")
def remove_peer_exclude_table_cfs(ctx: CliContext, peer_id: str, value: str) -> None:
    edit = _exclude_edit(lambda c: edits.remove_table_cfs(c, parse_table_cfs(value), peer_id))
    _edit(ctx, peer_id, edit, f"exclude table-cfs {value!r} removed")


@_peer_and_value("append_peer_exclude_namespaces", "Add namespaces to the peer's exclude list.", "NAMESPACES")
def append_peer_exclude_namespaces(ctx: CliContext, peer_id: str, value: str) -> None:
    edit = _exclude_edit(lambda c: edits.append_namespaces(c, parse_namespaces(value)))
    _edit(ctx, peer_id, edit, f"exclude namespaces {value!r} added")


@_peer_and_value("remove_peer_exclude_namespaces", "Remove namespaces from the peer's exclude list.", "NAMESPACES")
def remove_peer_exclude_namespaces(ctx: CliContext, peer_id: str, value: str) -> None:
    edit = _exclude_edit(lambda c: edits.remove_namespaces(c, parse_namespaces(value)))
    _edit(ctx, peer_id, edit, f"exclude namespaces {value!r} removed")


@_peer_and_value("set_peer_replicate_all", "true: every user table (minus the exclude lists); false: only the "
                 "listed table-cfs and namespaces. Clear the other mode's lists first, as HBase requires.",
                 "true|false")  # fmt: skip
def set_peer_replicate_all(ctx: CliContext, peer_id: str, value: str) -> None:
    flag = _flag(value)
    _edit(ctx, peer_id, lambda c: edits.set_replicate_all(c, flag), f"replicate_all {str(flag).lower()}")


@_peer_and_value("set_peer_bandwidth", "Bytes per second each source of the peer may ship (0 = unthrottled).",
                 "BYTES_PER_SECOND")  # fmt: skip
def set_peer_bandwidth(ctx: CliContext, peer_id: str, value: str) -> None:
    if not value.strip().isdigit():
        raise HbrepError(f"bandwidth must be a whole number of bytes per second (0 = unthrottled), not {value!r}")
    _edit(ctx, peer_id, lambda c: edits.set_bandwidth(c, int(value)), f"bandwidth {int(value)}")


@_peer_and_value("set_peer_serial", "Serial replication for the peer (edits of a region in order).", "true|false")
def set_peer_serial(ctx: CliContext, peer_id: str, value: str) -> None:
    flag = _flag(value)
    _edit(ctx, peer_id, lambda c: edits.set_serial(c, flag), f"serial {str(flag).lower()}")


@click.command("show_peer_tableCFs")
@click.argument("peer_id")
@pass_context
def show_peer_table_cfs(ctx: CliContext, peer_id: str) -> None:
    """The peer's table-cfs as the HBase shell shows them (ns.table:cf1,cf2;...)."""
    with peer_storage(ctx) as storage:
        config = storage.get_peer_config(peer_id)
    click.echo(hbase_table_cfs_string(config.table_cfs))


@click.command("get_peer_config")
@click.argument("peer_id")
@json_option
@pass_context
def get_peer_config(ctx: CliContext, peer_id: str, as_json: bool) -> None:
    """The peer's whole configuration (cluster key, lists, bandwidth, serial, CONFIG entries)."""
    with peer_storage(ctx) as storage:
        config = storage.get_peer_config(peer_id)
    if as_json:
        emit_json(_config_json(config))
        return
    _print_config(config)


def _config_json(config: ReplicationPeerConfig) -> dict[str, object]:
    return {
        "cluster_key": config.cluster_key, "replicate_all": config.replicate_all,
        "table_cfs": config.table_cfs, "namespaces": config.namespaces,
        "exclude_table_cfs": config.exclude_table_cfs, "exclude_namespaces": config.exclude_namespaces,
        "bandwidth": config.bandwidth, "serial": config.serial, "configuration": config.configuration,
        "replication_endpoint_impl": config.replication_endpoint_impl,
    }  # fmt: skip


def _print_config(config: ReplicationPeerConfig) -> None:
    click.echo(edits.peer_config_string(config))
    for key, value in sorted(config.configuration.items()):
        click.echo(f"  {key} => {value}")


@click.command("list_peer_configs")
@json_option
@pass_context
def list_peer_configs(ctx: CliContext, as_json: bool) -> None:
    """Every peer's whole configuration, by peer id (the HBase shell's list_peer_configs)."""
    with peer_storage(ctx) as storage:
        if isinstance(storage, MasterPeerStorage):
            configs = {p.peer_id: p.config for p in storage.list_peers()}
        else:
            configs = {pid: storage.get_peer_config(pid) for pid in storage.list_peer_ids()}
    if as_json:
        emit_json({pid: _config_json(config) for pid, config in configs.items()})
        return
    for pid, config in configs.items():
        click.echo(f"PeerId {pid}")
        _print_config(config)


@click.command("update_peer_config")
@click.argument("peer_id")
@click.option("--config", "config_items", multiple=True, required=True, metavar="KEY=VALUE",
              help="Entry to add or replace (repeatable); secrets by reference only, as in add_peer.")  # fmt: skip
@pass_context
def update_peer_config(ctx: CliContext, peer_id: str, config_items: tuple[str, ...]) -> None:
    """Add or replace entries of the peer's CONFIG map (the others are kept)."""
    entries = parse_config_items(peer_id, config_items)
    _edit(ctx, peer_id, lambda c: edits.update_configuration(c, entries), f"{len(entries)} config entr(y/ies) set")


# -- tables ------------------------------------------------------------------------------------------
REPLICATION_TYPES = {1: "GLOBAL", 2: "SERIAL"}


@click.command("list_replicated_tables")
@click.argument("regex", required=False)
@json_option
@pass_context
def list_replicated_tables(ctx: CliContext, regex: str | None, as_json: bool) -> None:
    """Families whose REPLICATION_SCOPE is not 0, as the HBase shell lists them (optionally matching REGEX)."""
    from replication.hbase import table_replication as on_hbase
    from replication.operations.table_replication import replicated_families

    pattern = re.compile(regex) if regex else None
    with peer_storage(ctx) as storage:
        if isinstance(storage, MasterPeerStorage):
            found = on_hbase.replicated_families(storage.admin)
        else:
            found = replicated_families(storage.zk, storage.paths)
        rows = [r for r in found if pattern is None or pattern.fullmatch(r[0])]
    if as_json:
        emit_json([{"table": t, "family": f, "replication_type": REPLICATION_TYPES.get(s, str(s))} for t, f, s in rows])
        return
    click.echo("TABLE:COLUMNFAMILY ReplicationType")
    for table, family, scope in rows:
        click.echo(f" {table}:{family} {REPLICATION_TYPES.get(scope, str(scope))}")
    click.echo(f"{len(rows)} row(s)")


@click.command("enable_table_replication")
@click.argument("table")
@pass_context
def enable_table_replication(ctx: CliContext, table: str) -> None:
    """Set REPLICATION_SCOPE 1 on every family of TABLE, first creating TABLE on each peer that lacks it
    (with this table's descriptor); refused when a peer's TABLE has other families, as HBase does."""
    from replication.hbase import table_replication as on_hbase
    from replication.operations.table_replication import enable_table_replication as enable

    with peer_storage(ctx) as storage:
        if isinstance(storage, MasterPeerStorage):
            created = on_hbase.enable_table_replication(storage.admin, ctx.conf, table)
        else:
            created = enable(storage.zk, storage.paths, ctx.conf, table)
    for peer_id in created:
        click.echo(f"table {table} created on peer {peer_id}")
    click.echo(f"table {table}: replication enabled on every family")


@click.command("disable_table_replication")
@click.argument("table")
@pass_context
def disable_table_replication(ctx: CliContext, table: str) -> None:
    """Set REPLICATION_SCOPE 0 on every family of TABLE (its later edits stay on this cluster)."""
    from replication.hbase import table_replication as on_hbase
    from replication.operations.table_replication import set_table_scope

    with peer_storage(ctx) as storage:
        if isinstance(storage, MasterPeerStorage):
            on_hbase.set_table_scope(storage.admin, table, 0)
        else:
            set_table_scope(storage.zk, storage.paths, table, 0)
    click.echo(f"table {table}: replication disabled on every family")


COMMANDS = (
    set_peer_table_cfs, append_peer_table_cfs, remove_peer_table_cfs, show_peer_table_cfs,
    set_peer_namespaces, append_peer_namespaces, remove_peer_namespaces,
    set_peer_exclude_table_cfs, append_peer_exclude_table_cfs, remove_peer_exclude_table_cfs,
    set_peer_exclude_namespaces, append_peer_exclude_namespaces, remove_peer_exclude_namespaces,
    set_peer_replicate_all, set_peer_bandwidth, set_peer_serial, get_peer_config, list_peer_configs,
    update_peer_config,
)  # fmt: skip
TABLE_COMMANDS = (list_replicated_tables, enable_table_replication, disable_table_replication)
