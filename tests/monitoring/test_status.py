"""``hbrep status replication``'s gauges on real region servers, ZooKeeper and shipped cycles, with HBase's
meanings: ``sizeOfLogQueue`` counts every WAL of the queue, the one being read included (HBase 2.x's
``ReplicationSourceLogQueue``); ``ageOfLastShippedOp`` is set at ship time (ship time − the write time of the
last shipped entry, ``MetricsSource.setAgeOfLastShippedOp``), does not grow while the queue is caught up
and idle, and goes to 0 when an empty batch moves a caught-up queue's position; per peer and globally the
largest of the sources'. The same figures are served at ``/jmx`` as HBase's JMXJsonServlet shapes them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import uuid

import pytest
from support import add_peer, create_table, cycle

from replication.monitoring.metrics_http import REPLICATION_BEAN, serve_status_metrics
from replication.monitoring.status import replication_status, to_prometheus
from replication.net import LOOPBACK
from replication.wal.model import Cell, CellType
from replication.zk.client import connected

pytestmark = pytest.mark.slow


def _typed(pair):
    with connected(pair.source_key) as zk:
        return replication_status(zk, pair.source_key, pair.conf)


def _status(pair) -> dict:
    """The status as ``hbrep status replication --json`` gives it."""
    return _typed(pair).to_json()


def test_size_of_log_queue_and_age_of_last_shipped_op(pair, spark):
    add_peer(pair, "1")
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    before_write = int(time.time() * 1000)
    with pair.source.client() as client:
        client.batch(table, [Cell(f"r{i:03d}".encode(), b"f", b"q", 1000 + i, CellType.PUT, b"v") for i in range(60)])
    report = cycle(pair, spark)
    after_cycle = int(time.time() * 1000)
    assert sum(p.rows_shipped for p in report.peers.values()) == 60

    status = _status(pair)
    queues = {q["replicator"]: q for q in status["queues"] if q["peer_id"] == "1"}
    shipped = {server: q for server, q in queues.items() if q["metrics"].get("shippedOps")}
    assert shipped, "no queue shipped"
    for queue in shipped.values():
        # set at ship time from the last shipped entry's write time: within the write and the cycle's end
        last_write = int(queue["metrics"]["lastShippedWriteTime"])
        assert before_write <= last_write <= after_cycle
        assert 0 <= queue["ageOfLastShippedOp"] <= after_cycle - last_write
    ages = {server: q["ageOfLastShippedOp"] for server, q in queues.items()}

    # a caught-up idle queue keeps the age it was given: reading again later does not make it grow
    time.sleep(1.5)
    later = _status(pair)
    assert {q["replicator"]: q["ageOfLastShippedOp"] for q in later["queues"] if q["peer_id"] == "1"} == ages
    peer_age = max(a for a in ages.values() if a is not None)
    assert later["peers"]["1"]["ageOfLastShippedOp"] == peer_age
    assert later["global"]["source.ageOfLastShippedOp"] == peer_age

    # a roll moves the queue to a new WAL; the next cycle reads nothing but moves the position: caught up, 0
    rolled = next(iter(shipped))
    with pair.source.client() as client:
        client.roll_wal(rolled)
        client.roll_wal(rolled)
    status = _status(pair)
    queues = {q["replicator"]: q for q in status["queues"] if q["peer_id"] == "1"}
    assert set(queues) == set(pair.source.servers)
    for queue in queues.values():
        # every WAL of the queue counts, the one being read included (ReplicationSourceLogQueue)
        assert queue["sizeOfLogQueue"] == len(queue["wals"]) >= 1
    assert queues[rolled]["sizeOfLogQueue"] >= 3
    peer = status["peers"]["1"]
    assert peer["sizeOfLogQueue"] == sum(q["sizeOfLogQueue"] for q in queues.values())
    assert status["global"]["source.sizeOfLogQueue"] == peer["sizeOfLogQueue"]

    cycle(pair, spark)
    status = _status(pair)
    queues = {q["replicator"]: q for q in status["queues"] if q["peer_id"] == "1"}
    assert queues[rolled]["ageOfLastShippedOp"] == 0
    for server, queue in queues.items():
        if server != rolled:  # nothing read in their queues: the age stays as the first ship set it
            assert queue["ageOfLastShippedOp"] == ages[server]
    peer = status["peers"]["1"]
    assert peer["ageOfLastShippedOp"] == max(q["ageOfLastShippedOp"] or 0 for q in queues.values())

    text = to_prometheus(_typed(pair))
    assert f'hbrep_peer_ageOfLastShippedOp{{peer_id="1",state="ENABLED"}} {float(peer["ageOfLastShippedOp"])}' in text

    # /jmx over real HTTP on loopback: HBase's bean name and attribute names, the same figures
    server = serve_status_metrics(lambda: _typed(pair), LOOPBACK, 0)
    try:
        with urllib.request.urlopen(server.jmx_url, timeout=60) as response:
            assert response.headers["Content-Type"].startswith("application/json")
            beans = json.loads(response.read())["beans"]
    finally:
        server.stop()
    (bean,) = beans
    assert bean["name"] == REPLICATION_BEAN and bean["tag.Context"] == "regionserver"
    assert bean["source.sizeOfLogQueue"] == status["global"]["source.sizeOfLogQueue"]
    assert bean["source.1.sizeOfLogQueue"] == peer["sizeOfLogQueue"]
    # the age as HBase's histogram: one value per age set (the first pass's ages, then the rolled queue's 0)
    ages_set = sum(int(q["metrics"].get("ageOfLastShippedOp_num_ops", 0)) for q in queues.values())
    assert ages_set >= len(shipped) + 1
    assert bean["Source.1.ageOfLastShippedOp_num_ops"] == ages_set == bean["Source.ageOfLastShippedOp_num_ops"]
    assert bean["Source.1.ageOfLastShippedOp_min"] == 0
    assert bean["Source.1.ageOfLastShippedOp_max"] == peer_age
    assert bean["source.1.shippedOps"] == sum(int(q["metrics"].get("shippedOps", 0)) for q in queues.values()) == 60
    assert bean["source.shippedOps"] == 60

    printed = subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", str(pair.source_key), "status", "replication"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[1].startswith("global: sizeOfLogQueue=") and "ageOfLastShippedOp=" in lines[1]
    assert int(lines[1].split()[1].removeprefix("sizeOfLogQueue=")) == peer["sizeOfLogQueue"]
    peer_line = next(line for line in lines if line.startswith("peer 1 ENABLED"))
    assert "ageOfLastShippedOp=" in peer_line and "ageOfLastShippedOp=-" not in peer_line
