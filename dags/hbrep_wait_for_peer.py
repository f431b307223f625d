"""hbrep_wait_for_peer: triggered by hand (or by a cut-over DAG) with ``{"peer": "1"}``; succeeds once
everything written to the source before the run started is on that peer.

``take`` records a consistency token (``replication.operations.consistency``; ``tables``, comma-separated, limits it
to those tables), ``wait`` defers to the triggerer until every recorded position is shipped. No schedule: a run answers
"is the peer caught up with now?" for the moment it was triggered.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG, Param
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.consistency import ConsistencyTokenOperator
from hbrep_airflow.sensors.consistency import WaitForConsistency

with DAG(
    dag_id="hbrep_wait_for_peer",
    description="Wait until everything written before the run started is on a peer (consistency token)",
    schedule=None,
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    tags=["hbrep", "replication"],
    params={
        "peer": Param(type="string", minLength=1, description="The peer id"),
        "tables": Param("", type="string", description="Only these tables, comma-separated (all if empty)"),
    },
    default_args={"zookeeper_conn_id": s.ZK_CONN_ID},
) as dag:
    take = ConsistencyTokenOperator(
        task_id="take", peer_id="{{ params.peer }}", tables="{{ params.tables }}", pool=s.ZK_POOL
    )
    wait = WaitForConsistency(
        task_id="wait",
        token="{{ ti.xcom_pull(task_ids='take')['token'] }}",
        poke_interval=s.consistency_poll_s(),
        timeout=timedelta(hours=6).total_seconds(),
    )
    take >> wait
