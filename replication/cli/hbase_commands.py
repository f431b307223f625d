"""``hbrep hbase start|stop|status --root DIR``: a real Apache HBase (Maven Central) on loopback.

The global ``--cluster KEY`` names the ZooKeeper quorum, port and znode parent HBase runs under;
without it the quorum and port come from the configuration and the parent is ``/hbase-real``.
"""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.devstack.hbase import DEFAULT_PARENT, RealHBase
from replication.processes import detached
from replication.zk.cluster_key import ClusterKey

_root = click.option(
    "--root",
    required=True,
    type=click.Path(file_okay=False),
    help="The cluster's folder: conf/, hbase/ (hbase.rootdir), run/ (pid files and logs), hbase.json.",
)


def _cluster(ctx: CliContext) -> ClusterKey:
    if ctx.cluster_key:
        return ctx.cluster
    quorum = ctx.conf.get_str("hbase.zookeeper.quorum")
    port = ctx.conf.get_int("hbase.zookeeper.property.clientPort")
    return ClusterKey.parse(f"{quorum}:{port}:{DEFAULT_PARENT}")


@click.group()
def hbase() -> None:
    """A real Apache HBase 2.6 (HMaster, HRegionServers, Thrift) from Maven Central, on 127.0.0.1."""


@hbase.command()
@_root
@click.option("--regionservers", type=click.IntRange(1, 9), default=1, show_default=True)
@click.option("--heap-mb", type=click.IntRange(128, 4096), default=384, show_default=True, help="Heap of each JVM.")
@click.option(
    "--rootdir",
    default="",
    help="hbase.rootdir elsewhere than ROOT/hbase, e.g. hdfs://127.0.0.1:<NameNode RPC port>/hbase "
    "(an `hbrep hdfs start` HDFS: its RPC port, not the WebHDFS one).",
)
@pass_context
def start(ctx: CliContext, root: str, regionservers: int, heap_mb: int, rootdir: str) -> None:
    """Start the master, the region servers and Thrift; return once HBase serves (the first start
    downloads the jars into ~/.m2)."""
    cluster = RealHBase(root)
    with detached():  # HBase's JVMs outlive this command
        layout = cluster.start(_cluster(ctx), regionservers=regionservers, heap_mb=heap_mb, rootdir=rootdir)
    click.echo(
        f"HBase serving as {layout.cluster_key}: master 127.0.0.1:{layout.master_port}, region servers "
        f"{', '.join(str(p) for p in layout.regionserver_ports)}, Thrift 127.0.0.1:{layout.thrift_port} "
        f"(conf {cluster.site_file}, logs {cluster.run_dir})"
    )


@hbase.command()
@_root
def stop(root: str) -> None:
    """Stop Thrift, the region servers and the master; no process is left behind."""
    stopped = RealHBase(root).stop()
    click.echo(f"HBase stopped ({', '.join(stopped)})" if stopped else f"HBase was not running (root {root})")


@hbase.command()
@_root
@json_option
def status(root: str, as_json: bool) -> None:
    """Each JVM of the cluster: running, pid, port, log; exit 1 unless all run."""
    state = RealHBase(root).status()
    if as_json:
        emit_json(state.as_dict())
    else:
        click.echo(f"HBase {state.cluster_key} ({state.root})")
        for name, proc in state.processes.items():
            running = f"running (pid {proc['pid']})" if proc["running"] else "not running"
            click.echo(f"  {name:<7} {running}, port {proc['port']}, log {proc['log']}")
    if not state.running:
        raise click.exceptions.Exit(1)
