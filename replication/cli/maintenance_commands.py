"""``hbrep clean --once [--explain]``: the log cleaner."""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.errors import HbrepError


@click.command()
@click.option("--once", is_flag=True, required=True, help="Run the log cleaner once.")
@click.option("--explain", is_flag=True, help="Say for each kept file why it was kept.")
@json_option
@pass_context
def clean(ctx: CliContext, once: bool, explain: bool, as_json: bool) -> None:
    """Delete oldWALs files older than hbase.master.logcleaner.ttl that no queue holds."""
    from replication.cleaner import clean_once
    from replication.zk.client import connected, zk_options

    with connected(ctx.cluster, **zk_options(ctx.conf)) as zk:
        report = clean_once(zk, ctx.cluster, ctx.conf, explain=explain)
    if as_json:
        emit_json(report.as_dict())
    else:
        for path in report.deleted:
            click.echo(f"deleted {path}")
        for path, why in sorted(report.kept.items()):
            click.echo(f"kept {path}: {why}")
        if report.left_to == "hbase":
            click.echo("a real HBase source: its own LogCleaner deletes its oldWALs; hbrep deletes none")
        click.echo(f"{len(report.deleted)} files deleted, {report.bytes_freed} bytes freed")
    if report.error:
        raise HbrepError(report.error)
