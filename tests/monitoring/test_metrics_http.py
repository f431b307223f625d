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


def _queue(replicator: str, queue_id: str, peer_id: str, wals: int, ages: tuple[int, ...], shipped: int) -> QueueStatus:
    return QueueStatus(
        queue=f"{replicator}/{queue_id}", replicator=replicator, queue_id=queue_id, peer_id=peer_id,
        recovered="-" in queue_id, dead_servers=(), replicator_alive=True, sizeOfLogQueue=wals, wals={},
        pendingBytes=0, replicationLag=0, ageOfLastShippedOp=ages[-1] if ages else None, status="ok", stuck=False,
        error=None, metrics={"shippedOps": shipped, "shippedBatches": 1 if shipped else 0, "logEditsRead": shipped,
                             "ageOfLastShippedOp_num_ops": len(ages)},
        ageOfLastShippedOpSamples=ages,
    )  # fmt: skip


STATUS = ReplicationStatus(
    cluster="127.0.0.1:2181:/hbase", root="/tmp/hbase", cluster_id="c", now_ms=0, live_servers=("rs1,1,1", "rs2,1,1"),
    queues=(
        _queue("rs1,1,1", "1", "1", 2, (100, 10, 30, 40), 10),
        _queue("rs2,1,1", "1", "1", 1, (20, 7), 5),
        _queue("rs2,1,1", "1-rs3,1,1", "1", 3, (), 0),
        _queue("rs1,1,1", "2", "2", 1, (0,), 4),
    ),
    peers={},
    # 9 ages ever set: two more than the queues above keep (a drained recovered queue's)
    global_source={"source.sizeOfLogQueue": 7, "source.ageOfLastShippedOp": 40, "source.shippedOps": 25,
                   "source.shippedBatches": 4, "source.logEditsRead": 25, "source.replicationLag": 0,
                   "source.ageOfLastShippedOp_num_ops": 9},
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
    assert bean["source.sizeOfLogQueue"] == 7
    assert bean["source.shippedOps"] == 25 and bean["source.shippedBatches"] == 4
    assert all(f"source.{name}" in bean for name in COUNTERS)
    assert "source.replicationLag" not in bean  # not one of HBase's source metrics
    # per queue id (the peer id for normal queues), summed over the replicators
    assert bean["source.1.sizeOfLogQueue"] == 3
    assert bean["source.1.shippedOps"] == 15 and bean["source.1.shippedBatches"] == 2
    assert bean["source.2.sizeOfLogQueue"] == 1
    assert bean["source.1-rs3,1,1.sizeOfLogQueue"] == 3


def _histogram(bean: dict, stem: str) -> dict[str, int]:
    return {name[len(stem) :]: value for name, value in bean.items() if name.startswith(stem + "_")}


def test_jmx_age_of_last_shipped_op_is_hbases_histogram(served):
    (bean,) = json.loads(_get(served.jmx_url)[2])["beans"]
    # MutableHistogram's attributes, its name capitalised (HBase 2.6's /jmx): no single-valued age any more
    assert not any(name.endswith(".ageOfLastShippedOp") for name in bean)
    suffixes = [
        "_num_ops", "_min", "_max", "_mean", "_25th_percentile", "_median", "_75th_percentile",
        "_90th_percentile", "_95th_percentile", "_98th_percentile", "_99th_percentile", "_99.9th_percentile",
    ]  # fmt: skip
    for stem in ("Source.ageOfLastShippedOp", "Source.1.ageOfLastShippedOp", "Source.2.ageOfLastShippedOp",
                 "Source.1-rs3,1,1.ageOfLastShippedOp"):  # fmt: skip
        assert list(_histogram(bean, stem)) == suffixes, stem
    # per queue id: the ages both replicators' queues of peer 1 set (100, 10, 30, 40 and 20, 7)
    assert _histogram(bean, "Source.1.ageOfLastShippedOp") == {
        "_num_ops": 6, "_min": 7, "_max": 100, "_mean": 34, "_25th_percentile": 10, "_median": 20,
        "_75th_percentile": 40, "_90th_percentile": 100, "_95th_percentile": 100, "_98th_percentile": 100,
        "_99th_percentile": 100, "_99.9th_percentile": 100,
    }  # fmt: skip
    assert _histogram(bean, "Source.2.ageOfLastShippedOp")["_num_ops"] == 1
    assert _histogram(bean, "Source.2.ageOfLastShippedOp")["_max"] == 0
    # a recovered queue that has not shipped: an empty histogram, every figure 0
    assert set(_histogram(bean, "Source.1-rs3,1,1.ageOfLastShippedOp").values()) == {0}
    # the global source: every age ever set counted, figures over the ones the queues keep
    overall = _histogram(bean, "Source.ageOfLastShippedOp")
    assert overall["_num_ops"] == 9 and overall["_min"] == 0 and overall["_max"] == 100
    assert overall["_median"] == 20 and overall["_mean"] == (100 + 10 + 30 + 40 + 20 + 7 + 0) // 7


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
