"""``hbrep ship --once`` (one cycle without Airflow) and ``hbrep status replication``."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context


def _zk(ctx: CliContext):
    from replication.zk.client import connected, zk_options

    return connected(ctx.cluster, **zk_options(ctx.conf))


def _fmt_ms(value) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.1f}s" if value < 3_600_000 else f"{value / 3_600_000:.1f}h"


def _fmt_time(ms) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S") if ms else "-"


@click.command()
@click.option("--once", is_flag=True, required=True, help="Run exactly one cycle: snapshot, Spark job, commit.")
@click.option("--peer", "peers", multiple=True, help="Only these peers (repeatable); default all.")
@click.option("--in-process", is_flag=True, help="Run the Spark job in this process instead of spark-submit.")
@json_option
@pass_context
def ship(ctx: CliContext, once: bool, peers: tuple[str, ...], in_process: bool, as_json: bool) -> None:
    """One ship cycle; prints per peer: WALs read, entries shipped, bytes, filtered, positions, lag."""
    from replication.jobs.launch import runner_for
    from replication.source.cycle import run_cycle

    spark = None
    if in_process:
        spark = ctx.spark("hbrep-ship")
    with _zk(ctx) as zk:
        report = run_cycle(zk, ctx.cluster, ctx.conf, runner=runner_for(ctx.conf, spark), peer_ids=list(peers) or None)
    if as_json:
        emit_json(report.as_dict())
    else:
        if report.disabled:
            click.echo(f"cycle {report.cycle_id}: nothing shipped, {report.disabled}")
        elif not report.spark_job:
            click.echo(f"cycle {report.cycle_id}: nothing to ship (no Spark job started)")
        for peer_id, peer in sorted(report.peers.items()):
            click.echo(
                f"peer {peer_id} [{peer.state}]: queues={peer.queues} "
                f"wals_read={peer.wals_read} entries_read={peer.entries_read} "
                f"shipped={peer.entries_shipped} rows={peer.rows_shipped} "
                f"bytes={peer.bytes_shipped} "
                f"filtered={peer.filtered} positions_advanced={peer.positions_advanced} "
                f"wals_finished={peer.wals_finished} lag={_fmt_ms(peer.lag_ms)}"
            )
        for peer_id, why in report.busy_peers.items():
            click.echo(f"peer {peer_id}: skipped, {why}")
        for queue in report.queues:
            if queue.failed:
                click.echo(f"queue {queue.queue} {queue.status.upper()}: {queue.error}", err=True)
            elif queue.status == "waiting":  # a serial peer's order: it goes on in a later cycle
                click.echo(f"queue {queue.queue} WAITING: {queue.error}")
    if report.failed_queues():
        raise click.exceptions.Exit(3)


@click.group()
def status() -> None:
    """Status reports (`status replication`)."""


@status.command("replication")
@json_option
@click.option("--prometheus", is_flag=True, help="Print Prometheus text exposition format.")
@pass_context
def status_replication(ctx: CliContext, as_json: bool, prometheus: bool) -> None:
    """Per peer and queue: sizeOfLogQueue, ageOfLastShippedOp, replication lag, stuck queues."""
    from replication.monitoring.status import replication_status, to_prometheus

    with _zk(ctx) as zk:
        state = replication_status(zk, ctx.cluster, ctx.conf)
    if as_json:
        emit_json(state.to_json())
        return
    if prometheus:
        click.echo(to_prometheus(state), nl=False)
        return
    click.echo(f"source {state.cluster} (id {state.cluster_id}), {len(state.live_servers)} live servers")
    totals = state.global_source
    click.echo(
        f"global: sizeOfLogQueue={int(totals['source.sizeOfLogQueue'])} "
        f"replicationLag={_fmt_ms(totals['source.replicationLag'])} "
        f"ageOfLastShippedOp={_fmt_ms(totals.get('source.ageOfLastShippedOp'))}"
    )
    for peer in state.peers.values():
        click.echo(
            f"peer {peer.peer_id} {peer.state} -> {peer.cluster_key}: queues={peer.queues} "
            f"sizeOfLogQueue={peer.sizeOfLogQueue} replicationLag={_fmt_ms(peer.replicationLag)} "
            f"ageOfLastShippedOp={_fmt_ms(peer.ageOfLastShippedOp)} stuck={peer.stuck_queues}"
            f" replicated_through={_fmt_time(peer.replicated_through_ms)}"
            + (f" lag_target={_fmt_ms(peer.lag_target_ms)}" if peer.lag_target_ms else "")
        )
        for table, row in sorted(peer.tables.items()):
            click.echo(
                f"  table {table}: replicated_through={_fmt_time(row.replicated_through_ms)} "
                f"lag={_fmt_ms(row.lag_ms)}"
                + (f" target={_fmt_ms(row.lag_target_ms)}" if row.lag_target_ms else "")
                + (" TARGET MISSED" if row.target_missed else "")
            )
    for queue in state.queues:
        click.echo(
            f"  {queue.queue}: status={queue.status} sizeOfLogQueue={queue.sizeOfLogQueue} "
            f"pendingBytes={queue.pendingBytes} replicationLag={_fmt_ms(queue.replicationLag)} "
            f"ageOfLastShippedOp={_fmt_ms(queue.ageOfLastShippedOp)}" + (f" error={queue.error}" if queue.error else "")
        )
    for dead in state.dead_servers:
        claim = f"claimed={_fmt_time(dead.claimed_ms)} by={dead.claimed_by}" if dead.claimed_by else "awaiting failover"
        click.echo(f"dead {dead.server}: died={_fmt_time(dead.died_ms)} {claim}")
    for alert in state.recent_alerts:
        click.echo(f"alert {_fmt_time(alert.get('at_ms'))} {alert.get('kind', '?')}: {alert.get('message')}")
