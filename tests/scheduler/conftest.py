"""The DAGs under Airflow's real scheduler: ``airflow standalone`` (scheduler, DAG processor, triggerer, API
server) as ``make up`` starts it, on a free port with its own AIRFLOW_HOME, its own ZooKeeper, its own
clusters and its own PostgreSQL server (Airflow's metadata database), driven only through the REST API
(``replication.devstack.airflow_api``) and, once, the browser.

One stack per test module (starting one costs about a minute); every wait is bounded.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from replication.devstack.airflow_api import AirflowApi
from replication.devstack.airflow_stack import (
    AirflowStandalone,
    airflow_environment,
    metadata_database,
    start_standalone,
)
from replication.devstack.zookeeper import ZooKeeperServer
from replication.monitoring.status_models import ReplicationStatus
from replication.net import free_port

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins"))  # cdp.py: Chromium over DevTools

DAG_IDS = ("hbrep_ship", "hbrep_failover", "hbrep_log_cleaner", "hbrep_verify")
DAY = timedelta(days=1)
CLUSTER_CONF = {
    "hbase.regionserver.optionalcacheflushinterval": 0,
    "zookeeper.session.timeout": 6000,
    "hbrep.regionserver.chore.interval.ms": 200,
}


def midnight(days_ago: int) -> datetime:
    """00:00 UTC ``days_ago`` days before today."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - days_ago * DAY


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@dataclass
class SchedulerStack:
    """ZooKeeper, source cluster ``a`` → peer cluster ``b``, Airflow standalone and a logged-in REST client."""

    zk: ZooKeeperServer
    source: Any  # EmbeddedCluster
    peer: Any  # EmbeddedCluster
    source_key: str
    peer_key: str
    airflow: AirflowStandalone
    api: AirflowApi
    env: dict[str, str]
    notes: dict[str, Any] = field(default_factory=dict)

    def flush(self, *tables: str) -> None:
        """Memstores to table files on both clusters (Spark reads table files)."""
        for cluster in (self.source, self.peer):
            with cluster.client() as client:
                for table in tables:
                    client.flush(table)

    def status(self) -> ReplicationStatus:
        """``replication.monitoring.status.replication_status`` of the source cluster."""
        from replication.monitoring.status import replication_status
        from replication.zk.client import connected
        from replication.zk.cluster_key import ClusterKey

        key = ClusterKey.parse(self.source_key)
        with connected(key) as zk:
            return replication_status(zk, key, self.source.conf)

    def wait_drained(self, timeout: float = 300.0) -> None:
        """Wait until every queue of the source has shipped everything (pendingBytes 0, lag 0)."""
        deadline = time.monotonic() + timeout
        while True:
            queues = self.status().queues
            if queues and all(q.pendingBytes == 0 and q.replicationLag == 0 for q in queues):
                return
            pending = {q.queue: q.pendingBytes for q in queues}
            assert time.monotonic() < deadline, f"queues not drained in {timeout:.0f}s: {pending}"
            time.sleep(3)


def _cluster_conf():
    from replication.config import Config

    return Config.load(env={}, overrides=CLUSTER_CONF)


@contextlib.contextmanager
def scheduler_stack(state: Path, tables: dict[str, dict[str, int]], peers: dict[str, dict[str, Any]],
                    env_extra: dict[str, str] | None = None,
                    spark_connect_port: int | None = None) -> Iterator[SchedulerStack]:  # fmt: skip
    """Start the whole stack in ``state``: ``tables`` (name → family → scope) on both clusters, ``peers``
    (id → ReplicationPeerConfig fields; ``table_cfs`` as a spec) on the source, all pointing at ``b``;
    the ship DAG on the Spark Connect server at ``spark_connect_port`` when given (else spark-submit);
    DAGs paused at creation
    (each test unpauses what it runs); the ``zookeeper`` pool created through the API. Stops everything."""
    from replication.cluster.embedded import start_cluster
    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage, parse_table_cfs

    with contextlib.ExitStack() as stack:
        zk = ZooKeeperServer(state / "zk", free_port())
        zk.start()
        stack.callback(zk.stop)
        source_key, peer_key = f"{zk.hosts}:/hbase-a", f"{zk.hosts}:/hbase-b"
        conf = _cluster_conf()
        peer = start_cluster(peer_key, str(state / "b"), 1, conf=conf, name="sched-b")
        stack.callback(peer.stop)
        source = start_cluster(source_key, str(state / "a"), 1, conf=conf, name="sched-a")
        stack.callback(source.stop)
        for cluster in (peer, source):
            registry = TableRegistry(None, cluster.root)
            for name, families in tables.items():
                registry.create(
                    TableDescriptor.of(name, *(ColumnFamilyDescriptor(f, scope=s) for f, s in families.items()))
                )
        storage = ReplicationPeerStorage(source.zk, source.paths)
        for peer_id, settings in peers.items():
            settings = dict(settings)
            if "table_cfs" in settings:  # a spec like "t" or "t:f": only those, as set_peer_tableCFs
                settings.update(replicate_all=False, table_cfs=parse_table_cfs(settings["table_cfs"]))
            storage.add_peer(peer_id, ReplicationPeerConfig(cluster_key=peer_key, **settings))
        extra = {
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
            "HBREP__hbase__master__cleaner__interval": "60000",  # the cleaner runs every minute, not every 10
            **(env_extra or {}),
        }
        database, postgres = metadata_database(state / "postgres", state / "airflow")
        if postgres is not None:
            stack.callback(postgres.stop)  # after Airflow's stop below (callbacks run last first)
        env = airflow_environment(state / "airflow", source_key, database=database, api_port=free_port(),
                                  spark_connect_port=spark_connect_port, extra=extra)  # fmt: skip
        airflow = start_standalone(env, state / "airflow.log", timeout=300)
        stack.callback(airflow.stop)
        api = AirflowApi(airflow.url, "admin", airflow.admin_password())
        stack.callback(api.close)
        api.call("POST", "/pools", json={"name": "zookeeper", "slots": 4, "include_deferred": False,
                                         "description": "protects the ZooKeeper ensemble"})  # fmt: skip
        for dag_id in DAG_IDS:
            api.wait_for_dag(dag_id, timeout=180)
        yield SchedulerStack(zk, source, peer, source_key, peer_key, airflow, api, env)


def task_instance(api: AirflowApi, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> dict[str, Any]:
    """One task instance of a run (AssertionError naming what exists when it is missing)."""
    instances = api.task_instances(dag_id, run_id)
    for ti in instances:
        if ti["task_id"] == task_id and ti["map_index"] == map_index:
            return ti
    raise AssertionError(
        f"{dag_id} {run_id}: no {task_id}[{map_index}] in {[(t['task_id'], t['map_index']) for t in instances]}"
    )


def verify_counters(api: AirflowApi, run_id: str) -> dict[tuple[str, str], dict[str, int]]:
    """Per (peer, table) the VerifyReplication counters of a verify run: the task's XCom when it succeeded,
    else the counters its log line ``VerifyReplication <table> on peer <peer>: {...}`` printed."""
    import ast
    import re

    targets = api.xcom("hbrep_verify", run_id, "targets")
    out: dict[tuple[str, str], dict[str, int]] = {}
    for index, target in enumerate(targets):
        ti = task_instance(api, "hbrep_verify", run_id, "verify", index)
        if ti["state"] == "success":
            counters = api.xcom("hbrep_verify", run_id, "verify", map_index=index)
        else:
            log = api.task_log("hbrep_verify", run_id, "verify", ti["try_number"], map_index=index)
            found = re.findall(r"VerifyReplication \S+ on peer \S+: (\{[^}]*\})", log)
            assert found, f"{run_id} verify[{index}] ({ti['state']}): no counters in its log:\n{log[-2000:]}"
            counters = ast.literal_eval(found[-1])
        out[(target["peer_id"], target["table"])] = counters
    return out
