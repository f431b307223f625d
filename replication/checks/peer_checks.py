"""VerifyReplication and the GX checks for a (peer, table), resolved from ZooKeeper and recorded.

The facade the Airflow operators, ``make demo`` and scripts call: the peer and both roots come from
ZooKeeper (``replication.checks.verify.resolve_target``), the comparison and the checkpoint run on the given
SparkSession, and each outcome is recorded in the source's metrics store, so ``hbrep status
replication``, the Replication view and the demo report show the latest verdicts.
"""

from __future__ import annotations

import os
from typing import Any

from kazoo.client import KazooClient

from replication.checks.quality import QualityReport, load_rules, run_quality
from replication.checks.verify import VerifyOptions, VerifyResult, flush_both_sides, resolve_target, verify_tables
from replication.cluster.info import local_state_dir
from replication.config import Config
from replication.fs import get_filesystem
from replication.monitoring.metrics import MetricsStore
from replication.tables.semantics import LATEST_TIMESTAMP
from replication.zk.cluster_key import ClusterKey


def verify_replication(
    spark,
    zk: KazooClient,
    source_key: ClusterKey,
    conf: Config,
    *,
    peer_id: str,
    table: str,
    start_ms: int = 0,
    end_ms: int = LATEST_TIMESTAMP,
    families: list[str] | None = None,
    options: VerifyOptions | None = None,
) -> VerifyResult:
    """VerifyReplication of ``table`` between the source and peer ``peer_id`` over [start_ms, end_ms), or as
    ``options`` say when given (they replace start_ms, end_ms and families, in the check and its record)."""
    target = resolve_target(zk, source_key, conf, peer_id)
    options = options or VerifyOptions(start_time=start_ms, end_time=end_ms, families=families)
    flush_both_sides(target, table, conf, options.peer_table)
    result = verify_tables(spark, target.source_root, target.peer_root, table, options)
    fs, root = get_filesystem(target.state_root)
    MetricsStore(fs, root).record_check(
        "verify", peer_id, table,
        {"counters": dict(result.counters), "start_ms": options.start_time, "end_ms": options.end_time},
    )  # fmt: skip
    return result


def quality_state_dir(source_root: str) -> str:
    """Where GX keeps its project and Data Docs for a cluster: ``<root>/.hbrep/quality`` for a local
    root, under the cluster's local state folder for a root on HDFS (Data Docs are local files)."""
    return os.path.join(local_state_dir(source_root), "quality")


def check_replicated_table(
    spark,
    zk: KazooClient,
    source_key: ClusterKey,
    conf: Config,
    *,
    peer_id: str,
    table: str,
    start_ms: int = 0,
    end_ms: int = LATEST_TIMESTAMP,
    rules_file: str | None = None,
) -> QualityReport:
    """The Great Expectations checkpoint of ``table`` on peer ``peer_id``; Data Docs under the source root."""
    target = resolve_target(zk, source_key, conf, peer_id)
    rules = load_rules(rules_file or conf.get_str("hbrep.quality.rules", "") or None)
    report = run_quality(
        spark, target.source_root, target.peer_root, table, state_dir=quality_state_dir(target.state_root),
        peer_name=f"peer-{peer_id}", rules=rules, start_ts=start_ms, end_ts=end_ms,
    )  # fmt: skip
    fs, root = get_filesystem(target.state_root)
    summary: dict[str, Any] = {
        "success": report.success, "source_rows": report.source_rows, "peer_rows": report.peer_rows,
        "failed": [o.expectation for o in report.failed] if report.failed else [],
        "data_docs": report.data_docs_index, "start_ms": start_ms, "end_ms": end_ms,
    }  # fmt: skip
    MetricsStore(fs, root).record_check("quality", peer_id, table, summary)
    return report
