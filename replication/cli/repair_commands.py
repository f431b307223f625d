"""``hbrep repair PEER TABLE``: HashTable/SyncTable in one command (replication/operations/repair.py).

Exit 0 when the peer's copy matches the source afterwards (or, with ``--dry-run``, after printing the
plan), 2 when cells still differ after the repair (the last line says why), 1 with one error line for
bad arguments or a peer that cannot take the writes.
"""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.tables.semantics import LATEST_TIMESTAMP

STILL_DIFFERENT_EXIT = 2


@click.command("repair")
@click.argument("peer")
@click.argument("table")
@click.option("--families", help="Only these column families, comma-separated (default: every replicated one).")
@click.option("--starttime", type=int, default=0, show_default=True, help="Only cells written from this time (ms).")
@click.option("--stoptime", "--endtime", "stoptime", type=int, default=LATEST_TIMESTAMP,
              help="Only cells written before this time (ms, exclusive).")  # fmt: skip
@click.option("--peerTableName", "peer_table", help="The table's name on the peer (default: the same).")
@click.option("--dry-run", is_flag=True, help="Print what would change (rows, cells, bytes); change nothing.")
@click.option(
    "--deletes/--no-deletes",
    default=None,
    help="Delete the cells only the peer holds. Default: on, except in a two-way topology (the peer also "
    "replicates to this cluster), where the peer's own writes are legitimate and are kept unless --deletes.",
)
@click.option("--buckets", type=click.IntRange(min=1), default=65536, show_default=True,
              help="Hash buckets of rows compared before any cell (HashTable's ranges).")  # fmt: skip
@json_option
@pass_context
def repair(
    ctx: CliContext,
    peer: str,
    table: str,
    families: str | None,
    starttime: int,
    stoptime: int,
    peer_table: str | None,
    dry_run: bool,
    deletes: bool | None,
    buckets: int,
    as_json: bool,
) -> None:
    """Make PEER's copy of TABLE the source's: find differing rows by hash buckets, write the source's cells
    (keeping the source's cluster id, so they never loop back), then compare again."""
    from replication.checks.verify import split_list
    from replication.operations.repair import prepare_repair, run_repair
    from replication.operations.sync_table import SyncOptions
    from replication.zk.client import connected, zk_options

    options = SyncOptions(
        start_time=starttime, end_time=stoptime, families=split_list(families), peer_table=peer_table,
        dry_run=dry_run, buckets=buckets,
    )  # fmt: skip
    with connected(ctx.cluster, **zk_options(ctx.conf)) as zk:
        job = prepare_repair(zk, ctx.cluster, ctx.conf, peer_id=peer, table=table, options=options, deletes=deletes)
        roots = (job.target.source_root, job.target.peer_root)
        spark = ctx.spark("hbrep-repair", roots=roots)  # after the checks
        report = run_repair(spark, job, ctx.conf)
    if as_json:
        emit_json(report.as_dict())
    else:
        before = report.before
        for name, value in before.counters.items():
            click.echo(f"{name}={value}")
        verb = "would write" if dry_run else "wrote"
        click.echo(
            f"{verb} {before.cells_to_put} cells and {before.cells_to_delete} delete markers "
            f"({before.bytes_to_write} bytes) to {report.table} on peer {peer}"
            + ("" if report.deletes else " (cells only the peer holds are kept: --no-deletes)")
        )
        if report.after is not None:
            outcome = f"still differs: {report.why_remaining()}" if report.remaining else "the peer's copy now matches"
            click.echo(outcome)
    if report.remaining:
        raise click.exceptions.Exit(STILL_DIFFERENT_EXIT)


COMMANDS = (repair,)
