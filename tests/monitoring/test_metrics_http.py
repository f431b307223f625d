"""The scrape endpoints over real HTTP on loopback: ``/jmx`` in the shape of HBase's JMXJsonServlet (one
``Hadoop:service=HBase,name=RegionServer,sub=Replication`` bean, the global ``source.`` and per-queue-id
``source.<id>.`` attributes of MetricsReplicationSourceSource), ``?qry=``, and ``/metrics`` beside it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from replication.monitoring.metrics import COUNTERS
from replication.monitoring.metrics_http import REPLICATION_BEAN, serve_status_metrics
from replication.monitoring.status_models import QueueStatus, ReplicationStatus
from replication.net import LOOPBACK


def _queue(replicator: str, queue_id: str, peer_id: str, wals: int, age: int | None, shipped: int) -> QueueStatus:
    return QueueStatus(
        queue=f"{replicator}/{queue_id}", replicator=replicator, queue_id=queue_id, peer_id=peer_id,
        recovered="-" in queue_id, dead_servers=(), replicator_alive=True, sizeOfLogQueue=wals, wals={},
        pendingBytes=0, replicationLag=0, ageOfLastShippedOp=age, status="ok", stuck=False, error=None,
        metrics={"shippedOps": shipped, "shippedBatches": 1 if shipped else 0, "logEditsRead": shipped},
    )  # fmt: skip


STATUS = ReplicationStatus(
    cluster="127.0.0.1:2181:/hbase", root="/tmp/hbase", cluster_id="c", now_ms=0, live_servers=("rs1,1,1", "rs2,1,1"),
    queues=(
        _queue("rs1,1,1", "1", "1", 2, 40, 10),
        _queue("rs2,1,1", "1", "1", 1, 7, 5),
        _queue("rs2,1,1", "1-rs3,1,1", "1", 3, None, 0),
        _queue("rs1,1,1", "2", "2", 1, 0, 4),
    ),
    peers={},
    global_source={"source.sizeOfLogQueue": 7, "source.ageOfLastShippedOp": 40, "source.shippedOps": 25,
                   "source.shippedBatches": 4, "source.logEditsRead": 25, "source.replicationLag": 0},
)  # fmt: skip


@pytest.fixture
def served():
    server = serve_status_metrics(lambda: STATUS, LOOPBACK, 0)
    try:
        yield server
    finally:
        server.stop()


def _get(url: str) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_jmx_has_hbase_bean_and_attribute_names(served):
    code, headers, body = _get(served.jmx_url)
    assert code == 200 and headers["Content-Type"] == "application/json; charset=utf8"
    (bean,) = json.loads(body)["beans"]
    assert bean["name"] == REPLICATION_BEAN == "Hadoop:service=HBase,name=RegionServer,sub=Replication"
    assert bean["modelerType"] == "RegionServer,sub=Replication" and bean["tag.Context"] == "regionserver"
    # the global source (MetricsReplicationGlobalSourceSource): source.<suffix>
    assert bean["source.sizeOfLogQueue"] == 7 and bean["source.ageOfLastShippedOp"] == 40
    assert bean["source.shippedOps"] == 25 and bean["source.shippedBatches"] == 4
    assert all(f"source.{name}" in bean for name in COUNTERS)
    assert "source.replicationLag" not in bean  # not one of HBase's source metrics
    # per queue id (the peer id for normal queues), summed over the replicators; the age is the largest
    assert bean["source.1.sizeOfLogQueue"] == 3 and bean["source.1.ageOfLastShippedOp"] == 40
    assert bean["source.1.shippedOps"] == 15 and bean["source.1.shippedBatches"] == 2
    assert bean["source.2.sizeOfLogQueue"] == 1 and bean["source.2.ageOfLastShippedOp"] == 0
    # a recovered queue is a source of its own, named by its queue id; no age until it ships
    assert bean["source.1-rs3,1,1.sizeOfLogQueue"] == 3 and bean["source.1-rs3,1,1.ageOfLastShippedOp"] == 0


def test_jmx_query_selects_beans_as_the_servlet_does(served):
    for query in ("Hadoop:service=HBase,name=RegionServer,sub=Replication", "Hadoop:*", "*:*"):
        code, _, body = _get(served.jmx_url + "?qry=" + urllib.request.quote(query))
        assert code == 200 and [b["name"] for b in json.loads(body)["beans"]] == [REPLICATION_BEAN]
    code, _, body = _get(served.jmx_url + "?qry=" + urllib.request.quote("Hadoop:service=HBase,name=Master,*"))
    assert code == 200 and json.loads(body) == {"beans": []}


def test_prometheus_is_served_beside_it_and_other_paths_are_not_found(served):
    code, headers, body = _get(served.url)
    assert code == 200 and headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    assert "hbrep_status_up 1.0" in text
    assert 'hbrep_source_ageOfLastShippedOp{peer_id="1",queue_id="1",replicator="rs1,1,1"} 40.0' in text
    assert _get(f"http://{served.host}:{served.port}/nothing")[0] == 404


def test_an_unreadable_status_is_a_500_at_jmx_and_up_0_at_metrics():
    def broken() -> ReplicationStatus:
        raise RuntimeError("zookeeper away")

    server = serve_status_metrics(broken, LOOPBACK, 0)
    try:
        code, _, body = _get(server.jmx_url)
        assert code == 500 and json.loads(body)["beans"] == []
        assert "hbrep_status_up 0.0" in _get(server.url)[2].decode()
    finally:
        server.stop()
