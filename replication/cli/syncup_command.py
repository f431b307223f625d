"""``hbrep syncup``: ship every queue of a source none of whose servers lives (HBase's ReplicationSyncUp)."""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context


@click.command()
@click.option("--in-process", is_flag=True, help="Run the Spark jobs in this process instead of spark-submit.")
@json_option
@pass_context
def syncup(ctx: CliContext, in_process: bool, as_json: bool) -> None:
    """Claim the queues of every dead replicator of the source to a syncup server of hbrep's (registered
    nowhere) and ship them in cycles until none is left, as HBase's ReplicationSyncUp does; refused while a
    region server of the source lives. Prints what was claimed and shipped, and any queue left (a disabled
    peer's)."""
    from replication.jobs.launch import runner_for
    from replication.operations.syncup import syncup as run_syncup
    from replication.zk.client import connected, zk_options

    spark = None
    if in_process:
        spark = ctx.spark("hbrep-syncup")
    with connected(ctx.cluster, **zk_options(ctx.conf)) as zk:
        report = run_syncup(zk, ctx.cluster, ctx.conf, runner_for(ctx.conf, spark))
    if as_json:
        emit_json(report.as_dict())
        return
    for dead, queues in sorted(report.claimed.items()):
        click.echo(f"{dead} is dead, claimed its replication queues: {', '.join(queues) or '(none)'}")
    click.echo(f"shipped {report.entries_shipped} entries in {report.cycles} cycle(s) as {report.server}")
    for queue in report.left:
        click.echo(f"left: queue {queue} (its peer is disabled)")
