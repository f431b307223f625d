"""HRegionServer: one process of the embedded cluster (``python -m replication.cluster.regionserver``).

Start-up, in this order: bind the gRPC port on ``hbase.regionserver.ipc.address`` (default 127.0.0.1;
server name = ``<hbase.regionserver.hostname or 127.0.0.1>,<port>,<start ms>``) and the HBase RPC port
beside it (``hbrep.regionserver.hbase.rpc.*``: ReplicateWALEntry from a real HBase source, see
``cluster/hbase_registry.py``),
create the ephemeral ``<hbrep root>/starting/<servername>`` znode (failover does not take a starting server
for dead), open the first WAL (registered in every peer's queue before anything is written to it), write the
pid file ``<root>/.hbrep/rs/<servername>.pid``, then create the ephemeral ``<parent>/rs/<servername>`` znode
and delete the starting one
(and, with the HBase RPC listener, ``<parent>/hbrep-hbase-rpc/rs/<host,hbaseRpcPort,start ms>``).

Write path (``mutate``): check the table and families against the descriptor, fill LATEST_TIMESTAMP
with the server clock, expand whole-row deletes, append one WAL entry per request (scopes from the
descriptor, families with scope != 0 only; cluster ids as given), fsync, insert into the memstore,
then acknowledge. A chore thread rolls the WAL (size, period), flushes memstores (size, interval),
archives WALs whose edits are all flushed, and enforces ``hbase.regionserver.maxlogs``.

SIGTERM: flush every memstore, close the WAL cleanly, delete the live znode, exit 0.
A failed queue registration on roll aborts the process (exit 1), as HBase's RS does.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from replication.cluster import hbase_registry
from replication.cluster.errors import ClusterError, RegionServerAborted, StaleRoutingEpoch
from replication.cluster.gc_tuning import tune_gc
from replication.cluster.hbase_rpc import tls as hbase_rpc_tls
from replication.cluster.hbase_rpc.gssapi_server import listener_kerberos
from replication.cluster.hbase_rpc.server import HBaseRpcServer
from replication.cluster.info import ClusterInfo, cluster_token, local_state_dir, read_cluster_info
from replication.cluster.region import HRegion
from replication.cluster.region_routing import LATEST_TIMESTAMP
from replication.cluster.routing_epochs import RoutingEpochs
from replication.cluster.service import build_server
from replication.cluster.sink import ReplicationSink
from replication.cluster.wal_group import FSHLog
from replication.config import Config, replication_disabled_reason
from replication.errors import ConfigError, HbrepError
from replication.fs import FileSystem, get_filesystem
from replication.kerberos import KerberosError
from replication.process_memory import keep_freed_memory
from replication.processes import write_pid_file
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.errors import TableNotEnabled
from replication.tables.names import TableName
from replication.tls import rpc_server_tls
from replication.wal.cell_columns import CellColumns
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.zk.client import connect, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import LiveServerStorage
from replication.zk.layout import ZNodePaths
from replication.zk.migration import migrate_legacy_znodes
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.serial_barriers import describe_epoch

LOG = logging.getLogger("replication.cluster.regionserver")
LOOPBACK = "127.0.0.1"
VALID_TYPES = frozenset(
    int(t) for t in (CellType.PUT, CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY,
                     CellType.DELETE_FAMILY_VERSION)
)  # fmt: skip
CHORE_INTERVAL_KEY = "hbrep.regionserver.chore.interval.ms"


def check_region_server_settings(conf: Config) -> None:
    """Refuse, with one line naming the key, the HBase settings a region server reads at start that
    hbrep's region servers cannot honour (HBase reads them in FSHLog and Replication.initialize)."""
    if conf.get_bool("hbase.regionserver.wal.enablecompression"):
        raise ClusterError(
            "hbase.regionserver.wal.enablecompression=true: hbrep's region servers write uncompressed WALs "
            "(hbrep reads HBase's dictionary-compressed ones); set it to false"
        )


@dataclass
class FlushResult:
    """What one region flush wrote (None path when the memstore was empty)."""

    table: str
    region: str
    path: str | None
    cells: int
    max_sequence: int


def columns_need_no_change(desc: TableDescriptor, columns: CellColumns) -> bool:
    """True when ``HRegionServer.prepare_cells`` would give ``columns``' cells back as they are: every type
    a mutation, no LATEST_TIMESTAMP to fill in, no whole-row delete (empty family). Raises UnknownFamily
    naming the table and family, as prepare_cells does, for a family the table lacks."""
    families = columns.families()
    if b"" in families or not VALID_TYPES.issuperset(columns.types()) or columns.has_timestamp(LATEST_TIMESTAMP):
        return False
    for family in families:
        desc.family(family)  # UnknownFamily
    return True


def pid_file(root: str, server_name: str) -> str:
    """``<local state>/rs/<servername>.pid`` (``root`` as recorded; see ``local_state_dir``): how
    ``cluster stop`` and ``rs kill`` find the process."""
    return os.path.join(local_state_dir(root), "rs", f"{server_name}.pid")


def roll_size(conf: Config) -> int:
    """``hbase.regionserver.hlog.blocksize`` x ``hbase.regionserver.logroll.multiplier`` (bytes)."""
    return int(
        conf.get_int("hbase.regionserver.hlog.blocksize") * conf.get_float("hbase.regionserver.logroll.multiplier")
    )


class HRegionServer:
    """The region server's state and write path; ``serve`` runs it until stopped."""

    def __init__(self, cluster_key: str, conf: Config, *, zk: KazooClient | None = None):
        self.conf = conf
        self.key = ClusterKey.parse(cluster_key)
        self.cluster_key = str(self.key)
        self.paths = ZNodePaths(conf, parent=self.key.znode_parent)
        self.zk = zk or connect(self.key, **zk_options(conf))
        self.zk_owned = zk is None
        self.info: ClusterInfo = read_cluster_info(self.zk, self.paths)
        migrate_legacy_znodes(self.zk, self.paths)  # its queue journal lives under hbrep's root now
        self.fs: FileSystem
        self.fs, self.root = get_filesystem(self.info.root)
        self.token = cluster_token(self.fs, self.root, conf)
        self.registry = TableRegistry(self.fs, self.root)
        self.queues = ReplicationQueueStorage(self.zk, self.paths)
        self.start_code = int(time.time() * 1000)
        self.server_name = ""
        self.regions: dict[str, HRegion] = {}
        self._regions_lock = threading.Lock()
        self.wal: FSHLog | None = None
        self.epochs: RoutingEpochs | None = None  # serial replication's barriers (routing_epochs.py)
        self.stopped = threading.Event()
        self.aborted: str | None = None
        self._wake = threading.Event()
        self._known_peers: set[str] = set()
        # hbase.replication false: this server keeps no replication queues (HBase 1.x starts no
        # replication service then); WALs are written, rolled and archived as always
        check_region_server_settings(conf)
        self.replication_off = replication_disabled_reason(conf)
        self.live_servers: list[str] = []
        self.flush_size = conf.get_int("hbase.hregion.memstore.flush.size")
        self.flush_interval_ms = conf.get_int("hbase.regionserver.optionalcacheflushinterval")
        self.max_logs = conf.get_int("hbase.regionserver.maxlogs")
        self.chore_interval = conf.get_int(CHORE_INTERVAL_KEY, 200) / 1000.0
        self.grpc_server = None
        self.hbase_rpc: HBaseRpcServer | None = None
        self.hbase_server_name = ""
        self._sink = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> str:
        """Bind the RPC port, open the first WAL, register as live; return the server name."""
        # Bind to hbase.regionserver.ipc.address (loopback by default) and advertise
        # hbase.regionserver.hostname (HBase's keys); port 0 = a free port (embedded clusters).
        bind = self.conf.get_str("hbase.regionserver.ipc.address", LOOPBACK) or LOOPBACK
        port_wanted = self.conf.get_int("hbase.regionserver.port", 0)
        self.grpc_server, port = build_server(self, f"{bind}:{port_wanted}", tls=rpc_server_tls(self.conf))
        advertised = (self.conf.get_str("hbase.regionserver.hostname", "") or LOOPBACK).lower()
        self.server_name = f"{advertised},{port},{self.start_code}"
        self._bind_hbase_rpc(bind, advertised)
        live_servers = LiveServerStorage(self.zk, self.paths)
        live_servers.ensure_roots()
        # before its WAL directory and queues exist: a failover pass in between must not take it for dead
        live_servers.announce_starting(self.server_name)
        self.wal = FSHLog(
            self.fs,
            self.root,
            self.server_name,
            roll_size=roll_size(self.conf),
            roll_period_ms=self.conf.get_int("hbase.regionserver.logroll.period"),
            pre_log_roll=self._pre_log_roll,
            separate_old_dir=self.conf.get_bool("hbase.separate.oldlogdir.by.regionserver"),
        )
        if self.replication_off:
            LOG.warning("region server %s registers no replication queues: %s", self.server_name, self.replication_off)
        self.wal.roll()
        self._known_peers = set(self.zk.get_children(self.paths.peers))
        self.zk.ChildrenWatch(self.paths.peers, self._on_peers_changed)
        # the first barrier is taken before the server is live, so no write routed to it precedes it
        self.epochs = RoutingEpochs(self.zk, self.paths, self.server_name, self.wal, self._open_sequences)
        self.epochs.start()
        self.zk.ChildrenWatch(self.paths.rs, self._on_servers_changed)
        self.grpc_server.start()
        os.makedirs(os.path.dirname(pid_file(self.info.root, self.server_name)), exist_ok=True)
        write_pid_file(Path(pid_file(self.info.root, self.server_name)), os.getpid())
        live_servers.register(self.server_name)
        live_servers.started(self.server_name)
        if self.hbase_rpc is not None:
            self.hbase_rpc.start()
            hbase_registry.register(self.zk, self.paths, self.hbase_server_name)
        threading.Thread(target=self._chore_loop, name="rs-chores", daemon=True).start()
        # import the Parquet writer now, off the start-up path, so the first flush does not pay for it
        threading.Thread(target=_warm_up, name="rs-warm-up", daemon=True).start()
        LOG.info("region server %s started (root %s)", self.server_name, self.root)
        return self.server_name

    def stop(self, flush: bool = True) -> None:
        """Stop cleanly: flush memstores, close the WAL (trailer), leave ZooKeeper, stop the RPC server."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        self._wake.set()
        if self.hbase_rpc is not None:  # leave HBase's list of sinks first, then close the port
            with contextlib.suppress(Exception):
                hbase_registry.unregister(self.zk, self.paths, self.hbase_server_name)
            self.hbase_rpc.stop()
        if self.grpc_server is not None:
            self.grpc_server.stop(grace=2).wait(5)
        if self._sink is not None:
            self._sink.close()
        try:
            if flush and self.aborted is None:
                self.flush_all()
            if self.wal is not None:
                self.wal.close()
                if flush and self.aborted is None:
                    self.archive_flushed_wals()
        finally:
            with contextlib.suppress(Exception):
                LiveServerStorage(self.zk, self.paths).unregister(self.server_name)
            with contextlib.suppress(OSError):
                os.remove(pid_file(self.info.root, self.server_name))
            if self.zk_owned:
                with contextlib.suppress(Exception):
                    self.zk.stop()
                    self.zk.close()
            LOG.info("region server %s stopped", self.server_name)

    def abort(self, reason: str) -> None:
        """HBase's abort: stop serving at once (no flush), leave the WALs for recovery."""
        LOG.error("ABORTING region server %s: %s", self.server_name, reason)
        self.aborted = reason
        self.stop(flush=False)

    def _bind_hbase_rpc(self, bind: str, advertised: str) -> None:
        """Bind the HBase RPC listener so a real HBase cluster can replicate into this one;
        RegionServerAborted when its port is taken.

        ``hbrep.regionserver.hbase.rpc.enabled``: ``true``, ``false``, or ``auto`` (the default): on
        unless hbrep's own RPC is TLS only (``hbrep.rpc.tls.enabled``) while this listener would still serve
        plain text. The listener speaks HBase's RPC without the cluster token (docs/security.md), in
        plain text unless ``hbase.server.netty.tls.enabled`` (then TLS, plain text too while
        ``hbase.server.netty.tls.supportplaintext``); a plain-text listener beside a TLS-only hbrep RPC is
        turned on knowingly (``true``). With ``hbase.security.authentication=kerberos`` it demands SASL GSSAPI
        as ``hbase.regionserver.kerberos.principal`` from ``hbase.regionserver.keytab.file``; without those keys
        it stays off under ``auto`` (a warning says why) and the server aborts under ``true``; a keytab that
        cannot serve aborts it (one line).
        """
        enabled = self.conf.get_str("hbrep.regionserver.hbase.rpc.enabled")
        tls = hbase_rpc_tls.server_context(self.conf)  # HBase's RPC TLS on the listener (hbase.server.netty.tls.*)
        plaintext = tls is None or self.conf.get_bool(hbase_rpc_tls.SUPPORT_PLAINTEXT)
        if enabled == "false" or (enabled == "auto" and self.conf.get_bool("hbrep.rpc.tls.enabled") and plaintext):
            LOG.info("HBase RPC listener off (hbrep.regionserver.hbase.rpc.enabled=%s)", enabled)
            return
        try:
            kerberos = listener_kerberos(self.conf, advertised)  # SASL GSSAPI of HBase's server keys, or None
        except ConfigError as exc:
            if enabled == "auto":  # hbrep's Kerberos identity is set, HBase's server keys are not: no listener
                LOG.warning("HBase RPC listener off (hbrep.regionserver.hbase.rpc.enabled=auto): %s", exc)
                return
            raise RegionServerAborted(f"HBase RPC listener: {exc}") from None
        wanted = self.conf.get_int("hbrep.regionserver.hbase.rpc.port")
        try:
            self.hbase_rpc = HBaseRpcServer(
                bind,
                wanted,
                lambda request: self.replication_sink().replicate_request(request),
                max_request=self.conf.get_int("hbase.ipc.max.request.size"),
                advertised_host=advertised,
                tls=tls,
                plaintext_allowed=plaintext,
                kerberos=kerberos,
            )
        except KerberosError as exc:
            raise RegionServerAborted(f"HBase RPC listener: {exc}") from None
        except OSError as exc:
            raise RegionServerAborted(f"could not bind the HBase RPC port {bind}:{wanted}: {exc.strerror}") from None
        self.hbase_server_name = hbase_registry.hbase_server_name(advertised, self.hbase_rpc.port, self.start_code)

    # -- replication hooks ------------------------------------------------------------------------
    def _pre_log_roll(self, wal_name: str) -> None:
        """Put the new WAL in every peer's queue (enabled or not) before the first append (spec §2);
        nothing when replication is disabled (``hbase.replication`` false)."""
        if self.replication_off:
            return
        for peer_id in self.zk.get_children(self.paths.peers):
            self.queues.add_wal(self.server_name, peer_id, wal_name)

    def _on_peers_changed(self, children: list[str]) -> bool | None:
        """A peer added later starts from this server's current WAL (spec §4.1)."""
        if self.stopped.is_set():
            return False
        new = set(children) - self._known_peers
        self._known_peers = set(children)
        if new and self.replication_off:
            LOG.warning("peer(s) %s added; no queue registered: %s", ", ".join(sorted(new)), self.replication_off)
        elif new and self.wal is not None:
            with self.wal.append_lock:
                for peer_id in sorted(new):
                    try:
                        self.queues.add_wal(self.server_name, peer_id, self.wal.current_name)
                    except Exception as exc:  # the peer may be removed again at once
                        LOG.warning("could not add WAL %s for new peer %s: %s", self.wal.current_name, peer_id, exc)
        return None

    def _on_servers_changed(self, children: list[str]) -> bool | None:
        if self.stopped.is_set():
            return False
        self.live_servers = sorted(children)
        if self.epochs is not None:
            self.epochs.servers_changed()
        return None

    def _open_sequences(self) -> dict[str, int]:
        """Each open region's next sequence id (its barrier, as HBase's open sequence number)."""
        with self._regions_lock:
            return {r.encoded_name: r.current_sequence() + 1 for r in self.regions.values()}

    # -- write path -------------------------------------------------------------------------------
    def descriptor(self, table: str) -> TableDescriptor:
        """The table's current descriptor (read each time, so an alter of scopes applies at once)."""
        return self.registry.get(table)

    def region_for(self, table: str) -> HRegion:
        """This server's region of ``table`` (created on first use)."""
        with self._regions_lock:
            region = self.regions.get(table)
            if region is None:
                region = HRegion(table, self.server_name, first_sequence=self.start_code * 1000)
                self.regions[table] = region
            return region

    def prepare_cells(self, desc: TableDescriptor, cells: list[Cell], now_ms: int) -> list[Cell]:
        """Validate types/families, set LATEST_TIMESTAMP to ``now_ms``, expand whole-row deletes.

        Raises UnknownFamily naming the table and family, or ClusterError for a bad cell type.
        """
        out: list[Cell] = []
        known: set[bytes] = set()  # families already checked in this request (profiled hot path)
        for cell in cells:
            if cell.type not in VALID_TYPES:
                raise ClusterError(f"table {desc.name}: cell type {cell.type} of row {cell.row!r} is not a mutation")
            ts = now_ms if cell.timestamp == LATEST_TIMESTAMP else cell.timestamp
            if cell.family == b"" and cell.type == CellType.DELETE_FAMILY:
                # Delete of a whole row: one DeleteFamily per family (HRegion.prepareDelete)
                for fam in desc.families.values():
                    out.append(Cell(cell.row, fam.name_bytes, b"", ts, int(CellType.DELETE_FAMILY)))
                continue
            if cell.family not in known:
                desc.family(cell.family)  # UnknownFamily
                known.add(cell.family)
            if ts != cell.timestamp:
                cell = Cell(cell.row, cell.family, cell.qualifier, ts, cell.type, cell.value, cell.tags)
            out.append(cell)
        return out

    def mutate(
        self,
        table: str,
        cells: list[Cell] | CellColumns,
        cluster_ids: list[uuid.UUID] | None = None,
        *,
        encoded: bytes | None = None,
        routing_epoch: int = 0,
    ) -> int:
        """Apply ``cells`` to ``table``: WAL append + fsync, then memstore; return the sequence id.

        Durable when it returns. Raises UnknownTable/UnknownFamily (nothing written) and
        RegionServerAborted when the WAL cannot be written. ``encoded`` = the cells' own encoding
        (the sink forwards shipped bytes); it is used only when no cell needed a change here.
        ``routing_epoch``: the epoch the client routed the write in; a newer one is entered first, an older
        one than this server's is refused (StaleRoutingEpoch, nothing written: the client routes again).
        Cells given as CellColumns with their ``encoded`` bytes go to the WAL and the memstore as they
        are when they need no change (the sink's case); else they are made Cells and prepared.
        """
        if self.stopped.is_set() or self.wal is None:
            raise RegionServerAborted(f"region server {self.server_name} is stopping")
        if routing_epoch and self.epochs is not None:
            self.epochs.on_client_epoch(routing_epoch)
        desc = self.descriptor(table)
        if not desc.enabled:
            raise TableNotEnabled(f"table {desc.name} is disabled")
        now_ms = int(time.time() * 1000)
        if isinstance(cells, CellColumns):
            if encoded is not None and len(cells) and columns_need_no_change(desc, cells):
                return self._append(desc, cells, cluster_ids, now_ms, encoded, routing_epoch)
            cells = cells.cells()
        prepared = self.prepare_cells(desc, cells, now_ms)
        if encoded is not None and (
            len(prepared) != len(cells) or any(p is not c for p, c in zip(prepared, cells, strict=False))
        ):
            encoded = None  # a timestamp was filled in or a row delete expanded: encode the result
        if not prepared:
            return 0
        return self._append(desc, prepared, cluster_ids, now_ms, encoded, routing_epoch)

    def _append(
        self,
        desc: TableDescriptor,
        cells: list[Cell] | CellColumns,
        cluster_ids: list[uuid.UUID] | None,
        now_ms: int,
        encoded: bytes | None,
        routing_epoch: int = 0,
    ) -> int:
        """One WAL entry of ``cells`` (prepared; CellColumns only with ``encoded``), synced, in the memstore;
        refused when routed in an older epoch than this server's (checked under the append lock, which
        every barrier is taken under: an applied write lies after the barriers of epochs it knew of)."""
        name = TableName.parse(desc.name)
        region = self.region_for(str(name))
        with self.wal.append_lock:
            if routing_epoch and self.epochs is not None and routing_epoch < self.epochs.epoch:
                raise StaleRoutingEpoch(
                    f"region server {self.server_name} is in routing epoch {describe_epoch(self.epochs.epoch)}, "
                    f"the write was routed in {describe_epoch(routing_epoch)}: route it again"
                )
            seq = region.next_sequence()
            key = WALKey(
                encoded_region_name=region.encoded_name.encode(),
                table_name=name.as_bytes(),
                log_sequence_number=seq,
                write_time=now_ms,
                scopes=desc.scopes_for_wal(),
                cluster_ids=list(cluster_ids or []),
            )
            size = len(encoded) if encoded is not None else None
            on_appended = lambda: region.add(cells, seq, size)  # noqa: E731
            if encoded is not None:
                txid = self.wal.append_encoded(key, len(cells), encoded, on_appended)
            else:
                assert isinstance(cells, list)
                txid = self.wal.append(Entry(key, cells), on_appended=on_appended)
        self.wal.sync(txid)
        if self.wal.current_length >= self.wal.roll_size or region.memstore_size >= self.flush_size:
            self._wake.set()
        return seq

    # -- flush, roll, archive ---------------------------------------------------------------------
    def flush_region(self, region: HRegion) -> FlushResult:
        """Write the region's memstore to a table file; afterwards its edits no longer need the WAL."""
        # pyarrow.parquet at the first flush (the sink imports pyarrow itself, at start)
        from replication.tables.table_files import memstore_to_arrow, write_arrow

        assert self.wal is not None
        with region.flush_lock:
            with self.wal.append_lock:
                snap = region.snapshot()
                txid = self.wal._txid
            if snap is None:
                return FlushResult(region.table, region.encoded_name, None, 0, region.flushed_sequence)
            try:
                self.wal.sync(txid)  # never put an edit in a table file before it is durable in the WAL
                arrow = memstore_to_arrow(snap.chunks)
                path = write_arrow(self.fs, self.root, region.table, region.encoded_name, arrow, snap.max_sequence)
            except BaseException:
                region.restore(snap)
                raise
            region.flushed_sequence = snap.max_sequence
            region.last_flush_ms = int(time.time() * 1000)
        LOG.info("flushed %d cells of %s to %s", arrow.num_rows, region.table, path)
        return FlushResult(region.table, region.encoded_name, path, arrow.num_rows, snap.max_sequence)

    def flush_all(self, table: str | None = None) -> list[FlushResult]:
        """Flush every region (or the regions of ``table``); archive WALs that became flushed."""
        wanted = str(TableName.parse(table)) if table is not None else None
        with self._regions_lock:
            regions = [r for t, r in self.regions.items() if wanted is None or t == wanted]
        results = [self.flush_region(r) for r in regions]
        if not self.stopped.is_set():
            self.archive_flushed_wals()
        return results

    def _flushed_sequence(self, encoded_region: str) -> int:
        with self._regions_lock:
            for region in self.regions.values():
                if region.encoded_name == encoded_region:
                    return region.flushed_sequence
        return 0

    def archive_flushed_wals(self) -> list[str]:
        """Archive every closed WAL whose edits are all in table files; return the archived names."""
        assert self.wal is not None
        done = []
        for name in self.wal.archivable(self._flushed_sequence):
            self.wal.archive(name)
            done.append(name)
        return done

    def roll_wal(self, force: bool = True) -> str:
        """Roll the WAL now (register the new one first); abort the server if registration fails."""
        assert self.wal is not None
        try:
            name = self.wal.roll(force=force)
        except RegionServerAborted as exc:
            self._abort_async(str(exc))
            raise
        self.archive_flushed_wals()
        return name

    def _abort_async(self, reason: str) -> None:
        threading.Thread(target=self.abort, args=(reason,), daemon=True).start()

    def run_chores(self) -> None:
        """One pass: roll on size/period, flush on size/interval, archive, enforce maxlogs."""
        assert self.wal is not None
        now = int(time.time() * 1000)
        if self.wal.should_roll(now):
            self.roll_wal(force=False)
        with self._regions_lock:
            regions = list(self.regions.values())
        flushed = False
        for region in regions:
            due = self.flush_interval_ms > 0 and now - region.last_flush_ms >= self.flush_interval_ms
            if region.memstore_size >= self.flush_size or (due and region.memstore):
                self.flush_region(region)
                flushed = True
        if flushed:
            self.archive_flushed_wals()
        # maxlogs: too many un-archived WALs -> flush the regions holding the oldest one back
        while len(self.wal.closed) > self.max_logs and not self.stopped.is_set():
            oldest = self.wal.closed[0]
            for encoded in self.wal.regions_of(oldest):
                for region in regions:
                    if region.encoded_name == encoded:
                        self.flush_region(region)
            if oldest not in self.archive_flushed_wals():
                break

    def _chore_loop(self) -> None:
        while not self.stopped.is_set():
            self._wake.wait(self.chore_interval)
            self._wake.clear()
            if self.stopped.is_set():
                return
            try:
                self.run_chores()
            except RegionServerAborted:
                return
            except Exception:
                LOG.exception("region server chore failed")

    def replication_sink(self) -> ReplicationSink:
        """The ReplicationSink of this server (created on first use)."""
        if self._sink is None:
            self._sink = ReplicationSink(self)
        return self._sink


def _warm_up() -> None:
    """Load the table-file writer (pyarrow) in the background, so the first flush does not wait for it."""
    with contextlib.suppress(Exception):
        import replication.tables.table_files  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    """Process entry point: start, write the server name to --ready-file, serve until SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m replication.cluster.regionserver")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--conf", default=None, help="hbase-site.xml for this server")
    parser.add_argument("--ready-file", default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    try:
        conf = Config.load(args.conf, env={})
        server = HRegionServer(args.cluster, conf)
        name = server.start()
    except HbrepError as exc:
        LOG.error("region server did not start: %s", exc)
        print(f"hbrep: error: {exc}", file=sys.stderr)
        return 1

    tune_gc(conf)  # this process only: in-process servers (tests, benches) leave their host's gc alone
    keep_freed_memory()  # likewise: the sink's requests reuse the heap (process_memory.py)
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as out:
            out.write(name)
        os.replace(tmp, args.ready_file)
    done = threading.Event()

    def on_term(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    while not done.wait(0.5):
        if server.stopped.is_set():  # aborted
            return 1
    server.stop(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
