"""Scrape endpoints of the replication status (``hbrep metrics serve``): Prometheus and HBase-style JMX JSON.

One HTTP server on a background thread serves

- ``/metrics``: Prometheus text exposition from a registry holding only
  ``replication.monitoring.status.StatusCollector`` (HBase's metric names as suffixes,
  ``hbrep_source_sizeOfLogQueue{queue_id=...,peer_id=...}``);
- ``/jmx``: the JSON that HBase's ``JMXJsonServlet`` (``org.apache.hadoop.hbase.http.jmx``) writes for a region
  server's replication bean, ``{"beans": [{"name": "Hadoop:service=HBase,name=RegionServer,sub=Replication",
  "modelerType": ..., "tag.Context": "regionserver", "source.sizeOfLogQueue": ..., "source.1.shippedOps": ...}]}``,
  so tools written against HBase's ``/jmx`` read hbrep's figures with the same attribute names. ``?qry=`` takes
  an object-name pattern as the servlet does (``*`` matches any run of characters); no match gives no beans.

Every request reads the status of that moment. The attributes are HBase's ``MetricsReplicationSourceSource``
names: the global source ``source.<suffix>`` (``MetricsReplicationGlobalSourceSource``) and one source per
queue id ``source.<queueId>.<suffix>`` (``MetricsReplicationSourceSourceImpl``; for a normal queue the id is the
peer id, so these are the per-peer sources; a recovered queue's id names its dead servers). One bean covers
the cluster's replicators: a queue id's figures are summed over them. ``ageOfLastShippedOp`` is a histogram
there as in HBase (``MutableHistogram``: ``Source.ageOfLastShippedOp_num_ops``, ``_min``, ``_max``, ``_mean``,
``_25th_percentile`` ... ``_99.9th_percentile``; ``Source.<queueId>.ageOfLastShippedOp_...`` per source) over
the ages the queues' ship tasks set (``replication.monitoring.age_histogram``).
"""

from __future__ import annotations

import errno
import fnmatch
import json
import logging
import socket
import threading
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from replication.errors import HbrepError
from replication.monitoring.age_histogram import NUM_OPS_FIELD, SAMPLES_FIELD, histogram_attributes
from replication.monitoring.metrics import COUNTERS
from replication.monitoring.status import status_registry
from replication.monitoring.status_models import ReplicationStatus

log = logging.getLogger(__name__)

REPLICATION_BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Replication"
# Gauges HBase's sources publish besides the counters and the age histogram (``MetricsReplicationSourceSource``)
GAUGES = ("sizeOfLogQueue",)


def replication_bean(status: dict[str, Any], hostname: str | None = None) -> dict[str, Any]:
    """The ``sub=Replication`` bean of ``status`` (``replication.monitoring.status.replication_status``).

    Global attributes (``source.<suffix>``) sum the counters of every queue ever shipped (as the status's
    ``global`` does) and the ``sizeOfLogQueue`` of the queues there are now; the global age histogram
    (``Source.ageOfLastShippedOp_*``) counts every age ever set and is computed over the kept ages of the
    queues there are now. Per queue id (``source.<queueId>.<suffix>``, ``Source.<queueId>.ageOfLastShippedOp_*``):
    the same over the queues with that id on every replicator.
    """
    bean: dict[str, Any] = {
        "name": REPLICATION_BEAN,
        "modelerType": "RegionServer,sub=Replication",
        "tag.Context": "regionserver",
        "tag.Hostname": hostname or socket.gethostname(),
    }
    totals = status.get("global", {})
    queues = sorted(status.get("queues", []), key=lambda q: q["queue_id"])
    bean["source.sizeOfLogQueue"] = int(totals.get("source.sizeOfLogQueue", 0))
    every_age = [age for queue in queues for age in queue.get(SAMPLES_FIELD, [])]
    bean.update(histogram_attributes("source.", every_age, int(totals.get(f"source.{NUM_OPS_FIELD}", 0))))
    for name in COUNTERS:
        bean[f"source.{name}"] = int(totals.get(f"source.{name}", 0))
    by_id: dict[str, dict[str, Any]] = {}
    for queue in queues:
        empty = {"sizeOfLogQueue": 0, "ages": [], "num_ops": 0, **dict.fromkeys(COUNTERS, 0)}
        source = by_id.setdefault(queue["queue_id"], empty)
        source["sizeOfLogQueue"] += int(queue["sizeOfLogQueue"])
        source["ages"].extend(queue.get(SAMPLES_FIELD, []))
        source["num_ops"] += int(queue.get("metrics", {}).get(NUM_OPS_FIELD, 0))
        for name in COUNTERS:
            source[name] += int(queue.get("metrics", {}).get(name, 0))
    for queue_id, source in by_id.items():
        prefix = f"source.{queue_id}."
        bean[prefix + "sizeOfLogQueue"] = source["sizeOfLogQueue"]
        bean.update(histogram_attributes(prefix, source["ages"], source["num_ops"]))
        for name in COUNTERS:
            bean[prefix + name] = source[name]
    return bean


def to_jmx_json(status: dict[str, Any], query: str | None = None, hostname: str | None = None) -> dict[str, Any]:
    """``{"beans": [...]}`` as HBase's JMXJsonServlet answers ``/jmx`` (``?qry=`` pattern: ``query``)."""
    bean = replication_bean(status, hostname)
    pattern = query or "*:*"
    matches = pattern == "*:*" or fnmatch.fnmatchcase(bean["name"], pattern)
    return {"beans": [bean] if matches else []}


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

    @property
    def jmx_url(self) -> str:
        """``http://host:port/jmx``."""
        return f"http://{self.host}:{self.port}/jmx"

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _handler(supplier: Callable[[], ReplicationStatus]) -> type[BaseHTTPRequestHandler]:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    registry = status_registry(supplier)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s - %s", self.address_string(), format % args)

        def _send(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/jmx":
                query = urllib.parse.parse_qs(url.query).get("qry", [None])[0]
                try:
                    payload = to_jmx_json(supplier().to_json(), query)  # the bean is built from the status's JSON
                    code = 200
                except Exception as exc:  # the servlet answers 500 when a bean cannot be read
                    log.error("replication status unreadable: %s: %s", type(exc).__name__, exc)
                    payload, code = {"beans": [], "error": f"{type(exc).__name__}: {exc}"}, 500
                body = (json.dumps(payload, indent=2) + "\n").encode("utf-8")
                self._send(code, body, "application/json; charset=utf8")
            elif url.path in ("/", "/metrics"):
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            else:
                self._send(404, b"not found: try /metrics or /jmx\n", "text/plain; charset=utf-8")

    return Handler


def serve_status_metrics(supplier: Callable[[], ReplicationStatus], host: str, port: int) -> MetricsServer:
    """Serve ``supplier``'s status at ``http://host:port/metrics`` and ``/jmx`` from a background thread.

    A port already taken (or a host that is not this machine's) is one ``HbrepError`` naming it.
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        server_class = type("StatusHTTPServer", (ThreadingHTTPServer,), {"address_family": family})
        server = server_class((host, port), _handler(supplier))
    except OSError as exc:
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror or exc})"
        raise HbrepError(f"metrics serve: {host}:{port} {why}") from None
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="hbrep-metrics-http", daemon=True)
    thread.start()
    return MetricsServer(server, thread, host, server.server_address[1])
