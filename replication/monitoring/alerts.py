"""Lag alerts: a ship run that missed its deadline (``hbrep.lag.alert.ms``), kept with the cluster's metrics.

Airflow's deadline callback calls :func:`record_lag_alert`; ``hbrep status replication`` and the
Replication view list the recent alerts (``recent_alerts`` of ``replication.monitoring.status``).
"""

from __future__ import annotations

from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import open_source
from replication.config import Config
from replication.monitoring.metrics import MetricsStore
from replication.zk.cluster_key import ClusterKey


def lag_alert(dag_id: str | None, run_id: str | None, threshold_ms: int) -> dict[str, Any]:
    """The alert of one ship run still going ``threshold_ms`` after it was queued (JSON-able)."""
    return {
        "kind": "lag",
        "source": f"{dag_id}/{run_id}",
        "dag_id": dag_id,
        "run_id": run_id,
        "threshold_ms": threshold_ms,
        "message": f"{dag_id} run {run_id} missed its deadline: still running {threshold_ms} ms after it "
        f"was queued (hbrep.lag.alert.ms)",
    }


def record_lag_alert(zk: KazooClient, key: ClusterKey, conf: Config, alert: dict[str, Any]) -> None:
    """Store ``alert`` under the source cluster's metrics, where status and the Replication view read it."""
    source = open_source(zk, key, conf)
    MetricsStore(source.fs, source.root).record_alert(alert)
