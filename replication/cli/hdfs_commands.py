"""``hbrep hdfs start|stop|status --root DIR``: a real single-node HDFS (NameNode + DataNode) on loopback."""

from __future__ import annotations

from pathlib import Path

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.devstack.hdfs import HdfsCluster
from replication.processes import detached

_root = click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=None,
    help="State folder: conf/, name/, data/, ports.json, namenode.log|pid, datanode.log|pid (default .hbrep/hdfs).",
)


def _cluster(ctx: CliContext, root: str | None) -> HdfsCluster:
    return HdfsCluster(Path(root) if root else ctx.state_dir / "hdfs")


@click.group()
def hdfs() -> None:
    """A real HDFS from Maven Central (Hadoop's NameNode and one DataNode), bound to 127.0.0.1."""


@hdfs.command()
@_root
@click.option("--timeout", type=click.FloatRange(5, 3600), default=180.0, show_default=True, help="Seconds to wait.")
@pass_context
def start(ctx: CliContext, root: str | None, timeout: float) -> None:
    """Start (formatting on first start) and return once WebHDFS answers with a live DataNode."""
    cluster = _cluster(ctx, root)
    with detached():  # the NameNode and DataNode outlive this command
        cluster.start(timeout=timeout)
    state = cluster.status()
    click.echo(
        f"HDFS serving on {cluster.uri} (WebHDFS {cluster.webhdfs_url}; NameNode pid {state.namenode_pid}, "
        f"DataNode pid {state.datanode_pid}, state {cluster.root}, HADOOP_CONF_DIR {cluster.conf_dir})"
    )


@hdfs.command()
@_root
@pass_context
def stop(ctx: CliContext, root: str | None) -> None:
    """Stop the DataNode, then the NameNode; no process is left behind. Data is kept."""
    cluster = _cluster(ctx, root)
    if cluster.stop():
        click.echo(f"HDFS stopped (state {cluster.root})")
    else:
        click.echo(f"HDFS was not running (state {cluster.root})")


@hdfs.command()
@_root
@json_option
@pass_context
def status(ctx: CliContext, root: str | None, as_json: bool) -> None:
    """Both JVMs, safe mode, live DataNodes and WebHDFS; exit 1 unless ready."""
    cluster = _cluster(ctx, root)
    state = cluster.status()
    if as_json:
        emit_json(state.as_dict())
    elif state.uri is None:
        click.echo(f"HDFS: not running (never started in {cluster.root})")
    else:
        nn = f"NameNode pid {state.namenode_pid}" if state.namenode_pid else "NameNode not running"
        dn = f"DataNode pid {state.datanode_pid}" if state.datanode_pid else "DataNode not running"
        detail = "ready" if state.ready else "not ready"
        extra = "" if state.namenode_pid is None else (
            f", safe mode {'on' if state.safe_mode else 'off'}, live DataNodes {state.live_datanodes}, "
            f"WebHDFS {'up' if state.webhdfs else 'down'}"
        )  # fmt: skip
        click.echo(f"HDFS {state.uri}: {detail}; {nn}, {dn}{extra}")
    if not state.ready:
        raise click.exceptions.Exit(1)
