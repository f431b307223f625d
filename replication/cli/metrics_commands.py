"""``hbrep metrics serve``: the replication status as a Prometheus scrape endpoint and HBase-style ``/jmx``."""

from __future__ import annotations

import signal
import threading

import click

from replication.cli.common import CliContext, pass_context
from replication.net import LOOPBACK


@click.group()
def metrics() -> None:
    """Replication metrics for monitoring systems (`metrics serve`)."""


@metrics.command("serve")
@click.option("--port", type=click.IntRange(0, 65535), required=True, help="Port to listen on (0: any free port).")
@click.option("--host", default=LOOPBACK, show_default=True, help="Address to bind.")
@pass_context
def serve(ctx: CliContext, port: int, host: str) -> None:
    """Serve `status replication` at http://HOST:PORT/metrics (Prometheus text format) and at /jmx (the JSON of
    HBase's JMXJsonServlet: the Hadoop:service=HBase,name=RegionServer,sub=Replication bean) until stopped.

    Each scrape reads the status of that moment, with HBase's metric names (hbrep_source_sizeOfLogQueue,
    hbrep_source_ageOfLastShippedOp, hbrep_peer_replicationLag, ...); hbrep_status_up is 0 while the
    cluster's ZooKeeper cannot be read, and 1 again once it is back. SIGINT or SIGTERM stops it.
    """
    from replication.monitoring.metrics_http import serve_status_metrics
    from replication.monitoring.status import replication_status
    from replication.monitoring.status_models import ReplicationStatus
    from replication.zk.client import connected, require_connected, zk_options

    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())

    def status_now() -> ReplicationStatus:
        require_connected(zk, ctx.cluster)  # a scrape while ZooKeeper is away is answered at once: up 0
        return replication_status(zk, ctx.cluster, ctx.conf)

    # reconnect_for=None: the endpoint outlives a ZooKeeper outage, and reads the status again once it is back
    with connected(ctx.cluster, reconnect_for=None, **zk_options(ctx.conf)) as zk:
        server = serve_status_metrics(status_now, host, port)
        click.echo(f"serving {server.url} and {server.jmx_url} for {ctx.cluster}", err=True)
        try:
            stopped.wait()
        finally:
            server.stop()
