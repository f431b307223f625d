"""Prometheus scrape endpoint of the replication status (``hbrep metrics serve``).

prometheus_client's own HTTP server serves ``/metrics`` from a registry holding only
``replication.monitoring.status.StatusCollector``: every scrape reads the status of that moment (the gauges that
``hbrep status replication`` computes from ZooKeeper and the WALs, the counters of the metrics store),
with HBase's metric names as suffixes (``hbrep_source_sizeOfLogQueue{queue_id=...,peer_id=...}``).
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

from replication.errors import HbrepError
from replication.monitoring.status import status_registry


class MetricsServer:
    """A running scrape endpoint; :meth:`stop` closes its socket."""

    def __init__(self, server: Any, thread: Any, host: str, port: int):
        self._server = server
        self._thread = thread
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """``http://host:port/metrics``."""
        return f"http://{self.host}:{self.port}/metrics"

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def serve_status_metrics(supplier: Callable[[], dict[str, Any]], host: str, port: int) -> MetricsServer:
    """Serve ``supplier``'s status at ``http://host:port/metrics`` from a background thread.

    A port already taken (or a host that is not this machine's) is one ``HbrepError`` naming it.
    """
    from prometheus_client import start_http_server

    try:
        server, thread = start_http_server(port, addr=host, registry=status_registry(supplier))
    except OSError as exc:
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror or exc})"
        raise HbrepError(f"metrics serve: {host}:{port} {why}") from None
    return MetricsServer(server, thread, host, server.server_address[1])
