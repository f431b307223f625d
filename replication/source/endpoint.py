"""HBaseInterClusterReplicationEndpoint: ship a batch until the peer acks it (the shipper is shipper.py).

Spec §4.5 / §5.2. A batch is split into ``n = min(hbase.replication.source.maxthreads, entries/100 + 1,
sinks)`` lists by ``abs(hash(encoded region name)) % n`` (one region always lands in one list, so its
edits stay in order), the lists go out in parallel, and only failed lists are retried, each to a newly
chosen random sink. Failures sleep ``sleepforretries × multiplier`` (the multiplier grows by one per
failure up to ``maxretriesmultiplier``).

Departure from HBase, for batch runs: HBase retries forever inside a long-lived region server. A ship
task retries at most ``hbrep.source.ship.max.attempts`` times and then fails its queue with one clear
error; the positions of batches already acknowledged are still committed, and the next cycle resumes.
A rejected cluster token is not retried at all.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from replication.cluster import errors
from replication.cluster.sink_client import SinkClient
from replication.config import Config
from replication.errors import HbrepError
from replication.source.filters import ShipEntry, table_name_str
from replication.source.sink_manager import NoSinksAvailable, ReplicationSinkManager
from replication.tls import rpc_client_tls

LOG = logging.getLogger(__name__)


class ShipFailed(HbrepError):
    """A batch could not be shipped within the retry budget (the message says why)."""


def split_by_region(entries: Sequence[ShipEntry], n: int) -> list[list[ShipEntry]]:
    """``n`` lists; an entry goes to ``crc32(encoded region) % n`` so a region keeps its order."""
    if n <= 1:
        return [list(entries)]
    lists: list[list[ShipEntry]] = [[] for _ in range(n)]
    for entry in entries:
        lists[zlib.crc32(entry.key.encoded_region_name) % n].append(entry)
    return [chunk for chunk in lists if chunk]


class ReplicationEndpoint:
    """Ships batches of one peer's entries to its sinks, with HBase's retry and backoff rules."""

    def __init__(
        self,
        peer_id: str,
        sink_manager: ReplicationSinkManager,
        token: str,
        conf: Config,
        local_cluster_id: str,
        *,
        client_factory: Callable[[str, str, float], object] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        drop_entries_of_missing_table: Callable[[str], bool] | None = None,
    ):
        self.peer_id = peer_id
        self.sinks = sink_manager
        self.token = token
        self.local_cluster_id = local_cluster_id
        self.sleep_for_retries_ms = conf.get_int("replication.source.sleepforretries")
        self.max_multiplier = conf.get_int("replication.source.maxretriesmultiplier")
        self.max_threads = conf.get_int("hbase.replication.source.maxthreads")
        self.timeout_s = conf.get_int("replication.source.shipedits.timeout") / 1000.0
        self.max_attempts = conf.get_int("hbrep.source.ship.max.attempts", 10)
        self.drop_on_deleted_table = conf.get_bool("hbase.replication.drop.on.deleted.table")
        self.drop_on_deleted_family = conf.get_bool("hbase.replication.drop.on.deleted.columnfamily")
        self._table_gone_on_source = drop_entries_of_missing_table
        if client_factory is None:
            tls = rpc_client_tls(conf)  # hbrep.rpc.tls.*: the peer's sinks are reached over TLS
            codec = conf.get_str("hbase.replication.rpc.codec")  # KeyValueCodec ships no tags

            def client_factory(sink: str, token: str, timeout_s: float) -> SinkClient:
                return SinkClient(sink, token, timeout_s, tls=tls, codec_class=codec)

        self._client_factory = client_factory
        self._clients: dict[str, object] = {}
        self._lock = threading.Lock()
        self._sleep = sleep
        self.failed_batches = 0

    def _client(self, sink: str):
        with self._lock:
            client = self._clients.get(sink)
            if client is None:
                client = self._client_factory(sink, self.token, self.timeout_s)
                self._clients[sink] = client
            return client

    def close(self) -> None:
        """Close every sink channel."""
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()

    def _ship_list(self, entries: list[ShipEntry]) -> None:
        with self._lock:
            sink = self.sinks.get_sink()
        try:
            tuples = [(e.key, e.cell_count, e.cell_bytes) for e in entries]
            if any(e.hfiles for e in entries):  # bulk-load markers: the client names the source's directories
                self._client(sink).replicate(tuples, self.local_cluster_id, bulk_load=True)
            else:
                self._client(sink).replicate(tuples, self.local_cluster_id)
        except errors.SinkError:
            with self._lock:
                self.sinks.report_bad_sink(sink)
            raise
        with self._lock:
            self.sinks.report_sink_success(sink)

    def replicate(self, entries: Sequence[ShipEntry]) -> None:
        """Ship every entry or raise ShipFailed; entries of a region stay in order."""
        if not self.sinks.sinks:
            with self._lock:
                self.sinks.choose_sinks()
        n = max(1, min(self.max_threads, len(entries) // 100 + 1, len(self.sinks.sinks)))
        pending = split_by_region(entries, n)
        multiplier = 1
        attempt = 0
        while pending:
            attempt += 1
            failures: list[tuple[list[ShipEntry], Exception]] = []
            if len(pending) == 1:
                try:
                    self._ship_list(pending[0])
                except (errors.SinkError, NoSinksAvailable) as exc:
                    failures.append((pending[0], exc))
            else:
                with ThreadPoolExecutor(max_workers=len(pending)) as pool:
                    futures = [(chunk, pool.submit(self._ship_list, chunk)) for chunk in pending]
                    for chunk, future in futures:
                        try:
                            future.result()
                        except (errors.SinkError, NoSinksAvailable) as exc:
                            failures.append((chunk, exc))
            if not failures:
                return
            self.failed_batches += 1
            pending = []
            for chunk, exc in failures:
                if isinstance(exc, errors.SinkAuthError):
                    raise ShipFailed(f"peer {self.peer_id} rejected this cluster's token: {exc}") from None
                kept = self._maybe_drop(chunk, exc)
                if kept:
                    pending.append(kept)
            if not pending:
                return
            last = failures[-1][1]
            if attempt >= self.max_attempts:
                raise ShipFailed(f"peer {self.peer_id}: giving up after {attempt} attempts: {last}") from None
            LOG.warning(
                "Peer %s: ship attempt %d failed (%s); sleeping %d ms",
                self.peer_id,
                attempt,
                last,
                self.sleep_for_retries_ms * multiplier,
            )
            with self._lock:
                if isinstance(last, (errors.TableNotFoundOnPeer, errors.NoSuchColumnFamilyOnPeer)):
                    self.sinks.choose_sinks()
                else:  # a sink went away or timed out: has the peer's server list changed?
                    self.sinks.refresh()
            self._sleep(self.sleep_for_retries_ms * multiplier / 1000.0)
            if multiplier < self.max_multiplier:
                multiplier += 1

    def _maybe_drop(self, chunk: list[ShipEntry], exc: Exception) -> list[ShipEntry]:
        """Apply hbase.replication.drop.on.deleted.table/.columnfamily: drop edits of tables gone here too."""
        if isinstance(exc, errors.TableNotFoundOnPeer) and self.drop_on_deleted_table:
            missing = set(exc.tables)
        elif isinstance(exc, errors.NoSuchColumnFamilyOnPeer) and self.drop_on_deleted_family:
            missing = {table for table, _family in exc.families}
        else:
            return chunk
        gone = {t for t in missing if self._table_gone_on_source is not None and self._table_gone_on_source(t)}
        if not gone:
            return chunk
        LOG.warning("Dropping edits of %s: deleted on the source and missing on peer %s", sorted(gone), self.peer_id)
        return [e for e in chunk if table_name_str(e.key.table_name) not in gone]
