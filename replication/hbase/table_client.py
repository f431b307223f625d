"""HBaseTableClient: Get, Scan, Put, Delete, Multi and compactions on a real HBase 2.x, found from its
cluster key, over HBase's own RPC (ClientService and AdminService on the region servers).

Every call goes to the region holding its row (``MetaLocator``). When the region is not there any more
(moved, split, closing, its server down) the location is dropped, hbase:meta read again and the call retried
after HBase's backoff pause, up to ``hbase.client.retries.number`` tries; a table or family that does not
exist fails at once with one line. Cells come back as hbrep's ``Cell``; rows as (row, cells) in key order.
"""

from __future__ import annotations

import getpass
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from kazoo.client import KazooClient

from replication.cluster.hbase_rpc.rpc_kerberos import rpc_kerberos
from replication.cluster.hbase_rpc.tls import client_context
from replication.config import Config
from replication.errors import HbrepError
from replication.hbase.client_errors import RegionNotHere, Retryable, action_error
from replication.hbase.client_service import RegionServer, RegionServers
from replication.hbase.meta_locator import MetaLocator
from replication.hbase.mutations import cell_mutation, delete_mutation, put_mutation
from replication.hbase.region_names import RegionLocation
from replication.hbase.retries import RetryPolicy
from replication.hbase.scanner import ScanOptions, TableScanner
from replication.proto import Client_pb2
from replication.tables.errors import UnknownFamily
from replication.wal.model import Cell, CellType
from replication.zk.client import connect, zk_options
from replication.zk.cluster_key import ClusterKey

LOG = logging.getLogger(__name__)
T = TypeVar("T")
COMPACTION_NONE = 0


class HBaseTableClient:
    """A client of one real HBase's tables (see the module docstring); close it, or use it as a context."""

    def __init__(self, cluster_key: str | ClusterKey, conf: Config | None = None, *, zk: KazooClient | None = None,
                 timeout_s: float | None = None, user: str | None = None):  # fmt: skip
        self.conf = conf or Config.load(env={})
        self.key = ClusterKey.parse(cluster_key) if isinstance(cluster_key, str) else cluster_key
        self._zk_owned = zk is None
        self.zk = zk or connect(self.key, **zk_options(self.conf))
        self.timeout_s = timeout_s if timeout_s is not None else self.conf.get_int("hbase.rpc.timeout") / 1000
        self.retry = RetryPolicy.from_conf(self.conf)
        self.servers = RegionServers(
            self.timeout_s, user or getpass.getuser(), client_context(self.conf), rpc_kerberos(self.conf)
        )
        self.locator = MetaLocator(self.zk, self.key.znode_parent, self.servers, self.conf, self.retry)

    @classmethod
    def if_real_hbase(cls, cluster_key: ClusterKey, conf: Config) -> HBaseTableClient | None:
        """A client when ``cluster_key`` names a running real HBase (no hbrep cluster info, a master znode:
        ``registry.is_live_hbase``), else None (an hbrep cluster, or nothing there yet)."""
        from replication.hbase.registry import is_live_hbase
        from replication.zk.layout import ZNodePaths

        zk = connect(cluster_key, **zk_options(conf))
        try:
            live = is_live_hbase(zk, ZNodePaths(conf, parent=cluster_key.znode_parent), conf)
        except BaseException:
            zk.stop()
            zk.close()
            raise
        if not live:
            zk.stop()
            zk.close()
            return None
        client = cls(cluster_key, conf, zk=zk)
        client._zk_owned = True
        return client

    # -- retries ------------------------------------------------------------------------------------
    def _with_region(self, table: str, row: bytes, call: Callable[[RegionLocation, RegionServer], T]) -> T:
        refresh = False
        last: Retryable | None = None
        for attempt in range(self.retry.tries):
            if attempt:
                time.sleep(self.retry.pause_s(attempt - 1))
            location, server = self.locator.locate(table, row, refresh)
            try:
                return call(location, server)
            except Retryable as exc:
                LOG.info("%s row %r: %s (try %d)", table, row, exc, attempt + 1)
                last, refresh = exc, exc.relocate
                if attempt == 0 and isinstance(exc, RegionNotHere):
                    self.locator.check_enabled(table)  # TableNotEnabled: closed regions, not worth retrying
        raise HbrepError(f"{table}: gave up after {self.retry.tries} tries: {last}")

    # -- reads --------------------------------------------------------------------------------------
    def get(self, table: str, row: bytes, *, families: Sequence[bytes] = (), versions: int = 1,
            time_range: tuple[int, int] | None = None) -> list[Cell]:  # fmt: skip
        """The cells of ``row`` (newest first per column, up to ``versions``), [] when it has none."""
        get = Client_pb2.Get(row=row, max_versions=versions)
        for family in families:
            get.column.add(family=family)
        if time_range is not None:
            get.time_range.CopyFrom(Client_pb2.TimeRange(**{"from": time_range[0], "to": time_range[1]}))
        return self._with_region(table, row, lambda loc, server: server.get(loc.region_name, get, table))

    def scanner(self, table: str, options: ScanOptions | None = None) -> TableScanner:
        """A scan of ``table`` (iterate it for (row, cells); its ``restarts`` counts reopened scanners)."""
        self.locator.regions(table)  # UnknownTable before the first row is asked for
        return TableScanner(
            self.locator.locate, table, options or ScanOptions(), self.retry, self.locator.check_enabled
        )

    def scan(self, table: str, options: ScanOptions | None = None) -> Iterator[tuple[bytes, list[Cell]]]:
        """(row, cells) of ``table`` in key order, each row once, across regions."""
        return iter(self.scanner(table, options))

    def count(self, table: str) -> int:
        """How many rows ``table`` has (rows with at least one visible cell)."""
        return sum(1 for _ in self.scan(table, ScanOptions(caching=5000)))

    # -- writes -------------------------------------------------------------------------------------
    def mutate(self, table: str, mutation: Client_pb2.MutationProto) -> None:
        """Apply one MutationProto to its row's region (durable in the WAL when it returns)."""
        self._with_region(table, mutation.row, lambda loc, server: server.mutate(loc.region_name, mutation, table))

    def put(self, table: str, row: bytes, family: bytes, qualifier: bytes, value: bytes, ts: int | None = None) -> None:
        """One Put cell (timestamp = server clock unless ``ts``)."""
        self.mutate(table, put_mutation(row, [(family, qualifier, value, ts)]))

    def delete(self, table: str, row: bytes, family: bytes | None = None, qualifier: bytes | None = None,
               ts: int | None = None, kind: CellType | None = None) -> None:  # fmt: skip
        """A delete as the shell's delete/deleteall (see ``mutations.delete_mutation``)."""
        self.mutate(table, delete_mutation(row, family, qualifier, ts, kind))

    def batch(self, table: str, cells: Iterable[Cell]) -> int:
        """Write ``cells`` (Puts and delete markers) with Multi calls, one per region server holding their
        rows, retrying the actions a region refused where it is now; returns how many cells were written."""
        return self.multi(table, [cell_mutation(cell) for cell in cells])

    def multi(self, table: str, mutations: Sequence[Client_pb2.MutationProto]) -> int:
        """Apply ``mutations`` grouped per region server (one Multi call each, a RegionAction per region)."""
        pending = list(mutations)
        refresh = False
        for attempt in range(self.retry.tries):
            if attempt:
                time.sleep(self.retry.pause_s(attempt - 1))
            if refresh:
                self.locator.invalidate(table)
            groups: dict[str, dict[bytes, list[Client_pb2.MutationProto]]] = defaultdict(lambda: defaultdict(list))
            servers: dict[str, RegionServer] = {}
            for mutation in pending:
                location, server = self.locator.locate(table, mutation.row)
                groups[server.address][location.region_name].append(mutation)
                servers[server.address] = server
            failed: list[Client_pb2.MutationProto] = []
            last: HbrepError | None = None
            for address, regions in groups.items():
                actions = list(regions.items())
                try:
                    results = servers[address].multi(actions, table)
                except Retryable as exc:
                    failed.extend(m for _region, ms in actions for m in ms)
                    last = exc
                    continue
                for (_region, ms), result in zip(actions, results, strict=True):
                    if result.HasField("exception"):
                        error = action_error(result.exception.name, result.exception.value, address, table)
                        if not isinstance(error, Retryable):
                            raise error
                        failed.extend(ms)
                        last = error
                        continue
                    for roe in result.resultOrException:
                        if roe.HasField("exception"):
                            error = action_error(roe.exception.name, roe.exception.value, address, table)
                            if not isinstance(error, Retryable):
                                raise error
                            failed.append(ms[roe.index])
                            last = error
            if not failed:
                return len(mutations)
            LOG.info("%s: %d of %d mutations to retry: %s", table, len(failed), len(pending), last)
            pending, refresh = failed, True
        raise HbrepError(f"{table}: {len(pending)} mutations not applied after {self.retry.tries} tries: {last}")

    # -- compactions --------------------------------------------------------------------------------
    def compact(self, table: str, major: bool = False, family: bytes = b"", wait_s: float | None = None) -> int:
        """Ask every region of ``table`` for a (major) compaction (AdminService.CompactRegion on its server, as
        ``Admin.compact``/``majorCompact`` do); with ``wait_s``, wait until no region reports one running.
        Returns the number of regions asked. HbrepError when the wait runs out."""
        regions = self.locator.regions(table, refresh=True)
        for region in regions:
            self._with_region(
                table, region.info.start_key, lambda loc, srv: srv.compact_region(loc.region_name, major, table, family)
            )
        if wait_s is not None:
            deadline = time.monotonic() + wait_s
            time.sleep(0.5)
            while any(self._compacting(table, region.info.start_key) for region in regions):
                if time.monotonic() > deadline:
                    raise HbrepError(f"compaction of {table} still running after {wait_s:.0f}s")
                time.sleep(0.5)
        return len(regions)

    def _compacting(self, table: str, row: bytes) -> bool:
        state = self._with_region(table, row, lambda loc, server: server.compaction_state(loc.region_name, table))
        return state != COMPACTION_NONE

    # -- lifetime -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Close every connection (and the ZooKeeper client when this client opened it)."""
        self.servers.close()
        if self._zk_owned:
            self.zk.stop()
            self.zk.close()

    def __enter__(self) -> HBaseTableClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["HBaseTableClient", "ScanOptions", "UnknownFamily"]
