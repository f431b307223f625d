"""Values the DAG files share, read from the environment only (no I/O at DAG parse time).

- ``HBREP_ZK_CONN_ID`` (default ``hbrep_source``): the ZooKeeper connection of the source cluster;
- ``HBREP_SPARK_CONN_ID`` (default ``spark_default``): the Spark connection of the ship job (submit mode);
- ``HBREP__hbrep__spark__mode`` (default ``submit``): ``connect`` ships on a Spark Connect server;
- ``HBREP_SPARK_CONNECT_CONN_ID`` (default ``hbrep_spark_connect``): that server's ``spark_connect`` connection;
- ``HBREP_SHIP_SCHEDULE`` (default ``* * * * *``): the ship DAG's schedule;
- ``HBREP_ZK_POOL`` (default ``zookeeper``): the pool every ZooKeeper-touching task runs in;
- ``HBREP__hbrep__lag__alert__ms``: the lag alert threshold (as in ``replication.config``);
- ``HBREP__hbase__master__cleaner__interval``: how often the log cleaner runs (as in ``replication.config``);
- ``HBREP_VERIFY_START`` (default ``2026-11-15``): first day the daily verify DAG covers;
- ``HBREP_CONSISTENCY_POLL_S`` (default ``5``): how often ``hbrep_wait_for_peer`` checks its token.
"""

from __future__ import annotations

import importlib.util
import os
from datetime import timedelta
from pathlib import Path

from airflow.sdk import AsyncCallback, DeadlineAlert, DeadlineReference

# the library's own defaults: replication.defaults imports nothing, so DAG parsing still loads no library code
from replication.defaults import CLEANER_INTERVAL_MS as DEFAULT_CLEANER_INTERVAL_MS
from replication.defaults import LAG_ALERT_MS as DEFAULT_LAG_ALERT_MS

ZK_CONN_ID = os.environ.get("HBREP_ZK_CONN_ID", "hbrep_source")
SPARK_CONN_ID = os.environ.get("HBREP_SPARK_CONN_ID", "spark_default")
ZK_POOL = os.environ.get("HBREP_ZK_POOL", "zookeeper")
SPARK_CONNECT_CONN_ID = os.environ.get("HBREP_SPARK_CONNECT_CONN_ID", "hbrep_spark_connect")
VERIFY_START = os.environ.get("HBREP_VERIFY_START", "2026-11-15")


def spark_mode() -> str:
    """``hbrep.spark.mode`` from its environment override (read when the DAG file is parsed), else ``submit``."""
    return os.environ.get("HBREP__hbrep__spark__mode", "submit").strip()  # noqa: SIM112 (config key case)


def consistency_poll_s() -> float:
    """Seconds between two checks of a consistency token: ``HBREP_CONSISTENCY_POLL_S``, else 5."""
    return float(os.environ.get("HBREP_CONSISTENCY_POLL_S", "5"))


def ship_schedule() -> str:
    """The ship DAG's schedule: ``HBREP_SHIP_SCHEDULE``, else every minute."""
    return os.environ.get("HBREP_SHIP_SCHEDULE", "* * * * *")


def lag_alert_ms() -> int:
    """``hbrep.lag.alert.ms`` from its environment override, else the library default."""
    return int(os.environ.get("HBREP__hbrep__lag__alert__ms", DEFAULT_LAG_ALERT_MS))  # noqa: SIM112 (config key case)


def lag_deadline() -> timedelta:
    """How long a ship run may take from being queued before the lag deadline alert fires."""
    return timedelta(milliseconds=lag_alert_ms())


def cleaner_interval() -> timedelta:
    """``hbase.master.cleaner.interval`` (HMaster's LogCleaner chore period) as the log cleaner DAG's schedule."""
    ms = int(os.environ.get("HBREP__hbase__master__cleaner__interval", DEFAULT_CLEANER_INTERVAL_MS))  # noqa: SIM112
    return timedelta(milliseconds=ms)


def ship_deadline() -> DeadlineAlert:
    """The ship DAG's DeadlineAlert: when a run is still going ``hbrep.lag.alert.ms`` after it was queued,
    the triggerer runs ``notifiers.lag_deadline_missed``, which records the alert on the source cluster."""
    return DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT,
        interval=lag_deadline(),
        callback=AsyncCallback(
            "hbrep_airflow.notifiers.lag_deadline_missed",
            kwargs={"threshold_ms": lag_alert_ms(), "zookeeper_conn_id": ZK_CONN_ID},
        ),
    )


def ship_script() -> str:
    """Path of ``replication/jobs/ship.py`` (``replication.jobs.launch.SHIP_SCRIPT``), found without
    importing the library: DAG files are parsed without it (tests/dags/test_dag_import.py)."""
    spec = importlib.util.find_spec("replication")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the replication package is not importable")
    return str(Path(next(iter(spec.submodule_search_locations))) / "jobs" / "ship.py")


def snapshot_xcom(key: str, snapshot_task_id: str = "peer.snapshot") -> str:
    """Jinja pulling ``key`` of the same map index's snapshot XCom (for the ship task's templated args)."""
    return f"{{{{ ti.xcom_pull(task_ids='{snapshot_task_id}', map_indexes=ti.map_index)['{key}'] }}}}"
