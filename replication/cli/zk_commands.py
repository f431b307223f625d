"""``hbrep zk start|stop|status``: the embedded standalone ZooKeeper server."""

from __future__ import annotations

from pathlib import Path

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.devstack.zookeeper import ZooKeeperServer
from replication.processes import detached


def _server(ctx: CliContext, port: int | None, data: str | None) -> ZooKeeperServer:
    port = port if port is not None else ctx.conf.get_int("hbase.zookeeper.property.clientPort")
    folder = Path(data) if data else ctx.state_dir / "zk"
    return ZooKeeperServer(folder, port)


_port = click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Client port (default hbase.zookeeper.property.clientPort = 2181).",
)
_data = click.option(
    "--data",
    type=click.Path(file_okay=False),
    default=None,
    help="State folder: zoo.cfg, data/, zookeeper.log, zookeeper.pid (default .hbrep/zk).",
)


@click.group()
def zk() -> None:
    """The embedded ZooKeeper server (from the jars pyspark ships), bound to 127.0.0.1."""


@zk.command()
@_port
@_data
@pass_context
def start(ctx: CliContext, port: int | None, data: str | None) -> None:
    """Start the server and return once it answers `srvr`."""
    server = _server(ctx, port, data)
    with detached():  # the server outlives this command
        pid = server.start()
    click.echo(f"ZooKeeper serving on {server.hosts} (pid {pid}, state {server.data_dir})")


@zk.command()
@_port
@_data
@pass_context
def stop(ctx: CliContext, port: int | None, data: str | None) -> None:
    """Stop the server; no process is left behind."""
    server = _server(ctx, port, data)
    if server.stop():
        click.echo(f"ZooKeeper stopped (state {server.data_dir})")
    else:
        click.echo(f"ZooKeeper was not running (state {server.data_dir})")


@zk.command()
@_port
@_data
@json_option
@pass_context
def status(ctx: CliContext, port: int | None, data: str | None, as_json: bool) -> None:
    """Whether the server runs and answers; exit 1 when it does not."""
    state = _server(ctx, port, data).status()
    if as_json:
        emit_json(state.as_dict())
    else:
        mode = f", mode {state.mode}" if state.mode else ""
        pid = f"pid {state.pid}, " if state.pid else ""
        click.echo(f"ZooKeeper: {pid}{state.detail}{mode}")
    if not (state.running and state.mode):
        raise click.exceptions.Exit(1)
