"""Calls of HBase 2.x's ClientService (Get, Mutate, Scan, Multi) and AdminService (CompactRegion,
GetRegionInfo) on one region server, over hbrep's HBase RPC connection.

Connections name the ``KeyValueCodec`` (HBase's client default, ``hbase.client.default.rpc.codec``), so the
server puts result cells in the response's cell block: a Get's ``Result.associated_cell_count`` cells, a
Scan's ``cells_per_result[i]`` cells for its i-th row, a Multi's per action, in order. Requests carry their
cells inside the protobuf (``MutationProto.column_value``), which every server accepts.
"""

from __future__ import annotations

import getpass
import ssl
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.message import Message

from replication.cluster.hbase_rpc.cell_block import KEY_VALUE_CODEC
from replication.cluster.hbase_rpc.connection import ConnectionFailed, RemoteCallError, RpcConnection
from replication.cluster.hbase_rpc.preamble import ADMIN_SERVICE
from replication.cluster.hbase_rpc.rpc_kerberos import RpcKerberos
from replication.errors import HbrepError
from replication.hbase.client_errors import ServerUnreachable, remote_call_error
from replication.proto import Client_pb2
from replication.wal.cell_codec import decode_cells
from replication.wal.model import Cell

CLIENT_SERVICE = "ClientService"


def region_specifier(region_name: bytes) -> Client_pb2.RegionSpecifier:
    """A RegionSpecifier naming the region by its full name."""
    return Client_pb2.RegionSpecifier(type=Client_pb2.RegionSpecifier.REGION_NAME, value=region_name)


def result_cells(result: Client_pb2.Result, cell_block: bytes, offset: int) -> tuple[list[Cell], int]:
    """One Result's cells: those in the protobuf, else its ``associated_cell_count`` cells of the cell block
    from ``offset``; returns them and the offset after them."""
    if result.cell:
        return [
            Cell(c.row, c.family, c.qualifier, c.timestamp, c.cell_type, c.value, c.tags) for c in result.cell
        ], offset
    count = result.associated_cell_count
    if not count:
        return [], offset
    return decode_cells(cell_block, count, offset)


@dataclass
class ScanBatch:
    """One Scan call's answer: the rows (each its cells), the scanner id, whether the region and the whole
    scan have more (``more_results_in_region``, ``more_results``), the lease (``ttl`` ms)."""

    rows: list[list[Cell]]
    scanner_id: int
    more_in_region: bool
    more_results: bool
    ttl_ms: int
    heartbeat: bool


class RegionServer:
    """ClientService and AdminService connections to one region server (``host:port``), opened on first use."""

    def __init__(
        self, host: str, port: int, timeout_s: float, user: str | None = None, tls: ssl.SSLContext | None = None,
        kerberos: RpcKerberos | None = None,
    ):  # fmt: skip
        self.host, self.port = host, port
        self.address = f"{host}:{port}"
        user = user or getpass.getuser()
        self._client = RpcConnection(host, port, CLIENT_SERVICE, KEY_VALUE_CODEC, user, timeout_s, tls=tls,
                                     kerberos=kerberos)  # fmt: skip
        self._admin = RpcConnection(host, port, ADMIN_SERVICE, KEY_VALUE_CODEC, user, timeout_s, tls=tls,
                                    kerberos=kerberos)  # fmt: skip

    def _call(
        self, connection: RpcConnection, method: str, request: Message, response_type: type[Message], table: str
    ) -> tuple[Message, bytes]:
        try:
            return connection.call_with_cells(method, request, response_type)
        except ConnectionFailed as exc:
            raise ServerUnreachable(f"region server {self.address} unreachable: {exc}") from None
        except RemoteCallError as exc:
            raise remote_call_error(exc.exception, self.address, table) from None

    def get(self, region_name: bytes, get: Client_pb2.Get, table: str) -> list[Cell]:
        """The cells of one Get in the region (empty when the row has none)."""
        request = Client_pb2.GetRequest(region=region_specifier(region_name), get=get)
        response, block = self._call(self._client, "Get", request, Client_pb2.GetResponse, table)
        return result_cells(response.result, block, 0)[0]  # type: ignore[attr-defined]

    def mutate(self, region_name: bytes, mutation: Client_pb2.MutationProto, table: str) -> None:
        """Apply one Put or Delete to the region (durable when it returns)."""
        request = Client_pb2.MutateRequest(region=region_specifier(region_name), mutation=mutation)
        self._call(self._client, "Mutate", request, Client_pb2.MutateResponse, table)

    def scan(self, request: Client_pb2.ScanRequest, table: str) -> ScanBatch:
        """One Scan call (open, next, renew or close, as ``request`` says)."""
        response, block = self._call(self._client, "Scan", request, Client_pb2.ScanResponse, table)
        rows: list[list[Cell]] = []
        offset = 0
        if response.results:  # type: ignore[attr-defined]
            for result in response.results:  # type: ignore[attr-defined]
                cells, offset = result_cells(result, block, offset)
                rows.append(cells)
        else:
            for count in response.cells_per_result:  # type: ignore[attr-defined]
                cells, offset = decode_cells(block, count, offset) if count else ([], offset)
                rows.append(cells)
        more_results = response.more_results if response.HasField("more_results") else True  # type: ignore[attr-defined]
        more_in_region = (
            response.more_results_in_region if response.HasField("more_results_in_region") else more_results  # type: ignore[attr-defined]
        )
        return ScanBatch(rows, response.scanner_id, more_in_region, more_results, response.ttl,  # type: ignore[attr-defined]
                         response.heartbeat_message)  # type: ignore[attr-defined]  # fmt: skip

    def multi(
        self, actions: Sequence[tuple[bytes, Sequence[Client_pb2.MutationProto]]], table: str
    ) -> list[Client_pb2.RegionActionResult]:
        """One Multi call: per (region name, mutations), a non-atomic RegionAction; the results in that order."""
        request = Client_pb2.MultiRequest()
        for region_name, mutations in actions:
            region_action = request.regionAction.add(region=region_specifier(region_name), atomic=False)
            for index, mutation in enumerate(mutations):
                region_action.action.add(index=index, mutation=mutation)
        response, _block = self._call(self._client, "Multi", request, Client_pb2.MultiResponse, table)
        results = list(response.regionActionResult)  # type: ignore[attr-defined]
        if len(results) != len(actions):
            raise HbrepError(f"region server {self.address}: Multi answered {len(results)} of {len(actions)} regions")
        return results

    def compact_region(self, region_name: bytes, major: bool, table: str, family: bytes = b"") -> None:
        """Ask for a (major) compaction of the region (queued on the server; returns at once)."""
        request = Client_pb2.CompactRegionRequest(region=region_specifier(region_name), major=major)
        if family:
            request.family = family
        self._call(self._admin, "CompactRegion", request, Client_pb2.CompactRegionResponse, table)

    def compaction_state(self, region_name: bytes, table: str) -> int:
        """The region's GetRegionInfoResponse.CompactionState (NONE=0, MINOR, MAJOR, MAJOR_AND_MINOR)."""
        request = Client_pb2.GetRegionInfoRequest(region=region_specifier(region_name), compaction_state=True)
        response, _ = self._call(self._admin, "GetRegionInfo", request, Client_pb2.GetRegionInfoResponse, table)
        return int(response.compaction_state)  # type: ignore[attr-defined]

    def close(self) -> None:
        """Close both connections."""
        self._client.close()
        self._admin.close()


class RegionServers:
    """One :class:`RegionServer` per address, shared by the locator and the table client."""

    def __init__(
        self, timeout_s: float, user: str | None = None, tls: ssl.SSLContext | None = None,
        kerberos: RpcKerberos | None = None,
    ):  # fmt: skip
        self.timeout_s, self.user, self.tls, self.kerberos = timeout_s, user, tls, kerberos
        self._servers: dict[str, RegionServer] = {}
        self._lock = threading.Lock()

    def get(self, host: str, port: int) -> RegionServer:
        """The server at ``host:port`` (created on first use)."""
        address = f"{host}:{port}"
        with self._lock:
            server = self._servers.get(address)
            if server is None:
                server = RegionServer(host, port, self.timeout_s, self.user, self.tls, self.kerberos)
                self._servers[address] = server
            return server

    def close(self) -> None:
        """Close every connection."""
        with self._lock:
            for server in self._servers.values():
                server.close()
            self._servers.clear()
