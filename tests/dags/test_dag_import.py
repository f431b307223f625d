"""Every DAG file imports without errors, without importing the library, and is wired as agreed (schedules,
pools, mapping). How long a DAG file takes to parse is measured in bench/dag_import.py."""

from __future__ import annotations

from datetime import timedelta

import pytest

DAG_IDS = {
    "hbrep_ship",
    "hbrep_failover",
    "hbrep_log_cleaner",
    "hbrep_verify",
    "hbrep_wait_for_peer",
    "hbrep_verify_replicated",
    "hbrep_repair",
    "hbrep_seed_peer",
}


@pytest.fixture(scope="module")
def dagbag():
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(airflow_env.DAGS), safe_mode=False)


def test_dags_import_without_errors(dagbag):
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) >= DAG_IDS


def test_dag_files_do_not_import_the_library_at_parse_time():
    """Only ``replication.defaults`` (which imports nothing) is loaded: the library's defaults, not its code."""
    import subprocess
    import sys

    import airflow_env

    code = (
        "import sys, runpy\n"
        f"sys.path.insert(0, {str(airflow_env.PLUGINS)!r})\n"
        f"for f in ['hbrep_ship', 'hbrep_failover', 'hbrep_log_cleaner', 'hbrep_verify', 'hbrep_wait_for_peer', "
        "'hbrep_verify_replicated', 'hbrep_repair', 'hbrep_seed_peer']:\n"
        f"    runpy.run_path({str(airflow_env.DAGS)!r} + '/' + f + '.py')\n"
        "heavy = ('replication.', 'kazoo', 'pyspark')\n"
        "print(sorted(m for m in sys.modules if m == 'replication' or m.startswith(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip().splitlines()[-1] == "['replication', 'replication.defaults']"


def test_ship_dag_wiring(dagbag):
    dag = dagbag.dags["hbrep_ship"]
    assert dag.max_active_runs == 1 and dag.catchup is False  # submit mode: one run at a time
    assert type(dag.timetable).__name__ == "AssetOrTimeSchedule"  # HBREP_SHIP_ON_EDITS is on by default
    assert dag.timetable.timetable.expression == "* * * * *"
    tasks = {t.task_id: t for t in dag.tasks}
    assert {"peers", "peer.snapshot", "peer.ship", "peer.commit", "peer.release", "lag_alert"} <= set(tasks)
    assert tasks["peer.ship"].task_type == "SparkSubmitOperator"
    assert tasks["peer.ship"].application.endswith("replication/jobs/ship.py")
    for task_id in ("peers", "peer.snapshot", "peer.commit", "peer.release", "lag_alert"):
        assert tasks[task_id].pool == "zookeeper", task_id
    assert tasks["peer.ship"].upstream_task_ids == {"peer.snapshot"}
    assert "peer.ship" in tasks["peer.commit"].upstream_task_ids
    assert tasks["lag_alert"].trigger_rule == "all_done"
    assert dag.deadline, "the ship DAG carries a deadline alert"


def test_chore_and_verify_dag_schedules(dagbag):
    failover = dagbag.dags["hbrep_failover"]
    cleaner = dagbag.dags["hbrep_log_cleaner"]
    verify = dagbag.dags["hbrep_verify"]
    # failover: on the region servers' asset (a ZooKeeper watch in the triggerer) or every minute
    assert type(failover.timetable).__name__ == "AssetOrTimeSchedule"
    assert failover.timetable.timetable.expression == "* * * * *"
    (asset,) = failover.timetable.asset_condition.objects
    (watcher,) = asset.watchers
    assert type(watcher.trigger).__name__ == "RegionServerRemovedTrigger"
    assert watcher.trigger.serialize()[1] == {"zookeeper_conn_id": "hbrep_source"}
    # an event's run is not queued behind the minute's, and its claim goes first for a free slot
    assert failover.max_active_runs == 2
    claim = failover.task_dict["claim"]
    assert claim.weight_rule == "absolute"
    # a task's downstream-summed weight is at most the sum of its DAG's weights
    others = [d for d in dagbag.dags.values() if d.dag_id != "hbrep_failover"]
    assert claim.priority_weight > max(sum(t.priority_weight for t in d.tasks) for d in others)
    # the cleaner runs every hbase.master.cleaner.interval (600000 ms by default), as HMaster's chore
    assert type(cleaner.timetable).__name__ == "DeltaTriggerTimetable"
    assert cleaner.timetable.delta == timedelta(minutes=10)
    # verify needs data intervals: a daily run covers [its logical date, + 1 day)
    assert type(verify.timetable).__name__ == "CronDataIntervalTimetable"
    assert verify.timetable.expression == "0 0 * * *"
    assert verify.catchup is True
    assert set(verify.params.keys()) == {"peer", "table", "start", "end", "families"}


def test_replicated_verify_dag_runs_on_the_peer_assets(dagbag):
    from airflow.sdk import AssetAlias

    dag = dagbag.dags["hbrep_verify_replicated"]
    assert dag.is_paused_upon_creation is True
    assert dag.timetable.asset_condition.objects == (AssetAlias("hbrep-peers"),)
    tasks = {t.task_id: t for t in dag.tasks}
    assert {"targets", "verify", "quality"} <= set(tasks)
    assert tasks["targets"].task_type == "ReplicatedIntervalTargetsOperator"


def test_repair_dag_is_triggered_with_params(dagbag):
    repair = dagbag.dags["hbrep_repair"]
    assert type(repair.timetable).__name__ == "NullTimetable"  # triggered by hand (or from a failed verify)
    assert set(repair.params.keys()) == {"peer", "table", "families", "start", "end", "dry_run", "deletes"}
    (task,) = repair.tasks
    assert task.task_type == "RepairOperator" and task.pool == "zookeeper"


def test_seed_dag_maps_one_copy_task_per_chunk(dagbag):
    seed = dagbag.dags["hbrep_seed_peer"]
    assert type(seed.timetable).__name__ == "NullTimetable"
    assert set(seed.params.keys()) == {"peer", "tables", "cluster_key", "chunks", "peer_rootdir"}
    tasks = {t.task_id: t for t in seed.tasks}
    assert set(tasks) == {"start", "copy", "catch_up", "verify"}
    assert tasks["copy"].upstream_task_ids == {"start"} and tasks["catch_up"].trigger_rule == "none_failed"


def test_ship_dag_on_queued_edits_unless_turned_off(monkeypatch):
    """By default the queued edits' asset (EditsQueuedTrigger in the triggerer) OR the cron;
    ``HBREP_SHIP_ON_EDITS=false``: the cron alone."""
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    monkeypatch.delenv("HBREP_SHIP_ON_EDITS", raising=False)
    dag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_ship.py"), safe_mode=False).dags["hbrep_ship"]
    assert type(dag.timetable).__name__ == "AssetOrTimeSchedule"
    assert dag.timetable.timetable.expression == "* * * * *"
    (asset,) = dag.timetable.asset_condition.objects
    (watcher,) = asset.watchers
    assert type(watcher.trigger).__name__ == "EditsQueuedTrigger"
    assert watcher.trigger.serialize()[1] == {"zookeeper_conn_id": "hbrep_source", "poll_interval_s": 1.0}
    monkeypatch.setenv("HBREP_SHIP_ON_EDITS", "false")
    dag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_ship.py"), safe_mode=False).dags["hbrep_ship"]
    assert dag.timetable.expression == "* * * * *"
