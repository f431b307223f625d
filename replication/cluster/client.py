"""ClusterClient: writes, flushes and rolls against a running cluster, found from its cluster key.

Rows are routed to ``owner_of(row, live servers)``; the live servers come from ``<parent>/rs``. When the
owner does not answer (killed, stopping), the write is retried on the next live server: any server
accepts any row into its own region, so nothing depends on the owner. A write returns only when the
server has fsynced its WAL.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent import futures

import grpc
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.cluster import rpc
from replication.cluster.errors import ClusterError, StaleRoutingEpoch
from replication.cluster.info import ClusterInfo, cluster_token, read_cluster_info
from replication.cluster.region_routing import LATEST_TIMESTAMP, owner_of
from replication.config import Config
from replication.errors import HbrepError
from replication.fs import get_filesystem
from replication.proto import Admin_pb2, Admin_pb2_grpc
from replication.tables.descriptors import TableRegistry
from replication.tables.errors import UnknownFamily, UnknownTable
from replication.tls import TlsSettings, rpc_client_tls
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType
from replication.zk.client import connect, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.serial_barriers import bump_epoch, current_bumps, epoch_path, routing_epoch

LOG = logging.getLogger(__name__)

RETRYABLE = frozenset((grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED))


class RemoteError(HbrepError):
    """A region server refused a request for a reason that is not the caller's input."""


def raise_for_rpc_error(exc: grpc.RpcError, where: str) -> None:
    """Map a failed call to the error the server meant (UnknownTable, UnknownFamily, ...); always raises."""
    code = exc.code()
    details = exc.details() or code.name
    trailers = dict(exc.trailing_metadata() or ())
    kind = trailers.get(rpc.ERROR_KIND)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        raise ClusterError(f"{where} refused the cluster token: {details}")
    if kind == rpc.TABLE_NOT_FOUND or code == grpc.StatusCode.NOT_FOUND:
        raise UnknownTable(details)
    if kind == rpc.NO_SUCH_FAMILY or code == grpc.StatusCode.FAILED_PRECONDITION:
        raise UnknownFamily(details)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        raise ClusterError(details)
    if kind == rpc.NOT_SERVING:
        raise StaleRoutingEpoch(f"{where}: {details}")
    raise RemoteError(f"{where}: {code.name}: {details}")


def server_stub(
    server_name: str, tls: TlsSettings | None = None
) -> tuple[grpc.Channel, Admin_pb2_grpc.AdminServiceStub]:
    """A channel (TLS when ``tls`` is given) and stub for a server name ``host,port,code`` (or ``host:port``)."""
    channel = rpc.open_channel(rpc.address_of(server_name), tls)
    return channel, Admin_pb2_grpc.AdminServiceStub(channel)


class ClusterClient:
    """Client of one embedded cluster: put/delete/batch/flush/roll_wal, routed to live region servers."""

    def __init__(
        self,
        cluster_key: str | ClusterKey,
        conf: Config | None = None,
        *,
        zk: KazooClient | None = None,
        timeout_s: float | None = None,
    ):
        self.conf = conf or Config.load(env={})
        self.key = ClusterKey.parse(cluster_key) if isinstance(cluster_key, str) else cluster_key
        self.paths = ZNodePaths(self.conf, parent=self.key.znode_parent)
        self._zk_owned = zk is None
        self.zk = zk or connect(self.key, **zk_options(self.conf))
        self.info: ClusterInfo = read_cluster_info(self.zk, self.paths)
        self.fs, self.root = get_filesystem(self.info.root)
        self._metadata = ((rpc.AUTH_METADATA, cluster_token(self.fs, self.root, self.conf)),)
        # each call's deadline: HBase's client RPC timeout unless the caller gives one
        self.timeout_s = timeout_s if timeout_s is not None else self.conf.get_int("hbase.rpc.timeout") / 1000
        self._stubs: dict[str, tuple[grpc.Channel, Admin_pb2_grpc.AdminServiceStub]] = {}
        self._lock = threading.Lock()
        self._dead: set[str] = set()
        self._epoch = 0  # the routing epoch writes are sent in (serial replication's barriers)
        self._bumps = 0  # the epoch znode's bump count, followed by a watch
        self._bumps_watched = False
        self._closed = False
        self._pool: futures.ThreadPoolExecutor | None = None

    # -- servers ----------------------------------------------------------------------------------
    def live_servers(self) -> list[str]:
        """The live region servers (``<parent>/rs`` children), sorted, minus ones seen dead by this client."""
        try:
            children, stat = self.zk.get_children(self.paths.rs, include_data=True)
            cversion = stat.cversion
        except NoNodeError:
            children, cversion = [], 0
        live = sorted(s for s in children if s not in self._dead)
        if not live:
            raise ClusterError(f"no live region server in cluster {self.key}")
        # the epoch of the list routed by (zk/serial_barriers.py), its cversion read together with it; the
        # bumps come from a watch, not a read per batch (a stale count only names an older epoch, which a
        # server that is already past it ignores)
        self._follow_bumps()
        self._epoch = routing_epoch(cversion, self._bumps)
        return live

    def _follow_bumps(self) -> None:
        """Start watching the epoch znode's bump count (once)."""
        if self._bumps_watched:
            return
        self._bumps_watched = True

        def on_change(data: bytes | None, stat) -> bool | None:
            if self._closed:
                return False  # stop watching
            self._bumps = max(self._bumps, stat.version if stat is not None else 0)
            return None

        try:
            self.zk.DataWatch(epoch_path(self.paths), on_change)
        except Exception as exc:  # a client that cannot read hbrep's znodes still writes
            LOG.debug("routing epoch of %s not followed: %s", self.key, exc)

    def _bump(self) -> None:
        """Start a new routing epoch (this client re-routes a server's rows)."""
        try:
            self._bumps = max(self._bumps, bump_epoch(self.zk, self.paths))
        except Exception as exc:  # a client without write access to hbrep's znodes still writes
            LOG.debug("routing epoch of %s not bumped: %s", self.key, exc)

    def _refresh_bumps(self) -> None:
        """Read the bump count now (a server refused a write routed in an older epoch than its own; the
        watch may not have told this client yet)."""
        try:
            self._bumps = max(self._bumps, current_bumps(self.zk, self.paths))
        except Exception as exc:  # the next live_servers() still reads the membership's part
            LOG.debug("routing epoch of %s not read: %s", self.key, exc)

    def _stub(self, server: str) -> Admin_pb2_grpc.AdminServiceStub:
        with self._lock:
            if server not in self._stubs:
                self._stubs[server] = server_stub(server, rpc_client_tls(self.conf))
            return self._stubs[server][1]

    def _call(self, server: str, method: str, request: object, timeout: float | None = None) -> object:
        stub = self._stub(server)
        metadata = (*self._metadata, (rpc.ROUTING_EPOCH, str(self._epoch))) if self._epoch else self._metadata
        return getattr(stub, method)(request, timeout=timeout or self.timeout_s, metadata=metadata)

    def _mark_dead(self, server: str) -> None:
        with self._lock:
            self._dead.add(server)
            channel = self._stubs.pop(server, (None, None))[0]
        if channel is not None:
            channel.close()
        # its rows go to other servers now, before ZooKeeper may know it is gone: a new routing epoch
        self._bump()

    # -- writes -----------------------------------------------------------------------------------
    def mutate_on(self, server: str, table: str, cells: Sequence[Cell], cluster_ids: Sequence[uuid.UUID] = ()) -> int:
        """Send ``cells`` to one server (no re-routing); return the WAL sequence id. Raises mapped errors."""
        return self.mutate_encoded_on(server, table, len(cells), encode_cells(cells), cluster_ids)

    def mutate_encoded_on(
        self, server: str, table: str, cell_count: int, cell_block: bytes, cluster_ids: Sequence[uuid.UUID] = ()
    ) -> int:
        """As :meth:`mutate_on` for cells already encoded (``cell_count`` cells in ``cell_block``)."""
        request = Admin_pb2.MutateRequest(
            table=table, cell_count=cell_count, cell_block=cell_block, cluster_ids=rpc.uuids_to_pb(cluster_ids)
        )
        try:
            response = self._call(server, "Mutate", request)
        except grpc.RpcError as exc:
            raise_for_rpc_error(exc, f"region server {server}")
        return int(response.log_sequence_number)  # type: ignore[attr-defined]

    def batch(self, table: str, cells: Iterable[Cell], cluster_ids: Sequence[uuid.UUID] = ()) -> int:
        """Write ``cells`` (any rows) to ``table``; durable when it returns; return the number of cells.

        Cells are grouped by owning server and sent in parallel; a server that fails to answer is
        dropped and its cells re-routed; a server in a newer routing epoch than this client's routing
        (StaleRoutingEpoch) gets its cells routed again by the routing read anew. Raises
        UnknownTable/UnknownFamily (one line) on bad input.
        """
        pending = list(cells)
        total = len(pending)
        for _attempt in range(5):
            if not pending:
                return total
            servers = self.live_servers()
            groups: dict[str, list[Cell]] = defaultdict(list)
            for cell in pending:
                groups[owner_of(cell.row, servers)].append(cell)
            failed: list[Cell] = []
            pool = self._executor()
            jobs = {pool.submit(self._send_group, s, table, g, cluster_ids): s for s, g in groups.items()}
            errors: list[BaseException] = []
            moved = False
            for job in futures.as_completed(jobs):
                server = jobs[job]
                try:
                    job.result()
                except StaleRoutingEpoch:  # routed by an older membership: route again, the server is fine
                    moved = True
                    failed.extend(groups[server])
                except _Retry:
                    self._mark_dead(server)
                    failed.extend(groups[server])
                except BaseException as exc:
                    errors.append(exc)
            if errors:
                raise errors[0]
            pending = failed
            if moved:
                self._refresh_bumps()
            elif pending:
                time.sleep(0.1)
        why = "the servers' routing epoch kept moving past this client's" if moved else "no region server answered"
        raise ClusterError(f"could not write {len(pending)} cells of table {table}: {why}")

    def _send_group(self, server: str, table: str, cells: list[Cell], cluster_ids: Sequence[uuid.UUID]) -> None:
        try:
            self.mutate_on(server, table, cells, cluster_ids)
        except RemoteError as exc:
            raise _Retry(str(exc)) from exc

    def _executor(self) -> futures.ThreadPoolExecutor:
        if self._pool is None:
            self._pool = futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="client")
        return self._pool

    def put(self, table: str, row: bytes, family: bytes, qualifier: bytes, value: bytes, ts: int | None = None) -> None:
        """One Put cell (timestamp = server clock unless ``ts``); durable when it returns."""
        stamp = LATEST_TIMESTAMP if ts is None else ts
        self.batch(table, [Cell(row, family, qualifier, stamp, int(CellType.PUT), value)])

    def delete(
        self,
        table: str,
        row: bytes,
        family: bytes | None = None,
        qualifier: bytes | None = None,
        ts: int | None = None,
        kind: CellType | None = None,
    ) -> None:
        """A delete marker, as the HBase shell's delete/deleteall:

        no family → the whole row (DeleteFamily of every family); family only → DeleteFamily;
        family+qualifier → DeleteColumn (all versions <= ts). ``kind`` overrides the type:
        DELETE (one version, needs ``ts``) or DELETE_FAMILY_VERSION (needs ``ts``).
        """
        if family is None:
            cell_type, family, qualifier = CellType.DELETE_FAMILY, b"", b""
        elif qualifier is None:
            cell_type, qualifier = CellType.DELETE_FAMILY, b""
        else:
            cell_type = CellType.DELETE_COLUMN
        if kind is not None:
            cell_type = kind
        if cell_type in (CellType.DELETE, CellType.DELETE_FAMILY_VERSION) and ts is None:
            raise ClusterError(f"a {cell_type.name} delete of row {row!r} needs an explicit timestamp")
        if cell_type == CellType.DELETE_FAMILY_VERSION:
            qualifier = b""
        stamp = LATEST_TIMESTAMP if ts is None else ts
        self.batch(table, [Cell(row, family, qualifier or b"", stamp, int(cell_type))])

    # -- admin ------------------------------------------------------------------------------------
    def flush(self, table: str | None = None) -> list[str]:
        """Flush the memstores of ``table`` (or every table) on every live server; return the new files."""
        files: list[str] = []
        if table:
            TableRegistry(self.fs, self.root).get(table)  # UnknownTable, not a silent no-op
        request = Admin_pb2.FlushTableRequest(table=table) if table else Admin_pb2.FlushTableRequest()
        for server in self.live_servers():
            try:
                response = self._call(server, "FlushTable", request, timeout=max(self.timeout_s, 120))
            except grpc.RpcError as exc:
                if exc.code() in RETRYABLE:
                    continue  # a dead server's edits come back through recovery
                raise_for_rpc_error(exc, f"region server {server}")
            files.extend(response.files)  # type: ignore[attr-defined]
        return files

    def roll_wal(self, server: str) -> str:
        """Roll ``server``'s WAL now; return the new WAL's name."""
        try:
            return str(self._call(server, "RollWALWriter", Admin_pb2.RollWALWriterRequest()).new_wal)  # type: ignore[attr-defined]
        except grpc.RpcError as exc:
            raise_for_rpc_error(exc, f"region server {server}")
        raise AssertionError("unreachable")  # pragma: no cover

    def server_info(self, server: str) -> dict[str, object]:
        """``{"server_name", "current_wal", "write_count"}`` as the server reports it."""
        try:
            info = self._call(server, "GetServerInfo", Admin_pb2.GetServerInfoRequest(), timeout=10)
        except grpc.RpcError as exc:
            raise_for_rpc_error(exc, f"region server {server}")
        return {"server_name": server, "current_wal": info.current_wal, "write_count": int(info.write_count)}  # type: ignore[attr-defined]

    def close(self) -> None:
        """Close channels, the pool and (when owned) the ZooKeeper client."""
        self._closed = True
        with self._lock:
            stubs, self._stubs = self._stubs, {}
        for channel, _ in stubs.values():
            channel.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        if self._zk_owned:
            with contextlib.suppress(Exception):
                self.zk.stop()
                self.zk.close()

    def __enter__(self) -> ClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Retry(Exception):
    """A server did not answer; its cells go to another server."""
