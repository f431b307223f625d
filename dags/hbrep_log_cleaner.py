"""hbrep_log_cleaner: every ``hbase.master.cleaner.interval`` (10 minutes by default, as HMaster's LogCleaner
chore), delete old WALs no replication queue needs and past the TTL (``clean_once``).

Needs no data interval: a run judges every archived WAL against the queues and the TTL as they are when
it starts, not a time slice, so a delta trigger timetable (empty interval) is right and catchup is off.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import CleanLogsOperator

with DAG(
    dag_id="hbrep_log_cleaner",
    description="Delete archived WALs past the TTL that no replication queue holds",
    schedule=s.cleaner_interval(),
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["hbrep", "replication"],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30), "zookeeper_conn_id": s.ZK_CONN_ID},
) as dag:
    CleanLogsOperator(task_id="clean", pool=s.ZK_POOL)
