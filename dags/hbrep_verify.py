"""hbrep_verify: daily VerifyReplication, then GX checks, per (peer, table) over the run's data interval.

Needs data intervals: a run stands for one day of writes, so its timetable is CronDataIntervalTimetable
(the run of logical date D covers [D, D+1 day) and starts once that day is over). A plain
``schedule="@daily"`` would give Airflow 3's CronTriggerTimetable (``[scheduler]
create_cron_data_intervals`` is False by default), whose data interval is empty (start = end = the
run's time), and every scheduled or backfilled run would verify nothing and fail. Catchup is on, so
days missed while the scheduler was down are verified when it comes back; a backfill
(``POST /api/v2/backfills``) verifies chosen past days. A manual trigger may name the peer, table,
time range and families to verify only those.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG, CronDataIntervalTimetable, Param
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import (
    QualityCheckOperator,
    VerifyReplicationOperator,
    VerifyTargetsOperator,
)

with DAG(
    dag_id="hbrep_verify",
    description="VerifyReplication and data-quality checks of replicated tables, per day",
    schedule=CronDataIntervalTimetable("@daily", timezone="UTC"),
    start_date=datetime.fromisoformat(s.VERIFY_START).replace(tzinfo=UTC),
    catchup=True,
    max_active_runs=1,
    tags=["hbrep", "replication", "verify"],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=30), "zookeeper_conn_id": s.ZK_CONN_ID},
    params={
        "peer": Param(None, type=["null", "string"], description="Only this peer id (default: every peer)"),
        "table": Param(None, type=["null", "string"], description="Only this table (default: every replicated one)"),
        "start": Param(None, type=["null", "string", "integer"], description="Start: epoch ms or ISO-8601"),
        "end": Param(None, type=["null", "string", "integer"], description="End (exclusive): epoch ms or ISO-8601"),
        "families": Param(None, type=["null", "string", "array"], description="Only these families (a,b)"),
    },
) as dag:
    targets = VerifyTargetsOperator(task_id="targets", pool=s.ZK_POOL)
    # in connect mode both run on the Spark Connect server the ship DAG keeps warm
    checks = {"spark_connect_conn_id": s.SPARK_CONNECT_CONN_ID}
    verify = VerifyReplicationOperator.partial(task_id="verify", **checks).expand_kwargs(targets.output)
    quality = QualityCheckOperator.partial(task_id="quality", **checks).expand_kwargs(targets.output)
    verify >> quality
