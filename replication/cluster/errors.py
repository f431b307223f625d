"""Errors of the embedded cluster and of the sink RPC (all HbrepError: one line naming the culprit)."""

from __future__ import annotations

from replication.errors import HbrepError


class ClusterError(HbrepError):
    """A cluster-level failure: no cluster recorded, no live region server, a process that did not start."""


class NoClusterInfo(ClusterError):
    """No hbrep cluster is recorded under the cluster key's znode parent."""


class RegionServerAborted(ClusterError):
    """A region server hit an unrecoverable error (e.g. could not register a new WAL in a queue)."""


class StaleRoutingEpoch(ClusterError):
    """A write was routed in an older routing epoch than the region server is in (HBase's
    NotServingRegionException: the row may belong to another server now); the client re-reads the
    routing and sends it again. Applying it would put an edit of the old routing after the server's
    barrier for the new one, where a serial peer's checker no longer waits for it."""


class SinkError(HbrepError):
    """Base of every failure a sink RPC reports back to the replication source."""


class SinkUnavailable(SinkError):
    """The sink could not be reached, or did not answer in time (connect error, timeout, shutdown)."""


class SinkAuthError(SinkError):
    """The sink refused the cluster token (gRPC UNAUTHENTICATED)."""


class TableNotFoundOnPeer(SinkError):
    """The peer cluster has no such table (HBase's TableNotFoundException on the sink)."""

    def __init__(self, message: str, tables: list[str] | None = None):
        super().__init__(message)
        self.tables: list[str] = list(tables or [])


class NoSuchColumnFamilyOnPeer(SinkError):
    """A table on the peer lacks a column family (HBase's NoSuchColumnFamilyException)."""

    def __init__(self, message: str, families: list[tuple[str, str]] | None = None):
        super().__init__(message)
        # (table, family) pairs that are missing on the peer
        self.families: list[tuple[str, str]] = list(families or [])
