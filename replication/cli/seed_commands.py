"""``hbrep seed_peer PEER TABLE...``: bring a peer in with tables that already have history (operations/seed.py).

Exit 0 once the tables are copied, the peer's shipping of them has resumed from where the seed began, and
VerifyReplication of each reports BADROWS=0; 1 with one error line otherwise. A seed that stopped half way
(a crash, a kill) is resumed by running the same command again: finished chunks are not copied again.
"""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context


@click.command("seed_peer")
@click.argument("peer")
@click.argument("tables", nargs=-1, required=True)
@click.option("--cluster-key", help="Add PEER with this cluster key (quorum:port:/parent) when it does not exist.")
@click.option("--chunks", type=click.IntRange(min=1), default=8, show_default=True,
              help="Row-range chunks per table (each copied, and recorded, on its own).")  # fmt: skip
@click.option("--peer-rootdir", help="The peer's hbase.rootdir, for a seed between real HBase clusters: HBase's "
              "ExportSnapshot copies each table's snapshot there (hdfs://nn:8020/hbase, file:///...).")  # fmt: skip
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=600, show_default=True,
              help="Seconds the catch-up may take before the seed stops (run it again to go on).")  # fmt: skip
@json_option
@pass_context
def seed_peer(
    ctx: CliContext,
    peer: str,
    tables: tuple[str, ...],
    cluster_key: str | None,
    chunks: int,
    peer_rootdir: str | None,
    timeout_s: float,
    as_json: bool,
) -> None:
    """Copy TABLES to PEER while the source keeps writing: their edits are held for PEER meanwhile and
    shipped from where the seed began once the copy is done; ends with VerifyReplication of each.

    From a real HBase source (PEER a shadow peer to a real HBase cluster) each table is copied with HBase's
    own snapshot, ExportSnapshot (into --peer-rootdir) and clone/restore on the peer."""
    from replication.devstack.hbase_snapshots import JavaSnapshotCopier
    from replication.operations.seed import check_seed_request, seed_roots
    from replication.operations.seed import seed_peer as run_seed
    from replication.zk.client import connected, zk_options

    with connected(ctx.cluster, **zk_options(ctx.conf)) as zk:
        check_seed_request(zk, ctx.cluster, ctx.conf, peer, list(tables), cluster_key=cluster_key, chunks=chunks,
                           peer_rootdir=peer_rootdir)  # fmt: skip
        roots = seed_roots(zk, ctx.cluster, ctx.conf, peer, cluster_key)
        spark = ctx.spark("hbrep-seed", roots=roots)  # after the checks
        report = run_seed(
            spark, zk, ctx.cluster, ctx.conf, peer, list(tables), cluster_key=cluster_key, chunks=chunks,
            timeout_s=timeout_s, peer_rootdir=peer_rootdir, copier=JavaSnapshotCopier(ctx.conf),
        )  # fmt: skip
    if as_json:
        emit_json(report.as_dict())
        return
    for table in report.tables:
        made = " (created on the peer)" if table in report.created_on_peer else ""
        click.echo(f"{table}{made}: {report.chunks[table]} chunks, {report.copied_cells.get(table, 0)} cells copied")
    if report.resumed_chunks:
        click.echo(f"resumed: {report.resumed_chunks} chunks were finished before")
    click.echo(f"caught up in {report.catch_up_cycles} cycles; shipping of {', '.join(report.tables)} resumed")
    for table, counters in report.verify.items():
        click.echo(f"{table}: GOODROWS={counters['GOODROWS']} BADROWS={counters['BADROWS']}")


COMMANDS = (seed_peer,)
