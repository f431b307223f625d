"""hbrep_repair: make a peer's copy of a table the source's (hbrep repair: HashTable/SyncTable in Spark).

Triggered by hand, with params; a failed hbrep_verify task names the conf that repairs what it found (its
peer, table and window) in its error and in its XCom ``repair_conf``. ``dry_run`` prints the plan (rows,
cells, bytes) and changes nothing. ``deletes`` left empty means on, except in a two-way topology, where
the peer's own writes are legitimate and are kept unless it is set true. The run fails when cells still
differ after the repair, and says why.
"""

from __future__ import annotations

from datetime import UTC, datetime

from airflow.sdk import DAG, Param
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import RepairOperator

with DAG(
    dag_id="hbrep_repair",
    description="Repair a peer's copy of a table (hash buckets, then the differing rows only)",
    schedule=None,
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    render_template_as_native_obj=True,
    tags=["hbrep", "replication", "repair"],
    default_args={"zookeeper_conn_id": s.ZK_CONN_ID},
    params={
        "peer": Param(type="string", minLength=1, description="The peer id whose copy is repaired"),
        "table": Param(type="string", minLength=1, description="The table (t or ns:t)"),
        "families": Param(None, type=["null", "string", "array"], description="Only these families (a,b)"),
        "start": Param(None, type=["null", "string", "integer"], description="Only cells from: epoch ms or ISO-8601"),
        "end": Param(None, type=["null", "string", "integer"], description="Only cells before: epoch ms or ISO-8601"),
        "dry_run": Param(False, type="boolean", description="Print the plan; change nothing"),
        "deletes": Param(None, type=["null", "boolean"], description="Delete cells only the peer holds"),
    },
) as dag:
    RepairOperator(
        task_id="repair",
        pool=s.ZK_POOL,
        peer_id="{{ params.peer }}",
        table="{{ params.table }}",
        families="{{ params.families }}",
        start_ms="{{ params.start }}",
        end_ms="{{ params.end }}",
        dry_run="{{ params.dry_run }}",
        deletes="{{ params.deletes }}",
    )
