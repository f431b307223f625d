"""hbrep_failover: claim the replication queues of dead region servers (``failover_once``) when ZooKeeper
says a region server died, and every minute as the fallback.

Scheduled on the ``hbrep-region-servers`` asset OR the minute (``AssetOrTimeSchedule``): the asset's watcher
is ``RegionServerRemovedTrigger``, which runs in the triggerer, watches ``<parent>/rs`` and fires when a
server's ephemeral znode goes (its session expired), so a run starts seconds after the death instead of at
the next minute. An asset-triggered run waits out ``replication.sleep.before.failover`` itself and claims.
The minute stays for whatever an event missed (a triggerer down); two runs for one death make one claim
(the claim lock in ZooKeeper).

Two runs may be active at once (``max_active_runs=2``): with one, a death seen while the minute's run was
active queued its asset-triggered run until that run ended, which on a busy machine under a ship load put
the claim 32-39 s after the SIGKILL (10 s sessions) instead of about 2 s after the session's expiry. The
claim task goes ahead of other hbrep tasks for executor and pool slots (``priority_weight``, absolute).

Needs no data interval: a run acts on the region servers dead when it starts, not on a time slice, so
the cron trigger timetable (empty interval) is right and catchup is off.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG, Asset, AssetOrTimeSchedule, AssetWatcher, CronTriggerTimetable
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import ClaimQueuesOperator
from hbrep_airflow.triggers.zookeeper_events import RegionServerRemovedTrigger

# above every other hbrep task's weight (1 each, summed downstream): a claim is picked first for a free slot
CLAIM_PRIORITY = 100

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
    max_active_runs=2,  # an event's run is not queued behind the minute's (see the module doc)
    tags=["hbrep", "replication"],
    default_args={"retries": 1, "retry_delay": timedelta(seconds=5), "zookeeper_conn_id": s.ZK_CONN_ID},
) as dag:
    ClaimQueuesOperator(task_id="claim", pool=s.ZK_POOL, priority_weight=CLAIM_PRIORITY, weight_rule="absolute")
