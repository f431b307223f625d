"""HBaseSinkClient: ship WAL entries to one region server of a real HBase cluster, as HBase's source does.

The same interface as hbrep's gRPC ``SinkClient`` (``replicate(entries, cluster id)``, ``close``), so
the endpoint's retry and bad-sink rules apply unchanged. Each call is
``AdminService.ReplicateWALEntry(ReplicateWALEntryRequest{entry = WALEntry{key, associated_cell_count},
replicationClusterId, sourceBaseNamespaceDirPath, sourceHFileArchiveDirPath})`` with the cells in the
RPC cell block (``ReplicationProtobufUtil.buildReplicateWALEntryRequest``); the two directories, when the
source gives them, tell the peer's sink where to copy a bulk load's store files from. The keys carry
the source cluster ids (``cluster_ids``) the filter chain marked, so the peer's WAL keeps them and never
ships the edits back. Authentication is SIMPLE, or Kerberos (SASL GSSAPI) with ``kerberos``.
"""

from __future__ import annotations

import getpass
import ssl
from collections.abc import Sequence

from replication.cluster.errors import SinkError, SinkUnavailable
from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC_WITH_TAGS, build_cell_block, check_codec
from replication.cluster.hbase_rpc.connection import ConnectionFailed, RemoteCallError, RpcConnection
from replication.cluster.hbase_rpc.preamble import ADMIN_SERVICE
from replication.cluster.hbase_rpc.remote_errors import remote_error
from replication.cluster.hbase_rpc.rpc_kerberos import RpcKerberos
from replication.cluster.rpc import address_of
from replication.proto import Admin_pb2
from replication.wal.cell_codec import iter_cell_spans
from replication.wal.key_codec import key_to_pb
from replication.wal.model import WALKey

REPLICATE_WAL_ENTRY = "ReplicateWALEntry"
Entries = Sequence[tuple[WALKey, int, bytes | memoryview]]


def build_request(
    entries: Entries, replication_cluster_id: str, source_hfile_dirs: tuple[str, str] | None = None
) -> Admin_pb2.ReplicateWALEntryRequest:
    """The request message: one WALEntry per entry (key + associated_cell_count), no cells inside it;
    ``source_hfile_dirs`` = (sourceBaseNamespaceDirPath, sourceHFileArchiveDirPath) when given."""
    request = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId=replication_cluster_id)
    if source_hfile_dirs is not None:
        request.sourceBaseNamespaceDirPath, request.sourceHFileArchiveDirPath = source_hfile_dirs
    for key, count, _cells in entries:
        entry = request.entry.add(associated_cell_count=count)
        entry.key.CopyFrom(key_to_pb(key, count))
    return request


def table_families(entries: Entries) -> tuple[list[str], list[tuple[str, str]]]:
    """The tables and (table, family) pairs the entries write (to name what a peer says is missing)."""
    tables: dict[str, None] = {}
    families: dict[tuple[str, str], None] = {}
    for key, count, cells in entries:
        table = key.table_name.decode("utf-8", "replace").removeprefix("default:")
        tables[table] = None
        for family, _start, _end in iter_cell_spans(cells, count):
            families[(table, family.decode("utf-8", "replace"))] = None
    return list(tables), list(families)


class HBaseSinkClient:
    """A connection to one HBase region server (``host,port,startcode`` or ``host:port``) for replication."""

    def __init__(
        self,
        server_name_or_address: str,
        timeout_s: float = 60.0,
        *,
        codec_class: str = KEY_VALUE_CODEC_WITH_TAGS,
        user: str | None = None,
        tls: ssl.SSLContext | None = None,
        replication_cluster_id: str = "",
        source_hfile_dirs: tuple[str, str] | None = None,
        kerberos: RpcKerberos | None = None,
    ):
        """``replication_cluster_id`` (HBase's ``hbase.replication.cluster.id``) replaces the id the caller
        passes to :meth:`replicate` when set; ``source_hfile_dirs`` go in every request."""
        self.server = server_name_or_address
        self.replication_cluster_id = replication_cluster_id
        self.source_hfile_dirs = source_hfile_dirs
        host, port = address_of(server_name_or_address).rsplit(":", 1)
        self.codec_class = check_codec(codec_class)
        self._connection = RpcConnection(
            host, int(port), ADMIN_SERVICE, self.codec_class, user or getpass.getuser(), timeout_s, tls=tls,
            kerberos=kerberos,
        )  # fmt: skip

    def replicate(self, entries: Entries, replication_cluster_id: str, bulk_load: bool = False) -> None:
        """Send the entries (key, cell count, framed cells); returns once the sink applied them, else SinkError.
        Every request names the source's directories when known, as HBase's source does (``bulk_load`` unused)."""
        request = build_request(entries, self.replication_cluster_id or replication_cluster_id, self.source_hfile_dirs)
        cell_block = build_cell_block(((count, cells) for _key, count, cells in entries), self.codec_class)
        try:
            self._connection.call(REPLICATE_WAL_ENTRY, request, Admin_pb2.ReplicateWALEntryResponse, cell_block)
        except ConnectionFailed as exc:
            raise SinkUnavailable(f"sink {self.server} unavailable: {exc}") from None
        except RemoteCallError as exc:
            tables, families = table_families(entries)
            raise remote_error(exc.exception, self.server, tables, families) from None

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def __enter__(self) -> HBaseSinkClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["HBaseSinkClient", "SinkError", "build_request"]
