"""hbrep_verify_replicated: VerifyReplication and GX checks of exactly what became replicated.

Scheduled on the peers' assets (``hbrep://<cluster>/peer/<id>``, through the ``hbrep-peers`` alias the
ship DAG's commit and window tasks emit to) instead of a clock: each asset event says, per table, the
interval that the commit made replicated (``tables_before`` → ``tables``, from
``replication/monitoring/replicated_through.py``), and this run checks those intervals, no more. Paused at creation:
turn it on where verifying after every ship run is wanted (``hbrep_verify`` stays the daily check).
"""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, AssetAlias
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import (
    PEER_ASSET_ALIAS,
    QualityCheckOperator,
    ReplicatedIntervalTargetsOperator,
    VerifyReplicationOperator,
)

with DAG(
    dag_id="hbrep_verify_replicated",
    description="VerifyReplication and data-quality checks of each interval that became replicated",
    schedule=[AssetAlias(PEER_ASSET_ALIAS)],
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=True,
    tags=["hbrep", "replication", "verify"],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30), "zookeeper_conn_id": s.ZK_CONN_ID},
) as dag:
    targets = ReplicatedIntervalTargetsOperator(task_id="targets", pool=s.ZK_POOL)
    checks = {"spark_connect_conn_id": s.SPARK_CONNECT_CONN_ID}  # in connect mode: the warm Spark Connect server
    verify = VerifyReplicationOperator.partial(task_id="verify", **checks).expand_kwargs(targets.output)
    quality = QualityCheckOperator.partial(task_id="quality", **checks).expand_kwargs(targets.output)
    verify >> quality
