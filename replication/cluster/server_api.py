"""What the sink and the RPC service use of their region server (``HRegionServer`` is the one).

An interface, so that ``regionserver.py`` builds its sink and its gRPC service and they in turn know
the server only through this, with no import back (regionserver -> service/sink -> server_api).
"""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from kazoo.client import KazooClient

from replication.config import Config
from replication.tables.descriptors import TableDescriptor
from replication.wal.cell_columns import CellColumns
from replication.wal.model import Cell


class RegionServerHost(Protocol):
    """A live region server as its sink and RPC service see it."""

    server_name: str  # ``host,port,startcode``
    cluster_key: str
    conf: Config
    zk: KazooClient
    token: str
    live_servers: list[str]
    wal: Any  # the FSHLog (current_name, entries_written), None before start

    def mutate(
        self,
        table: str,
        cells: list[Cell] | CellColumns,
        cluster_ids: list[uuid.UUID] | None = None,
        *,
        encoded: bytes | None = None,
        routing_epoch: int = 0,
    ) -> int:
        """Apply ``cells`` durably (WAL append + sync, then memstore); the sequence id."""
        ...

    def descriptor(self, table: str) -> TableDescriptor:
        """The table's descriptor (UnknownTable when there is none)."""
        ...

    def flush_all(self, table: str | None = None) -> list[Any]:
        """Flush every region (or those of ``table``); the flush results."""
        ...

    def roll_wal(self, force: bool = True) -> str:
        """Roll the WAL; the new WAL's name."""
        ...

    def replication_sink(self) -> Any:
        """The server's ReplicationSink."""
        ...
