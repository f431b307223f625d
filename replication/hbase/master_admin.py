"""A client of a real HBase 2.x master's MasterService: replication peers, table DDL, procedures.

Each call is one HBase RPC (``replication/cluster/hbase_rpc``) to the active master
(``registry``), method names as in HBase's Master.proto. Calls that start a procedure (peer changes,
create/modify/delete/truncate/enable/disable table) wait for it as HBase's Admin does
(``procedures.wait_for_procedure``), so a change has taken effect on the master and its region servers
when the method returns. HBase's exceptions come back as one-line HbrepErrors (``master_errors``).
"""

from __future__ import annotations

import getpass
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from google.protobuf.message import Message
from kazoo.client import KazooClient

from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC_WITH_TAGS
from replication.cluster.hbase_rpc.connection import ConnectionFailed, RemoteCallError, RpcConnection
from replication.cluster.hbase_rpc.rpc_kerberos import RpcKerberos, rpc_kerberos
from replication.cluster.hbase_rpc.tls import client_context
from replication.config import Config
from replication.errors import HbrepError
from replication.hbase.master_errors import MasterError, ProcedureTimeout, remote_master_error
from replication.hbase.peer_convert import peer_from_pb, peer_to_pb
from replication.hbase.procedures import wait_for_procedure
from replication.hbase.registry import MasterAddress, NoActiveMaster, master_candidates
from replication.kerberos import kerberos_identity
from replication.proto import HBase_pb2, Master_pb2, Procedure_pb2, Replication_pb2
from replication.tables.names import TableName
from replication.tls import zk_client_tls
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig, check_peer_id

MASTER_SERVICE = "MasterService"
PROCEDURE_TIMEOUT_KEY = "hbase.client.sync.wait.timeout.msec"
DEFAULT_PROCEDURE_TIMEOUT_MS = 60_000  # hbrep's default (HBase's is 10 minutes): a command answers in a minute
TABLE_STATES = {0: "ENABLED", 1: "DISABLED", 2: "DISABLING", 3: "ENABLING"}


# The client version in the ConnectionHeader, as HBase's own client sends it (VersionInfo). The master reads it to
# choose how a DDL call reports a procedure's failure: to a 2.x client (VersionInfoUtil.hasMinimumVersion 2.0)
# it returns the procedure id at once and the failure comes with the procedure's result (GetProcedureResult,
# which MasterAdmin.wait polls), as HBase's Admin sees it; to a client that names no version it waits for the
# procedure's prepare step and throws on the call. hbrep speaks the 2.x client protocol, so it says 2.6.
CLIENT_VERSION = HBase_pb2.VersionInfo(
    version="2.6-hbrep", url="hbrep", revision="hbrep", user="hbrep", date="", src_checksum="",
    version_major=2, version_minor=6,
)  # fmt: skip


@dataclass(frozen=True)
class PeerDescription:
    """One peer as ListReplicationPeers returns it (HBase's ReplicationPeerDescription)."""

    peer_id: str
    enabled: bool
    config: ReplicationPeerConfig


def table_name_pb(table: str) -> HBase_pb2.TableName:
    """HBase's TableName message for ``t1`` / ``ns:t1`` (IllegalTableName for a name HBase refuses)."""
    name = TableName.parse(table)
    return HBase_pb2.TableName(namespace=name.namespace.encode(), qualifier=name.qualifier.encode())


def table_name_str(name: HBase_pb2.TableName) -> str:
    """``t1`` for default:t1, ``ns:t1`` otherwise."""
    namespace, qualifier = name.namespace.decode(), name.qualifier.decode()
    return qualifier if namespace == "default" else f"{namespace}:{qualifier}"


class MasterAdmin:
    """MasterService calls to one master (``address``) of the cluster at ``cluster``."""

    def __init__(
        self,
        master: MasterAddress,
        cluster: ClusterKey,
        *,
        rpc_timeout_s: float = 60.0,
        procedure_timeout_s: float = DEFAULT_PROCEDURE_TIMEOUT_MS / 1000,
        user: str | None = None,
        tls: ssl.SSLContext | None = None,
        kerberos: RpcKerberos | None = None,
    ):
        self.master, self.cluster = master, cluster
        self.procedure_timeout_s = procedure_timeout_s
        self._answered = False  # once True, a timeout is the master not answering, not the master being down
        self._connection = RpcConnection(master.host, master.port, MASTER_SERVICE, KEY_VALUE_CODEC_WITH_TAGS,
                                         user or getpass.getuser(), rpc_timeout_s, CLIENT_VERSION, tls,
                                         kerberos)  # fmt: skip

    # -- plumbing ------------------------------------------------------------------------------------
    def call(self, method: str, request: Message, response_type: type[Message]) -> Message:
        """One MasterService call; its response, or a one-line HbrepError (NoActiveMaster when unreachable,
        MasterError when a master that answered before does not answer within hbase.rpc.timeout)."""
        try:
            response = self._connection.call(method, request, response_type)
        except ConnectionFailed as exc:
            if str(exc).endswith(": timed out") and self._answered:
                hint = " (a peer procedure may be stuck: run `hbrep hbase_peer_doctor`)" if "Peer" in method else ""
                raise MasterError(
                    f"HBase master {self.master.address} {method}: no answer within "
                    f"{self._connection.timeout_s:.0f}s (hbase.rpc.timeout){hint}"
                ) from None
            raise NoActiveMaster(f"no active HBase master at {self.cluster} ({exc})") from None
        except RemoteCallError as exc:
            self._answered = True
            raise remote_master_error(exc.exception, self.master.address, method) from None
        self._answered = True
        return response

    def _procedure(self, method: str, request: Message, response_type: type[Message], what: str) -> None:
        response = self.call(method, request, response_type)
        if not response.HasField("proc_id"):  # type: ignore[attr-defined]
            return
        try:
            self.wait(response.proc_id, what)  # type: ignore[attr-defined]
        except ProcedureTimeout as exc:
            if "Peer" not in method:
                raise
            # a peer procedure that never finishes: most often a peer znode the master did not write (issue 49)
            raise ProcedureTimeout(f"{exc} (a peer procedure may be stuck: run `hbrep hbase_peer_doctor`)") from None

    def wait(self, proc_id: int, what: str) -> bytes:
        """Wait for procedure ``proc_id`` as HBase's client does; its result, or its failure as one line."""

        def poll(pid: int) -> Master_pb2.GetProcedureResultResponse:
            request = Master_pb2.GetProcedureResultRequest(proc_id=pid)
            return self.call("getProcedureResult", request, Master_pb2.GetProcedureResultResponse)  # type: ignore[return-value]

        return wait_for_procedure(poll, proc_id, what, self.master.address, self.procedure_timeout_s)

    def is_master_running(self) -> bool:
        """MasterService.IsMasterRunning."""
        answer = self.call("IsMasterRunning", Master_pb2.IsMasterRunningRequest(), Master_pb2.IsMasterRunningResponse)
        return bool(answer.is_master_running)  # type: ignore[attr-defined]

    def get_procedures(self) -> list[Procedure_pb2.Procedure]:
        """Every procedure the master knows (running and recently finished), GetProcedures."""
        answer = self.call("GetProcedures", Master_pb2.GetProceduresRequest(), Master_pb2.GetProceduresResponse)
        return list(answer.procedure)  # type: ignore[attr-defined]

    def close(self) -> None:
        """Close the connection to the master."""
        self._connection.close()

    # -- replication peers ---------------------------------------------------------------------------
    def add_replication_peer(self, peer_id: str, config: ReplicationPeerConfig, enabled: bool = True) -> None:
        """AddReplicationPeer, waited for: every region server has the peer when this returns."""
        check_peer_id(peer_id)
        ClusterKey.parse(config.cluster_key)
        state = Replication_pb2.ReplicationState(state=0 if enabled else 1)
        request = Replication_pb2.AddReplicationPeerRequest(peer_id=peer_id, peer_config=peer_to_pb(config),
                                                            peer_state=state)  # fmt: skip
        self._procedure("AddReplicationPeer", request, Replication_pb2.AddReplicationPeerResponse,
                        f"add_peer {peer_id}")  # fmt: skip

    def remove_replication_peer(self, peer_id: str) -> None:
        """RemoveReplicationPeer, waited for (HBase removes the peer's queues itself)."""
        request = Replication_pb2.RemoveReplicationPeerRequest(peer_id=peer_id)
        self._procedure("RemoveReplicationPeer", request, Replication_pb2.RemoveReplicationPeerResponse,
                        f"remove_peer {peer_id}")  # fmt: skip

    def enable_replication_peer(self, peer_id: str) -> None:
        """EnableReplicationPeer, waited for: the region servers ship to the peer when this returns."""
        request = Replication_pb2.EnableReplicationPeerRequest(peer_id=peer_id)
        self._procedure("EnableReplicationPeer", request, Replication_pb2.EnableReplicationPeerResponse,
                        f"enable_peer {peer_id}")  # fmt: skip

    def disable_replication_peer(self, peer_id: str) -> None:
        """DisableReplicationPeer, waited for."""
        request = Replication_pb2.DisableReplicationPeerRequest(peer_id=peer_id)
        self._procedure("DisableReplicationPeer", request, Replication_pb2.DisableReplicationPeerResponse,
                        f"disable_peer {peer_id}")  # fmt: skip

    def get_replication_peer_config(self, peer_id: str) -> ReplicationPeerConfig:
        """GetReplicationPeerConfig (PeerNotFound when the master has no such peer)."""
        request = Replication_pb2.GetReplicationPeerConfigRequest(peer_id=peer_id)
        answer = self.call("GetReplicationPeerConfig", request, Replication_pb2.GetReplicationPeerConfigResponse)
        return peer_from_pb(answer.peer_config, f"peer {peer_id} of {self.cluster}")  # type: ignore[attr-defined]

    def update_replication_peer_config(self, peer_id: str, config: ReplicationPeerConfig) -> None:
        """UpdateReplicationPeerConfig, waited for (HBase refuses a changed cluster key or endpoint)."""
        request = Replication_pb2.UpdateReplicationPeerConfigRequest(peer_id=peer_id, peer_config=peer_to_pb(config))
        self._procedure("UpdateReplicationPeerConfig", request, Replication_pb2.UpdateReplicationPeerConfigResponse,
                        f"update_peer_config {peer_id}")  # fmt: skip

    def list_replication_peers(self, regex: str | None = None) -> list[PeerDescription]:
        """ListReplicationPeers: every peer the master knows (matching ``regex``), sorted by id."""
        request = Replication_pb2.ListReplicationPeersRequest()
        if regex:
            request.regex = regex
        answer = self.call("ListReplicationPeers", request, Replication_pb2.ListReplicationPeersResponse)
        peers = [
            PeerDescription(d.id, d.state.state == 0, peer_from_pb(d.config, f"peer {d.id} of {self.cluster}"))
            for d in answer.peer_desc  # type: ignore[attr-defined]
        ]
        return sorted(peers, key=lambda p: p.peer_id)

    def is_replication_peer_enabled(self, peer_id: str) -> bool:
        """IsReplicationPeerEnabled."""
        request = Replication_pb2.GetReplicationPeerStateRequest(peer_id=peer_id)
        answer = self.call("IsReplicationPeerEnabled", request, Replication_pb2.GetReplicationPeerStateResponse)
        return bool(answer.is_enabled)  # type: ignore[attr-defined]

    def replication_peer_modification_switch(self, on: bool) -> bool:
        """ReplicationPeerModificationSwitch; the previous value. Turning it off does not wait for peer
        procedures already running (HBase's Admin may; ``get_procedures`` shows them)."""
        request = Replication_pb2.ReplicationPeerModificationSwitchRequest(on=on)
        answer = self.call("ReplicationPeerModificationSwitch", request,
                           Replication_pb2.ReplicationPeerModificationSwitchResponse)  # fmt: skip
        return bool(answer.previous_value)  # type: ignore[attr-defined]

    def is_replication_peer_modification_enabled(self) -> bool:
        """IsReplicationPeerModificationEnabled."""
        answer = self.call("IsReplicationPeerModificationEnabled",
                           Replication_pb2.IsReplicationPeerModificationEnabledRequest(),
                           Replication_pb2.IsReplicationPeerModificationEnabledResponse)  # fmt: skip
        return bool(answer.enabled)  # type: ignore[attr-defined]

    # -- tables --------------------------------------------------------------------------------------
    def get_table_descriptors(self, tables: list[str] | None = None, regex: str | None = None,
                              include_sys_tables: bool = False) -> list[HBase_pb2.TableSchema]:  # fmt: skip
        """GetTableDescriptors of ``tables`` (all user tables when None; TableNotFound if one is missing)."""
        request = Master_pb2.GetTableDescriptorsRequest(include_sys_tables=include_sys_tables)
        request.table_names.extend(table_name_pb(t) for t in tables or ())
        if regex:
            request.regex = regex
        answer = self.call("GetTableDescriptors", request, Master_pb2.GetTableDescriptorsResponse)
        return list(answer.table_schema)  # type: ignore[attr-defined]

    def get_table_descriptor(self, table: str) -> HBase_pb2.TableSchema:
        """One table's TableSchema; TableNotFound (one line) when the master has no such table."""
        from replication.hbase.master_errors import TableNotFound

        found = [s for s in self.get_table_descriptors([table]) if table_name_str(s.table_name) == _canon(table)]
        if not found:
            raise TableNotFound(f"HBase master {self.master.address}: TableNotFoundException: {_canon(table)}")
        return found[0]

    def get_table_names(self, regex: str | None = None, include_sys_tables: bool = False) -> list[str]:
        """GetTableNames: the tables' names (``t1``, ``ns:t1``), sorted."""
        request = Master_pb2.GetTableNamesRequest(include_sys_tables=include_sys_tables)
        if regex:
            request.regex = regex
        answer = self.call("GetTableNames", request, Master_pb2.GetTableNamesResponse)
        return sorted(table_name_str(n) for n in answer.table_names)  # type: ignore[attr-defined]

    def table_exists(self, table: str) -> bool:
        """True when the master lists ``table``."""
        return _canon(table) in self.get_table_names(include_sys_tables=True)

    def create_table(self, schema: HBase_pb2.TableSchema) -> None:
        """CreateTable, waited for (TableExists when it exists)."""
        request = Master_pb2.CreateTableRequest(table_schema=schema)
        self._procedure("CreateTable", request, Master_pb2.CreateTableResponse,
                        f"create_table {table_name_str(schema.table_name)}")  # fmt: skip

    def modify_table(self, schema: HBase_pb2.TableSchema) -> None:
        """ModifyTable with the whole new schema, waited for (regions reopened)."""
        request = Master_pb2.ModifyTableRequest(table_name=schema.table_name, table_schema=schema)
        self._procedure("ModifyTable", request, Master_pb2.ModifyTableResponse,
                        f"modify_table {table_name_str(schema.table_name)}")  # fmt: skip

    def modify_column(self, table: str, family: HBase_pb2.ColumnFamilySchema) -> None:
        """ModifyColumn with the family's whole new schema, waited for."""
        request = Master_pb2.ModifyColumnRequest(table_name=table_name_pb(table), column_families=family)
        self._procedure("ModifyColumn", request, Master_pb2.ModifyColumnResponse,
                        f"modify_column {table}:{family.name.decode()}")  # fmt: skip

    def delete_table(self, table: str) -> None:
        """DeleteTable (the table must be disabled), waited for."""
        request = Master_pb2.DeleteTableRequest(table_name=table_name_pb(table))
        self._procedure("DeleteTable", request, Master_pb2.DeleteTableResponse, f"drop {table}")

    def truncate_table(self, table: str, preserve_splits: bool = False) -> None:
        """truncateTable (the table must be disabled; HBase enables it again), waited for."""
        request = Master_pb2.TruncateTableRequest(tableName=table_name_pb(table), preserveSplits=preserve_splits)
        self._procedure("truncateTable", request, Master_pb2.TruncateTableResponse, f"truncate {table}")

    def enable_table(self, table: str) -> None:
        """EnableTable, waited for."""
        request = Master_pb2.EnableTableRequest(table_name=table_name_pb(table))
        self._procedure("EnableTable", request, Master_pb2.EnableTableResponse, f"enable {table}")

    def disable_table(self, table: str) -> None:
        """DisableTable, waited for."""
        request = Master_pb2.DisableTableRequest(table_name=table_name_pb(table))
        self._procedure("DisableTable", request, Master_pb2.DisableTableResponse, f"disable {table}")

    def get_table_state(self, table: str) -> str:
        """GetTableState: ENABLED, DISABLED, DISABLING or ENABLING."""
        request = Master_pb2.GetTableStateRequest(table_name=table_name_pb(table))
        answer = self.call("GetTableState", request, Master_pb2.GetTableStateResponse)
        return TABLE_STATES.get(answer.table_state.state, str(answer.table_state.state))  # type: ignore[attr-defined]


def _canon(table: str) -> str:
    return str(TableName.parse(table))


def procedure_timeout_s(conf: Config | None) -> float:
    """How long a procedure is waited for (``hbase.client.sync.wait.timeout.msec``; hbrep's default 60 s)."""
    if conf is None:
        return DEFAULT_PROCEDURE_TIMEOUT_MS / 1000
    return conf.get_int(PROCEDURE_TIMEOUT_KEY, DEFAULT_PROCEDURE_TIMEOUT_MS) / 1000


def connect_master(zk: KazooClient, paths: ZNodePaths, cluster: ClusterKey, conf: Config | None = None) -> MasterAdmin:
    """A MasterAdmin to the first candidate master that says it is running (``hbase.masters``, then the
    ``<parent>/master`` znode); NoActiveMaster ("no active HBase master at <key>") when none does."""
    rpc_timeout_s = (conf.get_int("hbase.rpc.timeout") / 1000) if conf is not None else 60.0
    reasons = []
    tls = client_context(conf) if conf is not None else None
    kerberos = rpc_kerberos(conf) if conf is not None else None
    for candidate in master_candidates(zk, paths, cluster, conf):
        admin = MasterAdmin(
            candidate, cluster, rpc_timeout_s=rpc_timeout_s, procedure_timeout_s=procedure_timeout_s(conf), tls=tls,
            kerberos=kerberos,
        )  # fmt: skip
        try:
            if admin.is_master_running():
                return admin
            reasons.append(f"{candidate.address} is not running")
        except (NoActiveMaster, MasterError) as exc:
            reasons.append(str(exc).split(" (", 1)[-1].rstrip(")") if isinstance(exc, NoActiveMaster) else str(exc))
        admin.close()
    raise NoActiveMaster(f"no active HBase master at {cluster} ({'; '.join(reasons)})")


@contextmanager
def master_admin(zk: KazooClient, paths: ZNodePaths, cluster: ClusterKey, conf: Config | None = None
                 ) -> Iterator[MasterAdmin]:  # fmt: skip
    """``with master_admin(zk, paths, key, conf) as admin:`` — connected to the active master, closed after."""
    admin = connect_master(zk, paths, cluster, conf)
    try:
        yield admin
    finally:
        admin.close()


@contextmanager
def master_at(cluster: ClusterKey, conf: Config) -> Iterator[MasterAdmin]:
    """``with master_at(key, conf) as admin:`` — the active master of the real HBase named by ``key``, found
    through a ZooKeeper session of its own (closed after, like the master connection)."""
    with (
        connected(cluster, timeout=15.0, tls=zk_client_tls(conf), kerberos=kerberos_identity(conf)) as zk,
        master_admin(zk, ZNodePaths(conf, parent=cluster.znode_parent), cluster, conf) as admin,
    ):
        yield admin


__all__ = ["HbrepError", "MasterAdmin", "PeerDescription", "connect_master", "master_admin", "master_at"]
