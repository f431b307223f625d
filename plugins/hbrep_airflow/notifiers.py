"""Deadline-alert callbacks: what fires when a ship run misses its deadline (lag above the alert threshold)."""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

LOG = logging.getLogger("hbrep_airflow.lag_alert")
ALERT_FILE_ENV = "HBREP_LAG_ALERT_FILE"


async def lag_deadline_missed(context: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """Log one ERROR line naming the DAG run, and append a JSON line to ``$HBREP_LAG_ALERT_FILE`` if set.

    Runs in the triggerer (Airflow's AsyncCallback): a ship run still not finished ``hbrep.lag.alert.ms``
    after it was queued means no edit has been shipped for at least that long.
    """
    context = context or {}
    dag_run = context.get("dag_run") or {}
    run_id = dag_run.get("run_id") if isinstance(dag_run, dict) else getattr(dag_run, "run_id", None)
    dag_id = dag_run.get("dag_id") if isinstance(dag_run, dict) else getattr(dag_run, "dag_id", None)
    threshold = kwargs.get("threshold_ms")
    message = f"hbrep lag alert: {dag_id} run {run_id} missed its deadline (hbrep.lag.alert.ms={threshold})"
    LOG.error(message)
    path = os.environ.get(ALERT_FILE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"at_ms": int(time.time() * 1000), "message": message}) + "\n")
