"""ReplicationHook: the ``replication`` library's steps for one source cluster named by a ZooKeeper connection.

Every method opens its own ZooKeeper session (tasks run in separate processes), calls exactly one
library function and returns plain JSON-able data for XCom.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

if TYPE_CHECKING:
    from replication.config import Config

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """``text`` with every run of characters unsafe in a file name replaced by ``_``."""
    return _UNSAFE.sub("_", text).strip("_") or "x"


class ReplicationHook(BaseHook):
    """Snapshot, commit, release, failover, clean, status and lag of the source cluster of a connection."""

    def __init__(
        self,
        zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
        conf_overrides: Mapping[str, object] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.zookeeper_conn_id = zookeeper_conn_id
        self.conf_overrides = dict(conf_overrides or {})
        self.zk_hook = ZooKeeperHook(zookeeper_conn_id)

    def get_conn(self) -> Any:
        """A started kazoo client (see ZooKeeperHook.get_conn)."""
        return self.zk_hook.get_conn()

    @property
    def conf(self) -> Config:
        """hbase-site.xml (``HBREP_CONF``) ← ``HBREP__`` env ← the hook's overrides (+ the connection's auth)."""
        from replication.config import Config

        overrides = dict(self.conf_overrides)
        if self.zk_hook.auth:
            overrides.setdefault("hbrep.zk.auth", self.zk_hook.auth)
        return Config.load(overrides=overrides)

    @property
    def cluster_key(self) -> Any:
        return self.zk_hook.cluster_key

    # -- reading ----------------------------------------------------------------------------------
    def list_peer_ids(self) -> list[str]:
        """Every peer id of the source cluster (enabled and disabled), sorted."""
        from replication.zk.layout import ZNodePaths
        from replication.zk.peer_storage import ReplicationPeerStorage

        with self.zk_hook.connected() as zk:
            paths = ZNodePaths(self.conf, parent=self.cluster_key.znode_parent)
            return sorted(ReplicationPeerStorage(zk, paths).list_peer_ids())

    def cluster_name(self) -> str:
        """The cluster's recorded name (``<parent>/hbrep-cluster``), used in asset URIs."""
        from replication.cluster.info import read_cluster_info
        from replication.zk.layout import ZNodePaths

        with self.zk_hook.connected() as zk:
            return read_cluster_info(zk, ZNodePaths(self.conf, parent=self.cluster_key.znode_parent)).name

    def status(self) -> dict[str, Any]:
        """``replication.status.replication_status``: peers, queues (lag, stuck), failovers, cycles."""
        from replication.status import replication_status

        with self.zk_hook.connected() as zk:
            return replication_status(zk, self.cluster_key, self.conf)

    def work_dir(self, root: str) -> Path:
        """Where this cluster's cycle manifests go: ``hbrep.work.dir``, else ``<root>/.hbrep/airflow-cycles``."""
        conf = self.conf
        if "hbrep.work.dir" in conf:
            return Path(conf.get_str("hbrep.work.dir"))
        return Path(root) / ".hbrep" / "airflow-cycles"

    # -- the ship cycle ---------------------------------------------------------------------------
    def snapshot(self, peer_id: str, *, owner: str, cycle_id: str) -> dict[str, Any]:
        """Lease ``peer_id`` and write its manifest (``snapshot_step``); returns the outcome + py-files zip.

        ``busy`` is set (and no manifest queues are taken) when another cycle holds the peer's lease.
        """
        from replication.jobs.submit import build_pyfiles
        from replication.source.cycle import snapshot_step
        from replication.source.snapshot import open_source

        conf = self.conf
        with self.zk_hook.connected() as zk:
            root = open_source(zk, self.cluster_key, conf).root
            work = self.work_dir(root)
            outcome = snapshot_step(
                zk, self.cluster_key, conf, owner=owner, peer_ids=[peer_id], work_dir=work, cycle_id=cycle_id
            )
        pyfiles = build_pyfiles(Path(outcome.manifest_path).parent) if outcome.queues else None
        return {
            "peer_id": peer_id,
            "owner": owner,
            "cycle_id": outcome.cycle_id,
            "manifest": outcome.manifest_path,
            "result": str(Path(outcome.manifest_path).with_name("result.json")),
            "queues": outcome.queues,
            "leased": peer_id in outcome.peers,
            "busy": outcome.busy_peers.get(peer_id),
            "pyfiles": str(pyfiles) if pyfiles else None,
            "spark_master": conf.get_str("hbrep.spark.master"),
        }

    def ship_window(self, peer_id: str, *, owner: str, cycle_prefix: str, connect_url: str) -> dict[str, Any]:
        """Passes of snapshot → ship on the Spark Connect server at ``connect_url`` → commit, for up to
        ``hbrep.ship.window.ms`` (``replication.ship_window.run_window``); returns the window's report."""
        from replication.jobs.connect import ConnectShipRunner
        from replication.ship_window import run_window
        from replication.source.snapshot import open_source

        conf = self.conf
        with self.zk_hook.connected() as zk:
            work = self.work_dir(open_source(zk, self.cluster_key, conf).root)
            with ConnectShipRunner(conf, work, url=connect_url, owner=owner) as runner:
                report = run_window(
                    zk, self.cluster_key, conf, runner, owner=owner, peer_ids=[peer_id], work_dir=work,
                    cycle_prefix=cycle_prefix,
                )  # fmt: skip
        return report.as_dict()

    def commit(self, manifest_path: str, *, owner: str) -> dict[str, Any]:
        """``commit_step``: positions, finished WALs, metrics, lease release. Idempotent."""
        from replication.source.cycle import commit_step

        with self.zk_hook.connected() as zk:
            return commit_step(zk, self.cluster_key, self.conf, manifest_path, owner=owner).as_dict()

    def release(self, peer_id: str, *, owner: str) -> bool:
        """Drop ``owner``'s lease on ``peer_id`` (True if it held it); a no-op otherwise."""
        from replication.source import lease
        from replication.zk.layout import ZNodePaths

        with self.zk_hook.connected() as zk:
            paths = ZNodePaths(self.conf, parent=self.cluster_key.znode_parent)
            return lease.release(zk, paths, peer_id, owner)

    # -- chores -----------------------------------------------------------------------------------
    def failover(self) -> dict[str, Any]:
        """``failover_once``: claim the queues of dead region servers."""
        from replication.failover import failover_once

        with self.zk_hook.connected() as zk:
            return failover_once(zk, self.cluster_key, self.conf).as_dict()

    def clean(self, *, explain: bool = False) -> dict[str, Any]:
        """``clean_once``: delete old WALs no queue holds and past the TTL."""
        from replication.cleaner import clean_once

        with self.zk_hook.connected() as zk:
            return clean_once(zk, self.cluster_key, self.conf, explain=explain).as_dict()

    def lag_alert_ms(self) -> int:
        """The alert threshold ``hbrep.lag.alert.ms``."""
        return self.conf.get_int("hbrep.lag.alert.ms")

    # -- verify -----------------------------------------------------------------------------------
    def verify_targets(
        self,
        *,
        peer: str | None,
        table: str | None,
        families: list[str] | None,
        start_ms: int,
        end_ms: int,
    ) -> list[dict[str, Any]]:
        """(peer, table) pairs to verify: the named ones, else every peer × every table it replicates.

        A table is replicated to a peer when one of its families has REPLICATION_SCOPE != 0 and the
        peer's table-cfs let it through (``need_to_replicate``). Unknown peer/table names raise.
        """
        from replication.errors import HbrepError
        from replication.source.snapshot import open_source
        from replication.tables.descriptors import TableRegistry
        from replication.zk.peer_storage import ReplicationPeerStorage

        conf = self.conf
        with self.zk_hook.connected() as zk:
            source = open_source(zk, self.cluster_key, conf)
            storage = ReplicationPeerStorage(zk, source.paths)
            peer_ids = sorted(storage.list_peer_ids())
            if peer is not None:
                if peer not in peer_ids:
                    raise HbrepError(f"verify: peer {peer} does not exist on {self.cluster_key}")
                peer_ids = [peer]
            registry = TableRegistry(source.fs, source.root)
            tables = [registry.get(table)] if table is not None else [d for d in registry.list() if not d.is_system]
            targets = []
            for peer_id in peer_ids:
                config = storage.get_peer_config(peer_id)
                for desc in tables:
                    name = desc.name if desc.namespace != "default" else desc.qualifier
                    wanted = [
                        f
                        for f, cf in desc.families.items()
                        if cf.scope != 0 and (not families or f in families) and config.need_to_replicate(name, f)
                    ]
                    if table is None and not wanted:
                        continue
                    targets.append(
                        {
                            "peer_id": peer_id,
                            "table": name,
                            "families": sorted(families) if families else sorted(wanted),
                            "start_ms": start_ms,
                            "end_ms": end_ms,
                        }
                    )
            return targets

    def verify(self, *, peer_id: str, table: str, families: list[str], start_ms: int, end_ms: int) -> dict[str, Any]:
        """VerifyReplication of one (peer, table) over [start_ms, end_ms): the HBase counters.

        Calls ``replication.checks.verify_replication`` (which also records the verdict for status).
        """
        from replication.checks import verify_replication
        from replication.spark import spark_session

        spark = spark_session(f"hbrep-verify-{safe_name(peer_id)}-{safe_name(table)}")
        with self.zk_hook.connected() as zk:
            result = verify_replication(
                spark, zk, self.cluster_key, self.conf, peer_id=peer_id, table=table,
                start_ms=start_ms, end_ms=end_ms, families=families or None,
            )  # fmt: skip
        return dict(result.counters)

    def quality(self, *, peer_id: str, table: str, start_ms: int = 0, end_ms: int | None = None) -> dict[str, Any]:
        """The Great Expectations checkpoint of the replicated table on the peer (``replication.checks``)."""
        from replication.checks import check_replicated_table
        from replication.spark import spark_session
        from replication.tables.semantics import LATEST_TIMESTAMP

        spark = spark_session(f"hbrep-quality-{safe_name(peer_id)}-{safe_name(table)}")
        with self.zk_hook.connected() as zk:
            report = check_replicated_table(
                spark, zk, self.cluster_key, self.conf, peer_id=peer_id, table=table,
                start_ms=start_ms, end_ms=LATEST_TIMESTAMP if end_ms is None else end_ms,
            )  # fmt: skip
        return report.as_dict()


def default_owner(dag_id: str, run_id: str, peer_id: str) -> str:
    """The lease owner of one peer branch of one DAG run (stable across task retries)."""
    return f"airflow:{dag_id}:{run_id}:{peer_id}"
