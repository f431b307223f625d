"""hbrep_verify: which (peer, table) pairs a run verifies; the full dag.test() waits for replication.verify."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.slow


def test_params_name_exactly_what_is_verified(airflow_db, replication_pair):
    from hbrep_airflow.hooks.replication import ReplicationHook

    from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

    TableRegistry(None, replication_pair.source.root).create(
        TableDescriptor.of("u", ColumnFamilyDescriptor("a", scope=1), ColumnFamilyDescriptor("b", scope=1))
    )
    TableRegistry(None, replication_pair.source.root).create(TableDescriptor.of("local_only", "x"))
    hook = ReplicationHook("hbrep_source")
    everything = hook.verify_targets(peer=None, table=None, families=None, start_ms=10, end_ms=20)
    assert [(t["peer_id"], t["table"], t["families"]) for t in everything] == [
        ("1", "t", ["f"]),
        ("1", "u", ["a", "b"]),
    ]
    named = hook.verify_targets(peer="1", table="u", families=["b"], start_ms=5, end_ms=6)
    assert named == [{"peer_id": "1", "table": "u", "families": ["b"], "start_ms": 5, "end_ms": 6}]
    from replication.errors import HbrepError

    with pytest.raises(HbrepError, match="peer 9 does not exist"):
        hook.verify_targets(peer="9", table=None, families=None, start_ms=0, end_ms=1)


def _verify_wired() -> bool:
    if importlib.util.find_spec("replication.verify") is None:
        return False
    import replication.verify

    return hasattr(replication.verify, "verify_replication")


@pytest.mark.skipif(
    not _verify_wired(),
    reason="ReplicationHook.verify calls replication.verify.verify_replication; the landed module has "
    "VerifyOptions/VerifyResult instead: the hook is not wired to that API yet",
)
def test_verify_dag_run_with_params(airflow_db, replication_pair):
    import airflow_env
    from airflow.dag_processing.dagbag import DagBag

    dag = DagBag(dag_folder=str(airflow_env.DAGS / "hbrep_verify.py"), safe_mode=False).dags["hbrep_verify"]
    run = dag.test(run_conf={"peer": "1", "table": "t"})
    assert str(run.state) == "success"
    verify = [ti for ti in run.get_task_instances() if ti.task_id == "verify"]
    assert len(verify) == 1
