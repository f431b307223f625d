"""``hbrep consistency_token PEER`` and ``hbrep check_consistency TOKEN`` (replication/operations/consistency.py).

``check_consistency`` exits 0 when everything the token recorded is shipped, 1 while something is
pending, and 2 with one error line for a malformed, unknown or expired token (or any other failure,
so that a script never reads an error as "not yet").
"""

from __future__ import annotations

from datetime import UTC, datetime

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.errors import HbrepError

CHECK_ERROR_EXIT = 2


def _zk(ctx: CliContext):
    from replication.zk.client import connected, zk_options

    return connected(ctx.cluster, **zk_options(ctx.conf))


def _fmt_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _split_tables(value: str | None) -> list[str]:
    tables = [t.strip() for t in (value or "").split(",") if t.strip()]
    if value is not None and not tables:
        raise click.BadParameter("give at least one table name", param_hint="--tables")
    return tables


@click.command("consistency_token")
@click.argument("peer")
@click.option("--tables", metavar="T,...", help="Only edits of these tables (comma-separated) must reach the peer.")
@json_option
@pass_context
def consistency_token(ctx: CliContext, peer: str, tables: str | None, as_json: bool) -> None:
    """Record where every queue of PEER stands now; print a token for check_consistency."""
    from replication.operations.consistency import take_token

    table_list = _split_tables(tables)
    with _zk(ctx) as zk:
        record = take_token(zk, ctx.cluster, ctx.conf, peer, table_list)
    if as_json:
        emit_json(record.as_dict())
    else:
        click.echo(record.token)


@click.command("check_consistency")
@click.argument("token")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=0, help="Keep checking up to this many s.")
@json_option
@pass_context
def check_consistency(ctx: CliContext, token: str, wait_s: float, as_json: bool) -> None:
    """Exit 0 once everything written before TOKEN was taken is on its peer, 1 while not yet."""
    from replication.operations.consistency import parse_token, wait_for_token

    try:
        parse_token(token)  # a malformed token is an error before any connection
        with _zk(ctx) as zk:
            result = wait_for_token(zk, ctx.cluster, ctx.conf, token, wait_s)
    except HbrepError as exc:
        exc.exit_code = CHECK_ERROR_EXIT  # 1 means "pending" here
        raise
    if as_json:
        emit_json(result.as_dict())
    elif result.consistent:
        click.echo(f"token {token}: consistent (peer {result.peer_id}, taken {_fmt_time(result.created_ms)})")
    else:
        total = sum(p.bytes for p in result.pending)
        click.echo(f"token {token}: pending, {len(result.pending)} WALs, {total} bytes (peer {result.peer_id})")
        for p in result.pending:
            click.echo(f"  {p.queue} {p.wal}: position {p.position} of {p.target} ({p.bytes} bytes)")
    if not result.consistent:
        raise click.exceptions.Exit(1)


COMMANDS = (consistency_token, check_consistency)
