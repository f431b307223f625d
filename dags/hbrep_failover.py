"""hbrep_failover: every minute, claim the replication queues of dead region servers (``failover_once``).

Needs no data interval: a run acts on the region servers dead when it starts, not on a time slice, so
the cron trigger timetable (empty interval) is right and catchup is off.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import ClaimQueuesOperator

with DAG(
    dag_id="hbrep_failover",
    description="Claim the replication queues of dead region servers",
    schedule="* * * * *",
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["hbrep", "replication"],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=5), "zookeeper_conn_id": s.ZK_CONN_ID},
) as dag:
    ClaimQueuesOperator(task_id="claim", pool=s.ZK_POOL)
