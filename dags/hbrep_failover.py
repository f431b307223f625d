"""hbrep_failover: claim the replication queues of dead region servers (``failover_once``) when ZooKeeper
says a region server died, and every minute as the fallback.

Scheduled on the ``hbrep-region-servers`` asset OR the minute (``AssetOrTimeSchedule``): the asset's watcher
is ``RegionServerRemovedTrigger``, which runs in the triggerer, watches ``<parent>/rs`` and fires when a
server's ephemeral znode goes (its session expired), so a run starts seconds after the death instead of at
the next minute. An asset-triggered run waits out ``replication.sleep.before.failover`` itself and claims.
The minute stays for whatever an event missed (a triggerer down); two runs for one death make one claim
(the claim lock in ZooKeeper).

Needs no data interval: a run acts on the region servers dead when it starts, not on a time slice, so
the cron trigger timetable (empty interval) is right and catchup is off.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG, Asset, AssetOrTimeSchedule, AssetWatcher, CronTriggerTimetable
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import ClaimQueuesOperator
from hbrep_airflow.triggers.zookeeper_events import RegionServerRemovedTrigger

region_servers = Asset(
    name="hbrep-region-servers",
    uri=f"hbrep://{s.ZK_CONN_ID}/rs",
    watchers=[AssetWatcher(name="hbrep-rs-removed", trigger=RegionServerRemovedTrigger(s.ZK_CONN_ID))],
)

with DAG(
    dag_id="hbrep_failover",
    description="Claim the replication queues of dead region servers",
    schedule=AssetOrTimeSchedule(timetable=CronTriggerTimetable("* * * * *", timezone="UTC"), assets=[region_servers]),
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["hbrep", "replication"],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=5), "zookeeper_conn_id": s.ZK_CONN_ID},
) as dag:
    ClaimQueuesOperator(task_id="claim", pool=s.ZK_POOL)
