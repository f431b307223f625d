"""``hbrep cluster start|stop``, ``rs list|kill``, ``create_table``, ``alter``, ``describe``, ``list``, ``exists``,
``drop``, ``truncate``, ``put``, ``delete``,
``deleteall``, ``compact``, ``major_compact``, ``flush``, ``load``: the embedded cluster from the command line
(names as in the HBase shell). put, delete, deleteall and the compactions also work on a running real HBase;
the table DDL commands do too, through its master's procedures (``_master``)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.errors import HbrepError
from replication.processes import detached


@contextlib.contextmanager
def _zk(ctx: CliContext) -> Iterator[object]:
    from replication.zk.client import connected, zk_options

    with connected(ctx.cluster, **zk_options(ctx.conf)) as zk:
        yield zk


def _paths(ctx: CliContext):  # type: ignore[no-untyped-def]
    from replication.zk.layout import ZNodePaths

    return ZNodePaths(ctx.conf, parent=ctx.cluster.znode_parent)


def _info(ctx: CliContext):  # type: ignore[no-untyped-def]
    from replication.cluster.info import read_cluster_info

    with _zk(ctx) as zk:
        return read_cluster_info(zk, _paths(ctx))


def _registry(ctx: CliContext):  # type: ignore[no-untyped-def]
    from replication.fs import get_filesystem
    from replication.tables.descriptors import TableRegistry

    fs, root = get_filesystem(_info(ctx).root)
    return TableRegistry(fs, root)


def _client(ctx: CliContext):  # type: ignore[no-untyped-def]
    from replication.cluster.client import ClusterClient

    return ClusterClient(ctx.cluster, ctx.conf)


def _writer(ctx: CliContext):  # type: ignore[no-untyped-def]
    """put/delete's client: HBase's RPC for a running real HBase, else the hbrep cluster's (same methods)."""
    from replication.cli.data_commands import real_hbase

    return real_hbase(ctx) or _client(ctx)


@contextlib.contextmanager
def _master(ctx: CliContext) -> Iterator[object]:
    """The real HBase's MasterAdmin when ``--cluster`` names one (its master down: NoActiveMaster, one line),
    else None (an hbrep cluster: its descriptors are files under its root)."""
    from replication.hbase.master_admin import master_admin
    from replication.hbase.registry import names_real_hbase

    with _zk(ctx) as zk:
        paths = _paths(ctx)
        if not names_real_hbase(zk, paths, ctx.conf):  # type: ignore[arg-type]
            yield None
            return
        with master_admin(zk, paths, ctx.cluster, ctx.conf) as admin:  # type: ignore[arg-type]
            yield admin


# -- cluster ---------------------------------------------------------------------------------------
@click.group()
def cluster() -> None:
    """Start or stop the embedded cluster named by --cluster."""


@cluster.command("start")
@click.argument("name")
@click.option("--root", required=True, type=click.Path(file_okay=False), help="hbase.rootdir of the cluster.")
@click.option("--regionservers", type=click.IntRange(1, 64), default=1, show_default=True)
@json_option
@pass_context
def cluster_start(ctx: CliContext, name: str, root: str, regionservers: int, as_json: bool) -> None:
    """Start NAME with N region-server processes on 127.0.0.1 (they keep running after this exits)."""
    from replication.cluster.embedded import start_cluster

    with detached():  # the region servers outlive this command
        started = start_cluster(str(ctx.cluster), root, regionservers, conf=ctx.conf, name=name)
    servers = started.servers
    with contextlib.suppress(Exception):
        started.zk.stop()
        started.zk.close()
    if as_json:
        emit_json({"name": name, "root": started.root, "cluster": str(ctx.cluster), "servers": servers})
        return
    click.echo(f"cluster {name} started at {ctx.cluster} (root {started.root})")
    for server in servers:
        click.echo(f"  region server {server}")


@cluster.command("stop")
@click.argument("name")
@pass_context
def cluster_stop(ctx: CliContext, name: str) -> None:
    """Stop every region server of NAME cleanly (flush memstores, close WALs)."""
    from replication.cluster.embedded import stop_servers

    info = _info(ctx)
    if info.name != name:
        raise HbrepError(f"cluster key {ctx.cluster} holds cluster {info.name!r}, not {name!r}")
    stopped = stop_servers(info.root)
    click.echo(f"cluster {name} stopped ({len(stopped)} region servers)")


# -- rs --------------------------------------------------------------------------------------------
@click.group()
def rs() -> None:
    """Region servers of the cluster."""


@rs.command("list")
@json_option
@pass_context
def rs_list(ctx: CliContext, as_json: bool) -> None:
    """The live region servers (children of <parent>/rs)."""
    from replication.cluster.embedded import live_servers, server_pids

    with _zk(ctx) as zk:
        servers = live_servers(zk, _paths(ctx))
        from replication.cluster.info import read_cluster_info

        info = read_cluster_info(zk, _paths(ctx))
    pids = server_pids(info.root)
    if as_json:
        emit_json([{"server": s, "pid": pids.get(s)} for s in servers])
        return
    for server in servers:
        click.echo(f"{server}\tpid {pids.get(server, '?')}")
    click.echo(f"{len(servers)} live region server(s)")


@rs.command("kill")
@click.argument("servername")
@pass_context
def rs_kill(ctx: CliContext, servername: str) -> None:
    """SIGKILL one region server (for failure tests: no flush, no WAL trailer)."""
    from replication.cluster.embedded import kill_server

    pid = kill_server(_info(ctx).root, servername, signal.SIGKILL)
    click.echo(f"killed region server {servername} (pid {pid})")


# -- tables ----------------------------------------------------------------------------------------
@click.command("create_table")
@click.argument("table")
@click.argument("families", nargs=-1, required=True)
@pass_context
def create_table(ctx: CliContext, table: str, families: tuple[str, ...]) -> None:
    """Create TABLE with FAMILY[:SCOPE]... (scope 0 = local, 1 = global/replicated)."""
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, check_scope

    fams = []
    for spec in families:
        name, _, scope = spec.partition(":")
        # Checked here, where the table is known, so the message names table and family.
        check_scope(int(scope) if scope.isdigit() else (scope or 0), table, name)
        fams.append(ColumnFamilyDescriptor(name, scope=int(scope or 0)))
    wanted = TableDescriptor.of(table, *fams)
    with _master(ctx) as admin:
        if admin is None:
            desc = _registry(ctx).create(wanted)
        else:
            from replication.hbase.table_schemas import schema_of

            admin.create_table(schema_of(wanted))  # type: ignore[attr-defined]
            desc = wanted
    click.echo(f"created table {desc.name}: " + ", ".join(f"{f.name} (scope {f.scope})" for f in fams))


@click.command("alter")
@click.argument("table")
@click.option("--family", required=True)
@click.option("--scope", required=True, type=click.IntRange(0, 1))
@pass_context
def alter(ctx: CliContext, table: str, family: str, scope: int) -> None:
    """Set REPLICATION_SCOPE of one family (takes effect for the next write; on a real HBase through the
    master's ModifyColumn, every other setting of the family kept)."""
    with _master(ctx) as admin:
        if admin is None:
            desc = _registry(ctx).alter_scope(table, family, scope)
        else:
            from replication.hbase.table_schemas import REPLICATION_SCOPE, descriptor_of, family_schema, set_attribute

            schema = admin.get_table_descriptor(table)  # type: ignore[attr-defined]
            cf = family_schema(schema, family, table)
            set_attribute(cf, REPLICATION_SCOPE, str(scope).encode())
            admin.modify_column(table, cf)  # type: ignore[attr-defined]
            desc = descriptor_of(schema)
    click.echo(f"table {desc.name}: family {family} scope {scope}")


def _set_table_state(name: str, enabled: bool, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("table")
    @pass_context
    def command(ctx: CliContext, table: str) -> None:
        with _master(ctx) as admin:
            if admin is None:
                _registry(ctx).set_enabled(table, enabled)
            elif enabled:
                admin.enable_table(table)  # type: ignore[attr-defined]
            else:
                admin.disable_table(table)  # type: ignore[attr-defined]
        click.echo(f"table {table} {name}d")

    return command


disable = _set_table_state(
    "disable",
    False,
    "Disable TABLE: writes to it fail until it is enabled (the guide's alter procedure: disable, alter, enable).",
)
enable = _set_table_state("enable", True, "Enable TABLE again.")


@click.command("is_enabled")
@click.argument("table")
@pass_context
def is_enabled(ctx: CliContext, table: str) -> None:
    """Print true or false, as the HBase shell does."""
    with _master(ctx) as admin:
        state = _registry(ctx).get(table).enabled if admin is None else admin.get_table_state(table)  # type: ignore[attr-defined]
        enabled = state in (True, "ENABLED")
    click.echo(str(enabled).lower())


@click.command("describe")
@click.argument("table")
@json_option
@pass_context
def describe(ctx: CliContext, table: str, as_json: bool) -> None:
    """The table's families with REPLICATION_SCOPE and VERSIONS."""
    with _master(ctx) as admin:
        if admin is None:
            desc = _registry(ctx).get(table)
        else:
            from replication.hbase.table_schemas import descriptor_of

            desc = descriptor_of(admin.get_table_descriptor(table))  # type: ignore[attr-defined]
    fams = [{"name": f.name, "scope": f.scope, "versions": f.max_versions} for f in desc.families.values()]
    if as_json:
        emit_json({"table": desc.name, "families": fams})
        return
    click.echo(f"Table {desc.name}")
    for f in fams:
        click.echo(f"  {{NAME => '{f['name']}', REPLICATION_SCOPE => '{f['scope']}', VERSIONS => '{f['versions']}'}}")


@click.command("list")
@click.argument("regex", required=False)
@json_option
@pass_context
def list_tables(ctx: CliContext, regex: str | None, as_json: bool) -> None:
    """The user tables (matching REGEX), as the HBase shell's list."""
    import re

    with _master(ctx) as admin:
        names = [d.name for d in _registry(ctx).list() if not d.is_system] if admin is None else admin.get_table_names()  # type: ignore[attr-defined]
    pattern = re.compile(regex) if regex else None
    names = sorted(n for n in names if pattern is None or pattern.fullmatch(n))
    if as_json:
        emit_json(names)
        return
    click.echo("TABLE")
    for name in names:
        click.echo(name)
    click.echo(f"{len(names)} row(s)")


@click.command("exists")
@click.argument("table")
@pass_context
def exists(ctx: CliContext, table: str) -> None:
    """Print true or false: does TABLE exist."""
    with _master(ctx) as admin:
        found = _registry(ctx).exists(table) if admin is None else admin.table_exists(table)  # type: ignore[attr-defined]
    click.echo(str(found).lower())


@click.command("drop")
@click.argument("table")
@pass_context
def drop(ctx: CliContext, table: str) -> None:
    """Delete TABLE, which must be disabled first (HBase's DeleteTable)."""
    from replication.tables.errors import TableNotDisabled

    with _master(ctx) as admin:
        if admin is None:
            registry = _registry(ctx)
            if registry.get(table).enabled:
                raise TableNotDisabled(f"table {table} is enabled: disable it first")
            registry.delete(table)
        else:
            admin.delete_table(table)  # type: ignore[attr-defined]
    click.echo(f"table {table} dropped")


@click.command("truncate")
@click.argument("table")
@click.option("--preserve-splits", is_flag=True, help="Keep the region boundaries (the shell's truncate_preserve).")
@pass_context
def truncate(ctx: CliContext, table: str, preserve_splits: bool) -> None:
    """Empty TABLE on a real HBase: disable it if enabled, then the master's TruncateTable (enabled again after)."""
    with _master(ctx) as admin:
        if admin is None:
            raise HbrepError(
                f"truncate: not supported on an hbrep cluster ({ctx.cluster}); disable, drop and create_table it again"
            )
        if admin.get_table_state(table) != "DISABLED":  # type: ignore[attr-defined]
            admin.disable_table(table)  # type: ignore[attr-defined]
        admin.truncate_table(table, preserve_splits)  # type: ignore[attr-defined]
    click.echo(f"table {table} truncated")


# -- writes ----------------------------------------------------------------------------------------
def _column(spec: str) -> tuple[bytes, bytes | None]:
    family, sep, qualifier = spec.partition(":")
    if not family:
        raise HbrepError(f"bad column {spec!r}: expected FAMILY[:QUALIFIER]")
    return family.encode(), (qualifier.encode() if sep else None)


@click.command("put")
@click.argument("table")
@click.argument("row")
@click.argument("column")
@click.argument("value")
@click.option("--ts", type=int, default=None, help="Timestamp in ms (default: the server clock).")
@pass_context
def put(ctx: CliContext, table: str, row: str, column: str, value: str, ts: int | None) -> None:
    """Put VALUE at ROW, FAMILY:QUALIFIER (acknowledged once durable in the WAL)."""
    family, qualifier = _column(column)
    with _writer(ctx) as client:
        client.put(table, row.encode(), family, qualifier or b"", value.encode(), ts=ts)
    click.echo(f"put {table} {row} {column}")


DELETE_TYPES = {"column": "DELETE_COLUMN", "version": "DELETE", "family": "DELETE_FAMILY",
                "family-version": "DELETE_FAMILY_VERSION"}  # fmt: skip


@click.command("delete")
@click.argument("table")
@click.argument("row")
@click.argument("column", required=False)
@click.option("--ts", type=int, default=None, help="Timestamp in ms (default: the server clock).")
@click.option(
    "--type",
    "kind",
    type=click.Choice(sorted(DELETE_TYPES)),
    default=None,
    help="Marker type: column (DeleteColumn, default with a qualifier), version (Delete: one version, "
    "needs --ts), family (DeleteFamily, default without a qualifier), family-version (needs --ts).",
)
@pass_context
def delete(ctx: CliContext, table: str, row: str, column: str | None, ts: int | None, kind: str | None) -> None:
    """Delete ROW (every family), a FAMILY, or FAMILY:QUALIFIER (all versions up to --ts)."""
    from replication.wal.model import CellType

    family, qualifier = _column(column) if column else (None, None)
    cell_type = CellType[DELETE_TYPES[kind]] if kind else None
    if cell_type is not None and family is None:
        raise HbrepError(f"delete --type {kind} needs a FAMILY[:QUALIFIER]")
    if cell_type in (CellType.DELETE, CellType.DELETE_COLUMN) and qualifier is None:
        qualifier = b""
    with _writer(ctx) as client:
        client.delete(table, row.encode(), family, qualifier, ts=ts, kind=cell_type)
    click.echo(f"deleted {table} {row}" + (f" {column}" if column else ""))


@click.command("deleteall")
@click.argument("table")
@click.argument("row")
@click.argument("column", required=False)
@click.option("--ts", type=int, default=None, help="Timestamp in ms: only cells at or before it (default: all).")
@pass_context
def deleteall(ctx: CliContext, table: str, row: str, column: str | None, ts: int | None) -> None:
    """Delete every cell of ROW (or of its FAMILY, or every version of FAMILY:QUALIFIER), as the shell's deleteall."""
    family, qualifier = _column(column) if column else (None, None)
    with _writer(ctx) as client:
        client.delete(table, row.encode(), family, qualifier, ts=ts)
    click.echo(f"deleted all of {table} {row}" + (f" {column}" if column else ""))


def _compact_command(name: str, major: bool, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("table")
    @click.option("--family", default=None, help="Only this column family.")
    @click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
                  help="Wait until no region of TABLE is compacting (at most SECONDS).")  # fmt: skip
    @json_option
    @pass_context
    def command(ctx: CliContext, table: str, family: str | None, wait_s: float | None, as_json: bool) -> None:
        from replication.cli.data_commands import real_hbase

        hbase = real_hbase(ctx)
        if hbase is None:
            raise HbrepError(
                f"{name}: {ctx.cluster} is an hbrep cluster, which has no compactions: its table files keep every "
                "cell and delete marker, and a delete masks older versions for good (flush writes memstores out)"
            )
        with hbase:
            regions = hbase.compact(table, major=major, family=(family or "").encode(), wait_s=wait_s)
        if as_json:
            emit_json({"table": table, "major": major, "regions": regions, "waited": wait_s is not None})
            return
        what = "major compaction" if major else "compaction"
        done = "done" if wait_s is not None else "requested"
        click.echo(f"{what} of {table} {done} ({regions} region(s))")

    return command


compact = _compact_command(
    "compact",
    False,
    "Compact every region of TABLE on a real HBase (AdminService.CompactRegion, as the shell's "
    "compact); it runs in the background unless --wait.",
)
major_compact = _compact_command(
    "major_compact",
    True,
    "Major-compact every region of TABLE on a real HBase: rewrites each store into one file "
    "and drops delete markers and the versions they mask; in the background unless --wait.",
)


@click.command("flush")
@click.argument("table", required=False)
@json_option
@pass_context
def flush(ctx: CliContext, table: str | None, as_json: bool) -> None:
    """Flush memstores to table files (TABLE, or every table), so Spark sees every acknowledged edit."""
    with _client(ctx) as client:
        files = client.flush(table)
    if as_json:
        emit_json({"files": files})
        return
    click.echo(f"flushed {table or 'all tables'}: {len(files)} table file(s)")


@click.command("load")
@click.argument("table")
@click.option("--rows", type=click.IntRange(1), required=True)
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=None, help="Rows per second cap.")
@click.option("--batch", "batch_size", type=click.IntRange(1, 10000), default=100, show_default=True)
@click.option("--value-size", type=click.IntRange(0), default=100, show_default=True)
@click.option("--family", default=None, help="Family to write (default: the table's first).")
@json_option
@pass_context
def load(
    ctx: CliContext,
    table: str,
    rows: int,
    rate: float | None,
    batch_size: int,
    value_size: int,
    family: str | None,
    as_json: bool,
) -> None:
    """Write N rows (one cell each) with a progress bar, then print the rate."""
    from tqdm import tqdm

    from replication.cluster.load import run_load

    desc = _registry(ctx).get(table)
    fam = family or next(iter(desc.families))
    desc.family(fam)
    with _client(ctx) as client, tqdm(total=rows, unit="row", disable=as_json, mininterval=0.5) as bar:
        stats = run_load(client, desc.name, rows, family=fam.encode(), rate=rate, batch_size=batch_size,
                         value_size=value_size, progress=bar.update)  # fmt: skip
    if as_json:
        emit_json(stats.as_dict())
        return
    click.echo(
        f"loaded {stats.rows} rows into {desc.name} in {stats.seconds:.2f}s: "
        f"{stats.rows_per_s:,.0f} rows/s, {stats.mb_per_s:.2f} MB/s"
    )


COMMANDS = (
    cluster,
    rs,
    create_table,
    alter,
    disable,
    enable,
    is_enabled,
    describe,
    list_tables,
    exists,
    drop,
    truncate,
    put,
    delete,
    deleteall,
    compact,
    major_compact,
    flush,
    load,
)
