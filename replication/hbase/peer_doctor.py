"""Issue 49's way out: the peer znodes of a real HBase that its running master does not know.

A running HBase 2.x master keeps its peers in memory and changes them only through its procedures.
A peer znode written behind its back (older hbrep wrote ``<parent>/replication/peers/<id>`` itself) is
invisible to ``ListReplicationPeers``, and a later ``add_peer`` of the same id through HBase wedges:
its AddPeerProcedure finds the znode, fails to create it and retries forever, holding the peer's
lock, so every other procedure on that id waits behind it. ``diagnose`` names those znodes and the
peer procedures that are still running; ``remove_orphans`` deletes the znodes (after checking once
more that the master does not list them), after which a stuck AddPeerProcedure succeeds on its next retry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.hbase.master_admin import MasterAdmin
from replication.proto import Procedure_pb2
from replication.zk.acl import zk_access
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerStorage

UNFINISHED = frozenset({Procedure_pb2.RUNNABLE, Procedure_pb2.WAITING, Procedure_pb2.WAITING_TIMEOUT,
                        Procedure_pb2.INITIALIZING})  # fmt: skip
PEER_PROCEDURE_PACKAGE = "org.apache.hadoop.hbase.master.replication."


@dataclass(frozen=True)
class StuckProcedure:
    """A peer procedure the master has not finished."""

    proc_id: int
    class_name: str
    state: str
    submitted_ms: int

    def as_dict(self) -> dict[str, object]:
        return {"proc_id": self.proc_id, "class": self.class_name, "state": self.state,
                "submitted_ms": self.submitted_ms}  # fmt: skip


@dataclass
class PeerDiagnosis:
    """What the doctor found: peer znodes the master does not know, peers the master has without a
    znode, and the master's unfinished peer procedures."""

    orphan_znodes: dict[str, str] = field(default_factory=dict)  # peer id -> znode path
    master_only: list[str] = field(default_factory=list)
    unfinished: list[StuckProcedure] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not (self.orphan_znodes or self.master_only or self.unfinished)

    def as_dict(self) -> dict[str, object]:
        return {
            "orphan_znodes": self.orphan_znodes,
            "master_only": self.master_only,
            "unfinished_procedures": [p.as_dict() for p in self.unfinished],
            "removed": self.removed,
            "healthy": self.healthy,
        }


def peer_znode_ids(zk: KazooClient, paths: ZNodePaths) -> list[str]:
    """The children of ``<parent>/replication/peers`` (peer ids), sorted; [] when it does not exist."""
    with zk_access(paths.peers):
        try:
            return sorted(zk.get_children(paths.peers))
        except NoNodeError:
            return []


def unfinished_peer_procedures(admin: MasterAdmin) -> list[StuckProcedure]:
    """The master's peer procedures (``master.replication.*``) not finished yet, oldest first."""
    found = [
        StuckProcedure(
            p.proc_id, p.class_name.rsplit(".", 1)[-1], Procedure_pb2.ProcedureState.Name(p.state), p.submitted_time
        )
        for p in admin.get_procedures()
        if p.class_name.startswith(PEER_PROCEDURE_PACKAGE) and p.state in UNFINISHED
    ]
    return sorted(found, key=lambda p: p.proc_id)


def diagnose(zk: KazooClient, paths: ZNodePaths, admin: MasterAdmin) -> PeerDiagnosis:
    """Compare the peer znodes with the master's ListReplicationPeers, and list unfinished peer procedures."""
    known = {p.peer_id for p in admin.list_replication_peers()}
    znodes = peer_znode_ids(zk, paths)
    return PeerDiagnosis(
        orphan_znodes={pid: paths.peer(pid) for pid in znodes if pid not in known},
        master_only=sorted(known - set(znodes)),
        unfinished=unfinished_peer_procedures(admin),
    )


def remove_orphans(zk: KazooClient, paths: ZNodePaths, admin: MasterAdmin, diagnosis: PeerDiagnosis) -> list[str]:
    """Delete each orphan peer znode (recursively) that the master still does not list; the ids removed."""
    known = {p.peer_id for p in admin.list_replication_peers()}
    storage = ReplicationPeerStorage(zk, paths)
    removed = []
    for peer_id in sorted(diagnosis.orphan_znodes):
        if peer_id in known:
            continue
        storage.remove_peer_znode(peer_id)
        removed.append(peer_id)
    return removed
