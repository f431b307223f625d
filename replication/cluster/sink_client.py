"""SinkClient: what the ship job calls to send a batch of WAL entries to one sink region server.

Cheap to create (one gRPC channel, no ZooKeeper); safe to use from Spark executors. Every call carries
the peer cluster's token. Errors: SinkUnavailable (connect/timeout/server stopping), SinkAuthError
(bad token), TableNotFoundOnPeer (``.tables``), NoSuchColumnFamilyOnPeer (``.families``), SinkError
(anything else); all are HbrepError with a one-line message naming the sink.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from replication.cluster import rpc
from replication.cluster.errors import (
    NoSuchColumnFamilyOnPeer,
    SinkAuthError,
    SinkError,
    SinkUnavailable,
    TableNotFoundOnPeer,
)
from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC_WITH_TAGS, build_cell_block, check_codec
from replication.cluster.replicate_wire import REPLICATE_WAL_ENTRY_METHOD, serialize_request
from replication.proto import Admin_pb2
from replication.tls import TlsSettings
from replication.wal.key_codec import key_to_pb
from replication.wal.model import WALKey

__all__ = [
    "NoSuchColumnFamilyOnPeer",
    "SinkAuthError",
    "SinkClient",
    "SinkError",
    "SinkUnavailable",
    "TableNotFoundOnPeer",
    "build_request",
]

UNAVAILABLE_CODES = frozenset(
    (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)
)


def build_request(
    entries: Sequence[tuple[WALKey, int, bytes | memoryview]],
    replication_cluster_id: str,
    codec_class: str = KEY_VALUE_CODEC_WITH_TAGS,
) -> Admin_pb2.ReplicateWALEntryRequest:
    """A ReplicateWALEntryRequest: keys as WALEntry messages, the cells concatenated in ``cell_block`` as
    ``codec_class`` (hbase.replication.rpc.codec) writes them: ``KeyValueCodec`` drops each cell's tags."""
    request = Admin_pb2.ReplicateWALEntryRequest(replicationClusterId=replication_cluster_id)
    blocks: list[tuple[int, bytes | memoryview]] = []
    for key, count, cells in entries:
        entry = request.entry.add(associated_cell_count=count)
        entry.key.CopyFrom(key_to_pb(key, count))
        blocks.append((count, cells))
    request.cell_block = build_cell_block(blocks, codec_class)
    return request


class SinkClient:
    """A connection to one sink (``host,port,startcode`` or ``host:port``) of a peer cluster."""

    def __init__(
        self,
        server_name_or_address: str,
        token: str,
        timeout_s: float = 60.0,
        tls: TlsSettings | None = None,
        codec_class: str = KEY_VALUE_CODEC_WITH_TAGS,
        source_hfile_dirs: tuple[str, str] | None = None,
    ):
        """``tls`` (``replication.tls.rpc_client_tls``): a TLS channel; None: plain text. ``codec_class``:
        how the cells are written (hbase.replication.rpc.codec). ``source_hfile_dirs``: where the sink reads
        the store files of bulk-load markers from (sent with requests that carry one)."""
        self.codec_class = check_codec(codec_class)
        self.source_hfile_dirs = source_hfile_dirs
        self.server = server_name_or_address
        self.address = rpc.address_of(server_name_or_address)
        self.timeout_s = timeout_s
        self._metadata = ((rpc.AUTH_METADATA, token),)
        self._channel = rpc.open_channel(self.address, tls)
        # ReplicateWALEntry with the request's bytes written by replicate_wire (the cell block copied once)
        self._replicate = self._channel.unary_unary(
            REPLICATE_WAL_ENTRY_METHOD,
            request_serializer=None,
            response_deserializer=Admin_pb2.ReplicateWALEntryResponse.FromString,
        )

    def replicate(
        self, entries: Sequence[tuple[WALKey, int, bytes | memoryview]], replication_cluster_id: str, bulk_load=False
    ) -> None:
        """Send the entries (key, cell count, encoded cells as in the WAL); returns once the sink made them durable.
        ``bulk_load``: an entry is a bulk-load marker (the request then names the source's directories)."""
        dirs = self.source_hfile_dirs if bulk_load else None
        request = serialize_request(entries, replication_cluster_id, self.codec_class, dirs)
        try:
            self._replicate(request, timeout=self.timeout_s, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise _map_error(exc, self.server) from None

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def __enter__(self) -> SinkClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _map_error(exc: grpc.RpcError, server: str) -> SinkError:
    code = exc.code()
    details = (exc.details() or code.name).splitlines()[0]
    trailers = dict(exc.trailing_metadata() or ())
    kind = trailers.get(rpc.ERROR_KIND)
    if code in UNAVAILABLE_CODES:
        return SinkUnavailable(f"sink {server} unavailable: {code.name}: {details}")
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return SinkAuthError(f"sink {server} refused the cluster token ({details})")
    if kind == rpc.TABLE_NOT_FOUND:
        tables = [t for t in str(trailers.get(rpc.ERROR_TABLES, "")).split(",") if t]
        return TableNotFoundOnPeer(f"sink {server}: {details}", tables)
    if kind == rpc.NO_SUCH_FAMILY:
        pairs = [tuple(p.rsplit(":", 1)) for p in str(trailers.get(rpc.ERROR_FAMILIES, "")).split(",") if ":" in p]
        return NoSuchColumnFamilyOnPeer(f"sink {server}: {details}", pairs)  # type: ignore[arg-type]
    return SinkError(f"sink {server} failed: {code.name}: {details}")
