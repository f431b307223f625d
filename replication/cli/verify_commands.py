"""``hbrep verify PEER TABLE`` (VerifyReplication) and ``hbrep quality TABLE --peer PEER`` (GX checks)."""

from __future__ import annotations

import json

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.tables.semantics import LATEST_TIMESTAMP


def _target(ctx: CliContext, peer: str):
    from replication.checks.verify import resolve_target
    from replication.zk.client import connected, zk_options

    with connected(ctx.cluster, **zk_options(ctx.conf)) as zk:
        return resolve_target(zk, ctx.cluster, ctx.conf, peer)


@click.command()
@click.argument("peer", metavar="PEER|PEER_CLUSTER_KEY")
@click.argument("table")
@click.option("--starttime", type=int, default=0, show_default=True, help="Start of the time range (ms, inclusive).")
@click.option("--endtime", type=int, default=LATEST_TIMESTAMP, help="End of the time range (ms, exclusive).")
@click.option("--stoptime", type=int, default=None, help="The reference guide's name for --endtime.")
@click.option("--families", help="Only these column families, comma-separated.")
@click.option("--row-prefixes", help="Only rows starting with one of these prefixes, comma-separated.")
@click.option("--recomparesleep", type=int, default=0, help="Re-read differing rows after this many ms.")
@click.option("--peerTableName", "peer_table", help="The table's name on the peer (default: the same).")
@click.option("--versions", type=int, default=-1, show_default=True, help="Versions per column (-1: one).")
@click.option("--raw", is_flag=True, help="Compare delete markers too (raw scans).")
@click.option("--compare-tags", is_flag=True, help="Compare each cell's tags too (hbrep's option).")
@click.option("--verbose", "list_bad", is_flag=True, help="Print the bad row keys.")
@click.option("--fail-on-bad", is_flag=True, help="Exit with code 2 when BADROWS > 0.")
@click.option("--in-process", is_flag=True, help="Run Spark in this process instead of spark-submit.")
@json_option
@pass_context
def verify(
    ctx: CliContext,
    peer: str,
    table: str,
    starttime: int,
    endtime: int,
    stoptime: int | None,
    families: str | None,
    row_prefixes: str | None,
    recomparesleep: int,
    peer_table: str | None,
    versions: int,
    raw: bool,
    compare_tags: bool,
    list_bad: bool,
    fail_on_bad: bool,
    in_process: bool,
    as_json: bool,
) -> None:
    """VerifyReplication: compare TABLE with its copy on PEER (a peer id or a cluster key), row by row."""
    from replication.checks.verify import VerifyOptions, split_list

    options = VerifyOptions(
        start_time=starttime,
        end_time=endtime,
        stop_time=stoptime,
        families=split_list(families),
        row_prefixes=split_list(row_prefixes),
        recompare_sleep_ms=recomparesleep,
        peer_table=peer_table,
        versions=versions,
        raw=raw,
        verbose=list_bad,
        compare_tags=compare_tags,
    )
    target = _target(ctx, peer)
    from replication.checks.verify import flush_both_sides

    flush_both_sides(target, table, ctx.conf, peer_table)
    master = ctx.conf.get_str("hbrep.spark.master")
    if in_process:
        from replication.checks.verify import verify_tables

        spark = ctx.spark("hbrep-verify", master=master, roots=(target.source_root, target.peer_root))
        result = verify_tables(spark, target.source_root, target.peer_root, table, options)
    else:
        from replication.jobs.verify import submit_verify
        from replication.kerberos import kerberos_identity, spark_login_conf

        ctx.state_dir.mkdir(parents=True, exist_ok=True)
        result = submit_verify(
            target.source_root,
            target.peer_root,
            table,
            json.dumps(options.as_dict()),
            master=master,
            work_dir=ctx.state_dir,
            spark_conf=spark_login_conf(kerberos_identity(ctx.conf)),
        )
    if as_json:
        emit_json({**result.as_dict(), "source": target.source_key, "peer": target.peer_key})
    else:
        for line in result.counter_lines():
            click.echo(line)
        for bad in result.bad_rows:
            click.echo(f"{bad.counter}: {bad.as_dict()['row']}")
        if result.bad_rows_truncated:
            click.echo(f"(only the first {len(result.bad_rows)} bad rows are listed)")
    if fail_on_bad and result.bad_row_count > 0:
        raise click.exceptions.Exit(2)


@click.command()
@click.argument("table")
@click.option("--peer", required=True, metavar="PEER|PEER_CLUSTER_KEY", help="The peer holding the copy.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), help="Per-column rules (YAML or JSON).")
@click.option("--starttime", type=int, default=0, show_default=True, help="Start of the interval (ms).")
@click.option("--endtime", type=int, default=LATEST_TIMESTAMP, help="End of the interval (ms, exclusive).")
@click.option("--peerTableName", "peer_table", help="The table's name on the peer (default: the same).")
@click.option("--fail-on-bad", is_flag=True, help="Exit with code 2 when an expectation fails.")
@json_option
@pass_context
def quality(
    ctx: CliContext,
    table: str,
    peer: str,
    rules_file: str | None,
    starttime: int,
    endtime: int,
    peer_table: str | None,
    fail_on_bad: bool,
    as_json: bool,
) -> None:
    """Great Expectations checks of TABLE on PEER; prints the verdicts and where the Data Docs are."""
    from replication.checks.quality import load_rules, run_quality

    rules = load_rules(rules_file)
    target = _target(ctx, peer)
    spark = ctx.spark("hbrep-quality", roots=(target.source_root, target.peer_root))
    report = run_quality(
        spark,
        target.source_root,
        target.peer_root,
        table,
        state_dir=ctx.state_dir / "quality",
        peer_name=target.peer_id or target.peer_key,
        peer_table=peer_table,
        rules=rules,
        start_ts=starttime,
        end_ts=endtime,
    )
    if as_json:
        emit_json(report.as_dict())
    else:
        verdict = "PASSED" if report.success else "FAILED"
        click.echo(f"suite {report.suite}: {verdict} (source rows {report.source_rows}, peer rows {report.peer_rows})")
        for outcome in report.failed:
            where = f" column {outcome.column}" if outcome.column else ""
            click.echo(
                f"  failed {outcome.expectation}{where}: observed={outcome.observed} "
                f"unexpected={outcome.unexpected_count}"
            )
        click.echo(f"Data Docs: {report.data_docs_index}")
    if fail_on_bad and not report.success:
        raise click.exceptions.Exit(2)


COMMANDS = (verify, quality)
