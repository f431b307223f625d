"""Where a real HBase's regions are: hbase:meta's server from ZooKeeper, a table's regions from hbase:meta.

As HBase 2.x's client (``ZKConnectionRegistry.getMetaRegionLocations``, ``AsyncNonMetaRegionLocator``):

- ``<parent>/meta-region-server`` (``zookeeper.znode.metaserver``) holds, behind RecoverableZooKeeper's
  metadata prefix, ``PBUF`` + ZooKeeper.proto's ``MetaRegionServer{server}``: the region server of
  hbase:meta's one region, ``hbase:meta,,1``;
- a table's regions are the hbase:meta rows ``<table>,<startkey>,<regionid>.<encoded>.``, read with one
  Scan of family ``info`` over ``[<table>,, <table>-)``; split parents and offline regions are skipped;
- the locations are cached per table, and dropped when a call says the region is not there
  (NotServingRegionException, RegionMovedException, RegionOpeningException, a server down): the next
  lookup reads hbase:meta again (and ZooKeeper again when hbase:meta's own server fails). Lookups retry
  with HBase's backoff while a region has no server (in transition), up to ``hbase.client.retries.number``.
"""

from __future__ import annotations

import bisect
import logging
import posixpath
import threading

from google.protobuf.message import DecodeError
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from replication.config import Config
from replication.errors import HbrepError
from replication.hbase.client_errors import RegionNotHere, Retryable
from replication.hbase.client_service import RegionServer, RegionServers
from replication.hbase.region_names import (
    CATALOG_FAMILY,
    META_REGION_NAME,
    META_TABLE,
    RegionLocation,
    meta_row_bounds,
    parse_meta_row,
    table_name_bytes,
)
from replication.hbase.retries import RetryPolicy
from replication.hbase.scanner import RegionScanner, ScanOptions
from replication.proto import Client_pb2, HBase_pb2
from replication.tables.errors import TableNotEnabled, UnknownTable
from replication.zk import codec
from replication.zk.acl import zk_access

LOG = logging.getLogger(__name__)
META_ZNODE_KEY = "zookeeper.znode.metaserver"
TABLE_FAMILY, STATE_QUALIFIER = b"table", b"state"  # hbase:meta row <table>: table:state = TableState


class NoMetaLocation(HbrepError):
    """ZooKeeper does not say where hbase:meta is (no real HBase, or its master has not assigned it yet)."""


def parse_meta_region_server(data: bytes | None, what: str = "meta-region-server") -> tuple[str, int, int]:
    """(host, port, start code) of the ``meta-region-server`` value; BadZNodeData naming ``what`` otherwise."""
    return codec.parse_server_znode(data, Client_pb2.MetaRegionServer, "server", what, "hbase:meta's")


class MetaLocator:
    """Region locations of a real HBase's tables (see the module docstring), cached until a call fails."""

    def __init__(self, zk: KazooClient, parent: str, servers: RegionServers, conf: Config | None = None,
                 retry: RetryPolicy | None = None):  # fmt: skip
        self.zk, self.servers = zk, servers
        name = conf.get_str(META_ZNODE_KEY, "meta-region-server") if conf is not None else "meta-region-server"
        self.meta_znode = posixpath.join(parent, name)
        self.retry = retry or RetryPolicy.from_conf(conf)
        self._meta: tuple[str, int, int] | None = None
        self._tables: dict[str, list[RegionLocation]] = {}
        self._lock = threading.Lock()
        self.meta_reads = 0  # hbase:meta scans made (a relocation makes one more)

    # -- hbase:meta ---------------------------------------------------------------------------------
    def meta_server(self) -> tuple[str, int, int]:
        """(host, port, start code) of hbase:meta's region server, from ZooKeeper (cached)."""
        if self._meta is None:
            with zk_access(self.meta_znode):
                try:
                    data, _ = self.zk.get(self.meta_znode)
                except NoNodeError:
                    raise NoMetaLocation(f"no {self.meta_znode} in ZooKeeper: not a running HBase 2.x") from None
            self._meta = parse_meta_region_server(data, self.meta_znode)
        return self._meta

    def _read_regions(self, table: str) -> list[RegionLocation]:
        start, stop = meta_row_bounds(table)
        host, port, _code = self.meta_server()
        scan = ScanOptions(start, stop, families=(CATALOG_FAMILY,)).to_proto()
        scanner = RegionScanner(self.servers.get(host, port), META_REGION_NAME, scan, META_TABLE, 1000)
        self.meta_reads += 1
        locations = []
        try:
            for cells in scanner:
                location = parse_meta_row(cells[0].row, cells)
                if location is not None and location.info.table == table_name_bytes(table):
                    locations.append(location)
        finally:
            scanner.close()
        return sorted(locations, key=lambda loc: loc.info.start_key)

    def regions(self, table: str, refresh: bool = False) -> list[RegionLocation]:
        """Every region of ``table`` in key order with its server; UnknownTable when hbase:meta has none.

        A region without a server is returned as it is (host ""); :meth:`locate` retries those.
        """
        table_name_bytes(table)  # IllegalTableName before any call
        with self._lock:
            if refresh:
                self._tables.pop(table, None)
            cached = self._tables.get(table)
        if cached is not None:
            return cached
        for attempt in self.retry.attempts():
            try:
                found = self._read_regions(table)
                break
            except Retryable as exc:
                LOG.info("reading hbase:meta for %s: %s", table, exc)
                self._meta = None  # hbase:meta may have moved: ZooKeeper again
                if attempt + 1 >= self.retry.tries:
                    raise HbrepError(f"hbase:meta unreadable after {attempt + 1} tries: {exc}") from None
        if not found:
            raise UnknownTable(f"table {table} does not exist")
        with self._lock:
            self._tables[table] = found
        return found

    def check_enabled(self, table: str) -> None:
        """TableNotEnabled when hbase:meta's ``table:state`` of ``table`` says DISABLED or DISABLING (its
        regions are closed: HBase's client gives up on them the same way instead of retrying)."""
        host, port, _code = self.meta_server()
        get = Client_pb2.Get(row=table_name_bytes(table))
        get.column.add(family=TABLE_FAMILY, qualifier=[STATE_QUALIFIER])
        cells = self.servers.get(host, port).get(META_REGION_NAME, get, META_TABLE)
        if not cells:
            return
        value = codec.strip_metadata(cells[0].value) or b""
        state = HBase_pb2.TableState()
        try:
            state.ParseFromString(value.removeprefix(codec.PB_MAGIC))
        except DecodeError:
            return
        if state.state in (HBase_pb2.TableState.DISABLED, HBase_pb2.TableState.DISABLING):
            raise TableNotEnabled(f"table {table} is disabled")

    def invalidate(self, table: str) -> None:
        """Drop ``table``'s cached locations (the next lookup reads hbase:meta)."""
        with self._lock:
            self._tables.pop(table, None)

    # -- one row --------------------------------------------------------------------------------------
    def cached_location(self, table: str, row: bytes, refresh: bool = False) -> RegionLocation:
        """The region of ``table`` holding ``row`` per the cache (read from hbase:meta when absent)."""
        regions = self.regions(table, refresh)
        index = bisect.bisect_right([r.info.start_key for r in regions], row) - 1
        location = regions[max(index, 0)]
        if not location.info.holds(row):  # a hole in hbase:meta (a split half not written yet)
            raise RegionNotHere(f"no region of {table} holds row {row!r} yet")
        if not location.host:
            raise RegionNotHere(f"region {location.info.encoded_name} of {table} is not assigned")
        return location

    def locate(self, table: str, row: bytes, refresh: bool = False) -> tuple[RegionLocation, RegionServer]:
        """The region holding ``row`` and its server, retrying with backoff while it is in transition."""
        last: Retryable | None = None
        for attempt in self.retry.attempts():
            try:
                location = self.cached_location(table, row, refresh=refresh or attempt > 0)
                return location, self.servers.get(location.host, location.port)
            except RegionNotHere as exc:
                last = exc
                if attempt == 0:
                    self.check_enabled(table)
        raise HbrepError(f"{table}: no region server holds row {row!r} after {self.retry.tries} tries: {last}")
