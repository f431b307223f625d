"""The Replication view inside a real ``airflow api-server``: behind Airflow's login (curl and headless
Chromium through the real login page), no console errors, a known queue shown."""

from __future__ import annotations

import time
import uuid

import pytest
from airflow_api import PASSWORDS, api_server, get, login_token
from cdp import chromium_binary, load_page

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def source_cluster(zk_server, tmp_path_factory):
    """One embedded region server with table t (f scope 1) and peer 1, after one write: one known queue."""
    from replication.cluster.embedded import start_cluster
    from replication.config import Config
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

    conf = Config.load(env={}, overrides={"zookeeper.session.timeout": 4000})
    tmp_path = tmp_path_factory.mktemp("view")
    key = f"127.0.0.1:{zk_server.port}:/ui-{uuid.uuid4().hex[:8]}"
    cluster = start_cluster(key, str(tmp_path / "src"), 1, conf=conf, name="ui-src")
    try:
        TableRegistry(None, cluster.root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
        ReplicationPeerStorage(cluster.zk, cluster.paths).add_peer(
            "1", ReplicationPeerConfig(cluster_key="127.0.0.1:2181:/nowhere")
        )
        with cluster.client() as client:
            client.put("t", b"r1", b"f", b"q", b"v")
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def airflow_server(source_cluster, tmp_path_factory):
    """A real ``airflow api-server`` with the plugin, reporting on the source cluster (``HBREP_CLUSTER``)."""
    with api_server(tmp_path_factory.mktemp("airflow"), source_cluster.cluster_key) as server:
        yield server


@pytest.fixture
def served_view(airflow_server):
    """The Replication view's address inside the real Airflow API server."""
    return airflow_server.url + "/hbrep/"


def _known_queue(cluster) -> tuple[str, str]:
    from replication.zk.queue_storage import ReplicationQueueStorage

    (server,) = cluster.servers
    storage = ReplicationQueueStorage(cluster.zk, cluster.paths)
    deadline = time.monotonic() + 20
    while not storage.get_wals_in_queue(server, "1"):
        assert time.monotonic() < deadline, "no queue for peer 1"
        time.sleep(0.1)
    return server, storage.get_wals_in_queue(server, "1")[0]


@pytest.mark.skipif(chromium_binary() is None, reason="chromium not installed (make chromium)")
def test_page_loads_without_console_errors_and_shows_a_known_queue(source_cluster, served_view):
    server, wal = _known_queue(source_cluster)
    result = load_page(served_view, "document.body.dataset.loaded === '1'", login=("viewer", PASSWORDS["viewer"]))
    assert result.errors == []
    assert "Replication" in result.text
    assert server in result.text  # the replicator of the queue tree
    assert wal in result.text  # the queue's WAL with its position
    assert "1 (peer 1)" in result.text  # queue id 1 of peer 1
    assert "ENABLED" in result.text  # the peers table
    assert "cannot load" not in result.text


@pytest.mark.skipif(chromium_binary() is None, reason="chromium not installed (make chromium)")
def test_the_view_shows_per_table_lag_with_targets_history_and_the_latest_verdicts(source_cluster, served_view):
    """Per table: replicated through, lag, a missed target; the chart's history reaches back hours (stored
    samples, not the page's own) with the target as a dashed line; the latest VerifyReplication verdict."""
    from replication.fs import LocalFileSystem
    from replication.monitoring.lag_targets import set_lag_target
    from replication.monitoring.metrics import MetricsStore

    _known_queue(source_cluster)  # r1 waits for a peer that is never reachable: table t lags
    now = int(time.time() * 1000)
    store = MetricsStore(LocalFileSystem(), source_cluster.root)
    two_hours_ago = now - 2 * 3600 * 1000
    store.record_lag_sample("1", two_hours_ago, two_hours_ago - 4000, {"t": two_hours_ago - 4000})
    store.record_check("verify", "1", "t", {"counters": {"GOODROWS": 5, "BADROWS": 0}, "start_ms": now - 60_000,
                                           "end_ms": now})  # fmt: skip
    set_lag_target(source_cluster.zk, source_cluster.paths, "1", "t", 1000)
    try:
        ready = ("document.body.dataset.loaded === '1' && document.querySelector('[data-target=\"1/t\"]') !== null"
                 " && document.querySelector('polyline[data-series=\"1/t\"]') !== null")  # fmt: skip
        result = load_page(served_view, ready, login=("viewer", PASSWORDS["viewer"]))
        assert result.errors == []
        assert "MISSED" in result.text  # table t of peer 1 is over its 1 s target
        assert "table 1/t (target 1000 ms)" in result.text  # the chart's legend
        assert "GOODROWS=5 BADROWS=0" in result.text and "VerifyReplication" in result.text
    finally:
        set_lag_target(source_cluster.zk, source_cluster.paths, "1", "t", 0)


def test_status_api_adds_lag_history(source_cluster, airflow_server, served_view):
    import json

    _known_queue(source_cluster)
    code, body, _ = get(served_view + "api/status", token=login_token(airflow_server, "admin"))
    assert code == 200, body
    data = json.loads(body)
    assert list(data["peers"]) == ["1"]
    assert data["queues"][0]["queue_id"] == "1"
    assert data["lag_history"]["1"][-1] == [data["now_ms"], data["peers"]["1"]["replicationLag"]]
    assert data["lag_history"]["1/t"][-1] == [data["now_ms"], data["peers"]["1"]["tables"]["t"]["lag_ms"]]


def test_metrics_route_serves_the_status_to_a_scraper_with_a_token(source_cluster, airflow_server, served_view):
    from prometheus_client.parser import text_string_to_metric_families

    server, _ = _known_queue(source_cluster)
    code, body, headers = get(served_view + "metrics", token=login_token(airflow_server, "viewer"))
    assert code == 200, body
    assert {k.lower(): v for k, v in headers.items()}["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(body)}
    assert [s.value for s in families["hbrep_status_up"].samples] == [1.0]
    (queue,) = [s for s in families["hbrep_source_sizeOfLogQueue"].samples if s.labels["peer_id"] == "1"]
    assert queue.labels == {"queue_id": "1", "replicator": server, "peer_id": "1"}
    assert queue.value == 1.0  # one WAL in the queue, the one being read (HBase 2.x ReplicationSourceLogQueue)
    (peer,) = families["hbrep_peer_replicationLag"].samples
    assert peer.labels == {"peer_id": "1", "state": "ENABLED"}


def test_every_route_needs_a_logged_in_user_allowed_to_read_the_dags(airflow_server, served_view):
    routes = [served_view, served_view + "replication", served_view + "api/status", served_view + "metrics"]
    for url in routes:
        code, body, _ = get(url)
        assert code == 401, (url, code, body)  # no token
        code, body, _ = get(url, token="not-a-jwt")
        assert code == 403, (url, code, body)  # a token Airflow did not sign
        code, body, _ = get(url, token=login_token(airflow_server, "nobody"))
        assert code == 403, (url, code, body)  # logged in, but no access to the DAGs
        assert "Forbidden" in body and "peers" not in body
    for user in ("viewer", "admin"):
        code, body, _ = get(served_view + "api/status", token=login_token(airflow_server, user))
        assert code == 200 and '"peers"' in body, (user, code, body)
    code, body, _ = get(served_view, token=login_token(airflow_server, "viewer"), accept="text/html")
    assert code == 200 and "<html" in body.lower()


def test_a_browser_without_a_login_is_sent_to_airflows_login_page(airflow_server, served_view):
    code, body, headers = get(served_view, accept="text/html,application/xhtml+xml")
    assert code == 303, (code, body)
    location = {k.lower(): v for k, v in headers.items()}["location"]
    assert location.startswith("/auth/login?next="), headers
    assert "hbrep" in location


@pytest.mark.skipif(chromium_binary() is None, reason="chromium not installed (make chromium)")
def test_a_wrong_password_on_the_login_page_shows_no_replication_data(source_cluster, served_view):
    result = load_page(served_view, "document.body.innerText.toLowerCase().includes('invalid')",
                       login=("viewer", "wrong-password"))  # fmt: skip
    assert source_cluster.cluster_key.rsplit(":", 1)[1] not in result.text
    assert "ENABLED" not in result.text


def test_status_errors_are_one_line_503():
    import airflow_env
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi.testclient import TestClient
    from hbrep_airflow.ui.app import create_app

    def broken():
        raise RuntimeError("ZooKeeper at 127.0.0.1:1 did not answer")

    airflow_env.init_db()  # Airflow's DAG access check looks up the DAGs' teams
    token = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username="admin", role="ADMIN"))
    response = TestClient(create_app(broken)).get("/api/status", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 503
    assert response.json() == {"error": "RuntimeError: ZooKeeper at 127.0.0.1:1 did not answer"}


@pytest.mark.skipif(chromium_binary() is None, reason="chromium not installed (make chromium)")
def test_dead_servers_show_when_they_died_and_when_and_by_whom_their_queues_were_claimed(source_cluster, served_view):
    """Two region servers SIGKILLed; one failover pass marks both, a second claims one (one worker): the view
    and ``hbrep status replication`` (human and --json) show the claimed one with its claimer and the other
    awaiting failover, each with the time it died."""
    import json
    import subprocess
    import sys

    from replication.failover import failover_once
    from replication.zk.cluster_key import ClusterKey

    (live,) = source_cluster.servers
    dying = sorted(source_cluster.start_region_server() for _ in range(2))
    for server in dying:
        source_cluster.kill(server)
        source_cluster.wait_until_dead(server, timeout=30)
    key = ClusterKey.parse(source_cluster.cluster_key)
    conf = source_cluster.conf.with_overrides({"replication.sleep.before.failover": 600_000})
    marked = failover_once(source_cluster.zk, key, conf)
    assert {s.server: s.action for s in marked.servers} == dict.fromkeys(dying, "waiting")
    conf = conf.with_overrides({"replication.sleep.before.failover": 0, "replication.executor.workers": 1})
    report = failover_once(source_cluster.zk, key, conf)
    claimed, waiting = dying  # sorted: the first dead server is handled first
    assert {s.server: s.action for s in report.servers} == {claimed: "claimed", waiting: "waiting"}

    cli = [sys.executable, "-m", "replication.cli", "--cluster", source_cluster.cluster_key, "status", "replication"]
    out = subprocess.run([*cli, "--json"], capture_output=True, text=True, check=True).stdout
    dead = {d["server"]: d for d in json.loads(out)["dead_servers"]}
    died = {s.server: s.first_seen_dead_ms for s in marked.servers}
    assert dead[claimed]["claimed_by"] == live and dead[claimed]["died_ms"] == died[claimed]
    assert dead[claimed]["claimed_ms"] >= dead[claimed]["died_ms"]
    assert dead[waiting] == {"server": waiting, "died_ms": died[waiting], "claimed_ms": None, "claimed_by": None}
    human = subprocess.run(cli, capture_output=True, text=True, check=True).stdout
    assert f"dead {waiting}: died=" in human and "awaiting failover" in human
    assert f"dead {claimed}: died=" in human and f"by={live}" in human

    ready = f"document.querySelector('#dead tr[data-server=\"{claimed}\"]') !== null"
    result = load_page(served_view, ready, login=("viewer", PASSWORDS["viewer"]))
    assert result.errors == []
    section = result.text.split("Dead servers", 1)[1].split("Recent failovers", 1)[0]
    assert claimed in section and waiting in section and live in section, section
    assert "awaiting failover" in section
