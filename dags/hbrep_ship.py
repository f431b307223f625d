"""hbrep_ship: per peer, ship the peer's queues, when new edits are queued while no run is active, and
every minute (``HBREP_SHIP_SCHEDULE``) as the fallback.

Scheduled on the ``hbrep-queued-edits`` asset OR the cron (``AssetOrTimeSchedule``): the asset's watcher is
``EditsQueuedTrigger``, which runs in the triggerer and fires when a peer has a new backlog (bytes past a
recorded position, a rolled WAL, a recovered queue) while its ship lease is free, so an idle cluster's
first write starts a run within seconds instead of at the next minute. A run already active holds the
lease and ships the edits itself; the cron covers whatever an event missed. The asset is used only with
``HBREP_SHIP_ON_EDITS`` is true (the default); ``false`` keeps the cron alone.

Wiring only. Each peer is one mapped branch (visible and retriable on its own); a branch with nothing
to ship is skipped before any Spark job starts; a lag check ends every run and a deadline alert fires
when a run is still going ``hbrep.lag.alert.ms`` after it was queued (recorded where ``hbrep status
replication`` and the Replication view list it). The branch depends on ``hbrep.spark.mode``:

- ``submit``: snapshot → ship (spark-submit replication/jobs/ship.py) → commit → release;
- ``connect``: ship (passes of snapshot → job on the Spark Connect server → commit, for up to
  ``hbrep.ship.window.ms``) → release. Two runs may be active: the newer one's ship task waits for the
  peer's lease, and the older one's window ends after its current pass once it sees that waiter.

Needs no data interval: a run ships whatever the queues hold when it starts (positions in ZooKeeper say
where it resumes), not the edits of a time slice, so the cron trigger timetable (empty interval) is
right and catchup is off (one run catches up with everything missed).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, Asset, AssetOrTimeSchedule, AssetWatcher, CronTriggerTimetable, task_group
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import (
    CommitOperator,
    LagCheckOperator,
    ListPeersOperator,
    ReleaseLeaseOperator,
    ShipWindowOperator,
    SnapshotOperator,
)
from hbrep_airflow.triggers.zookeeper_events import EditsQueuedTrigger

queued_edits = Asset(
    name="hbrep-queued-edits",
    uri=f"hbrep://{s.ZK_CONN_ID}/queued-edits",
    watchers=[AssetWatcher(name="hbrep-edits-queued", trigger=EditsQueuedTrigger(s.ZK_CONN_ID))],
)

cron = CronTriggerTimetable(s.ship_schedule(), timezone="UTC")

with DAG(
    dag_id="hbrep_ship",
    description="Ship WAL edits to every replication peer (snapshot → ship → commit per peer)",
    schedule=AssetOrTimeSchedule(timetable=cron, assets=[queued_edits]) if s.ship_on_edits() else cron,
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    # connect: the next run's ship task starts while this run's window is still open and waits for the
    # peer's lease; the window ends after its current pass when it sees the waiter (ship_window.py), so
    # consecutive windows hand over in one pass instead of a scheduling gap. submit: one run at a time.
    max_active_runs=2 if s.spark_mode() == "connect" else 1,
    tags=["hbrep", "replication"],
    default_args={"retries": 2, "retry_delay": timedelta(seconds=5), "zookeeper_conn_id": s.ZK_CONN_ID},
    deadline=s.ship_deadline(),
    user_defined_macros={"hbrep_pyfiles": s.pyfiles_here},
) as dag:
    peers = ListPeersOperator(task_id="peers", pool=s.ZK_POOL)

    @task_group(group_id="peer")
    def connect_branch(peer_id):
        # not in the ZooKeeper pool: a window holds its one session for up to hbrep.ship.window.ms
        ship = ShipWindowOperator(task_id="ship", peer_id=peer_id, spark_connect_conn_id=s.SPARK_CONNECT_CONN_ID)
        release = ReleaseLeaseOperator(task_id="release", peer_id=peer_id, pool=s.ZK_POOL, retries=0)
        ship >> release

    @task_group(group_id="peer")
    def submit_branch(peer_id):
        snapshot = SnapshotOperator(task_id="snapshot", peer_id=peer_id, pool=s.ZK_POOL)
        ship = SparkSubmitOperator(
            task_id="ship",
            conn_id=s.SPARK_CONN_ID,
            application=s.ship_script(),
            py_files=s.SHIP_PYFILES,  # zipped on the ship task's own worker when the snapshot's is elsewhere
            application_args=["--manifest", s.snapshot_xcom("manifest"), "--result", s.snapshot_xcom("result")],
            name="hbrep-ship",
            conf={
                "spark.ui.enabled": "false",
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
            },
        )
        commit = CommitOperator(task_id="commit", peer_id=peer_id, snapshot_task_id="peer.snapshot", pool=s.ZK_POOL)
        release = ReleaseLeaseOperator(task_id="release", peer_id=peer_id, pool=s.ZK_POOL, retries=0)
        snapshot >> ship >> commit >> release

    branch = connect_branch if s.spark_mode() == "connect" else submit_branch
    branches = branch.expand(peer_id=peers.output)
    branches >> LagCheckOperator(task_id="lag_alert", trigger_rule="all_done", pool=s.ZK_POOL, retries=0)
