"""hbrep_seed_peer: bring a peer in with tables that already have history, while the source keeps writing.

Triggered by hand with params (peer, tables, and the peer's cluster key when it is to be added). ``start``
adds the seed's helper peer (its queues track the tables' edits from now on), pauses the peer's shipping
of those tables and cuts them into row-range chunks (between real HBase clusters: one chunk a table, copied
by HBase's snapshot and ExportSnapshot into ``peer_rootdir``); ``copy`` is mapped, one task per chunk (the run's
progress: a failed or killed chunk is retried, a run triggered again copies only the chunks left);
``catch_up`` ships what the peer skipped meanwhile and resumes its shipping; ``verify`` runs
VerifyReplication of each table. See replication/operations/seed.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from airflow.sdk import DAG, Param
from hbrep_airflow import dag_settings as s
from hbrep_airflow.operators.replication import (
    SeedCatchUpOperator,
    SeedCopyOperator,
    SeedStartOperator,
    SeedVerifyOperator,
)

with DAG(
    dag_id="hbrep_seed_peer",
    description="Seed a peer with tables that have history (copy in chunks, then resume shipping)",
    schedule=None,
    start_date=datetime(2024, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    render_template_as_native_obj=True,
    tags=["hbrep", "replication", "seed"],
    default_args={"zookeeper_conn_id": s.ZK_CONN_ID, "retries": 2, "retry_delay": timedelta(seconds=30)},
    params={
        "peer": Param(type="string", minLength=1, description="The peer id to seed"),
        "tables": Param(type=["string", "array"], description="The tables (t or ns:t; a list or a,b)"),
        "cluster_key": Param(None, type=["null", "string"], description="The peer's cluster key, to add it"),
        "chunks": Param(8, type="integer", minimum=1, description="Row-range chunks per table"),
        "peer_rootdir": Param(
            None,
            type=["null", "string"],
            description="Between real HBase clusters: the peer's hbase.rootdir, where ExportSnapshot copies",
        ),
    },
) as dag:
    start = SeedStartOperator(
        task_id="start",
        pool=s.ZK_POOL,
        peer_id="{{ params.peer }}",
        tables="{{ params.tables }}",
        cluster_key="{{ params.cluster_key }}",
        chunks="{{ params.chunks }}",
        peer_rootdir="{{ params.peer_rootdir }}",
    )
    copy = SeedCopyOperator.partial(task_id="copy", max_active_tis_per_dagrun=2).expand_kwargs(start.output)
    # none_failed: a resumed run whose chunks were all copied before maps no copy task at all
    catch_up = SeedCatchUpOperator(
        task_id="catch_up", peer_id="{{ params.peer }}", trigger_rule="none_failed",
        spark_connect_conn_id=s.SPARK_CONNECT_CONN_ID,
    )  # fmt: skip
    verify = SeedVerifyOperator(task_id="verify", peer_id="{{ params.peer }}", caught_up=catch_up.output)
    copy >> catch_up >> verify
