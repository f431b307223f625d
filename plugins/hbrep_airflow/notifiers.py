"""Deadline-alert callbacks: what fires when a ship run misses its deadline (lag above the alert threshold)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from hbrep_airflow.hooks.replication import ReplicationHook
from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

LOG = logging.getLogger("hbrep_airflow.lag_alert")


async def lag_deadline_missed(
    context: dict[str, Any] | None = None,
    *,
    threshold_ms: int,
    zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
) -> str:
    """Log one ERROR line naming the DAG run and record the alert on the source cluster of
    ``zookeeper_conn_id``, where ``hbrep status replication`` and the Replication view list it.

    Runs in the triggerer (Airflow's AsyncCallback): a ship run still not finished ``hbrep.lag.alert.ms``
    after it was queued means no edit has been shipped for at least that long. Returns the alert's
    message: Airflow keeps a callback's result in a text column (``callback.output``), and a dict there
    made the triggerer fail on SQLite (seen under the scheduler: the triggerer exited).
    """
    # Imported here, not at the top: AsyncCallback imports this module when the DAG file is parsed, and
    # DAG parsing must not load the library (kazoo, Spark).
    from replication.monitoring.alerts import lag_alert

    # The scheduler hands the triggerer the run as the REST API shows it (DAGRunResponse: ``dag_run_id``).
    dag_run = (context or {}).get("dag_run") or {}
    run_id = dag_run.get("dag_run_id") or dag_run.get("run_id")
    alert = lag_alert(dag_run.get("dag_id"), run_id, int(threshold_ms))
    LOG.error("hbrep lag alert: %s", alert["message"])
    hook = ReplicationHook(zookeeper_conn_id)
    # The sync connection lookup would block the triggerer's event loop: fetch it async, then run the
    # ZooKeeper and filesystem work in a thread.
    hook.zk_hook.use_connection(await ZooKeeperHook.aget_connection(zookeeper_conn_id))
    await asyncio.to_thread(hook.record_lag_alert, alert)
    return str(alert["message"])
