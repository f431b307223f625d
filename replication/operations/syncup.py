"""``hbrep syncup``: ship every queue of a source cluster none of whose region servers lives, as HBase's
ReplicationSyncUp does.

ReplicationSyncUp (hbase-server, 2.x) starts no region server: it claims the queues of every replicator
that is not alive (``<parent>/rs`` has no znode for it) to a server of its own that registers nowhere,
runs the replication sources of those recovered queues until none is left, and exits. hbrep does the
same with its own steps: ``zk/claim.py`` moves each dead replicator's queues to ``hbrep-syncup,1,<now>``
(recovered queues ``peerId-dead...``, as failover claims them), then ship cycles (``source/cycle.py``,
the snapshot told to ship that replicator's queues although it does not live) ship and commit them until
none is left; a drained recovered queue is deleted by the commit, as always. Works on an hbrep source and
on a real HBase 2.x source (the same queue layout in its ZooKeeper). Refused while any region server of
the source lives: those own their queues, and failover claims a dead server's queues to a live one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import open_source
from replication.config import Config
from replication.errors import HbrepError
from replication.source.cycle import run_cycle
from replication.source.job_runner import ShipJobRunner
from replication.zk.claim import claim_queues
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.peer_storage import ReplicationPeerStorage
from replication.zk.queue_info import live_server_names
from replication.zk.queue_storage import ReplicationQueueStorage

SYNCUP_HOST = "hbrep-syncup"
MAX_CYCLES = 20


class SyncUpRefused(HbrepError):
    """A region server of the source lives, or a queue could not be shipped."""


@dataclass
class SyncUpReport:
    """What ``syncup`` claimed and shipped."""

    server: str
    claimed: dict[str, list[str]] = field(default_factory=dict)  # dead replicator -> the queue ids it had
    cycles: int = 0
    entries_shipped: int = 0
    left: list[str] = field(default_factory=list)  # queues still there (their peer is disabled)

    def as_dict(self) -> dict[str, Any]:
        """The report as ``syncup --json`` prints it."""
        return {"server": self.server, "claimed": self.claimed, "cycles": self.cycles,
                "entries_shipped": self.entries_shipped, "left": self.left}  # fmt: skip


def syncup(zk: KazooClient, key: ClusterKey, conf: Config, runner: ShipJobRunner) -> SyncUpReport:
    """Claim every dead replicator's queues and ship them until none is left (queues of a disabled peer
    stay, as HBase keeps them); SyncUpRefused while a region server of the source lives or when a queue
    fails to ship (its positions stay: run syncup again)."""
    source = open_source(zk, key, conf)
    paths = source.paths
    live = live_server_names(LiveServerStorage(zk, paths).live())
    if live:
        raise SyncUpRefused(
            f"{len(live)} region server(s) of {key} alive ({', '.join(live[:3])}): syncup is for a source none of "
            "whose servers lives (failover claims a dead server's queues to a live one)"
        )
    storage = ReplicationQueueStorage(zk, paths)
    peers = ReplicationPeerStorage(zk, paths)
    report = SyncUpReport(f"{SYNCUP_HOST},1,{int(time.time() * 1000)}")
    for dead in storage.get_list_of_replicators():
        claimed = claim_queues(zk, paths, dead, report.server, peers.peer_exists)
        report.claimed[dead] = [q.old_queue_id for q in claimed]
        storage.remove_replicator_if_queue_is_empty(dead)
    while report.cycles < MAX_CYCLES and storage.get_all_queues(report.server):
        cycle = run_cycle(zk, key, conf, runner=runner, also_ship=frozenset({report.server}))
        report.cycles += 1
        report.entries_shipped += sum(p.entries_shipped for p in cycle.peers.values())
        failed = cycle.failed_queues()
        if failed:
            raise SyncUpRefused(f"queue {failed[0].queue} failed to ship: {failed[0].error} (run syncup again)")
        if not cycle.spark_job:
            break  # what is left belongs to disabled peers
    report.left = storage.get_all_queues(report.server)
    storage.remove_replicator_if_queue_is_empty(report.server)
    return report
