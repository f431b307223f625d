"""``hbrep spark start|stop|status``: the long-lived Spark Connect server the ship job runs on."""

from __future__ import annotations

from pathlib import Path

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.devstack.spark_connect import SparkConnectServer
from replication.jobs.connect_port import embedded_state_dir, read_port
from replication.kerberos import kerberos_identity, spark_login_conf
from replication.processes import detached


def _server(ctx: CliContext, port: int | None, state: str | None) -> SparkConnectServer:
    folder = Path(state) if state else embedded_state_dir(ctx.conf)
    if port is None and read_port(folder) is None:
        port = ctx.conf.get_int("hbrep.spark.connect.port")
    return SparkConnectServer(
        folder,
        port,
        driver_memory_mb=ctx.conf.get_int("hbrep.spark.connect.driver.memory.mb"),
        # with hbase.security.authentication=kerberos, the server's JVM logs in as hbrep's principal (its keytab)
        extra_conf=spark_login_conf(kerberos_identity(ctx.conf)),
    )


_port = click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="gRPC port (default: the last one started from the state folder, else hbrep.spark.connect.port = 15002).",
)
_state = click.option(
    "--state",
    type=click.Path(file_okay=False),
    default=None,
    help="State folder: spark-connect.pid, .port, .log (default <hbrep.state.dir>/spark).",
)


@click.group()
def spark() -> None:
    """The Spark Connect server (Spark's own, from the jars pyspark ships), bound to 127.0.0.1."""


@spark.command()
@_port
@_state
@pass_context
def start(ctx: CliContext, port: int | None, state: str | None) -> None:
    """Start the server and return once it accepts clients (a killed server is started again)."""
    server = _server(ctx, port, state)
    with detached():  # the server outlives this command
        pid = server.start()
    click.echo(f"Spark Connect serving on {server.url} (pid {pid}, state {server.state_dir})")


@spark.command()
@_state
@pass_context
def stop(ctx: CliContext, state: str | None) -> None:
    """Stop the server and its Python workers; no process is left behind."""
    server = _server(ctx, None, state)
    if server.stop():
        click.echo(f"Spark Connect stopped (state {server.state_dir})")
    else:
        click.echo(f"Spark Connect was not running (state {server.state_dir})")


@spark.command()
@_state
@json_option
@pass_context
def status(ctx: CliContext, state: str | None, as_json: bool) -> None:
    """Whether the server runs and accepts clients; exit 1 when it does not."""
    result = _server(ctx, None, state).status()
    if as_json:
        emit_json(result.as_dict())
    else:
        pid = f"pid {result.pid}, " if result.pid else ""
        click.echo(f"Spark Connect: {pid}{result.detail}")
    if not result.serving:
        raise click.exceptions.Exit(1)
