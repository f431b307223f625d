"""What the client and the server share about the RPC: token metadata, error mapping, cell blocks.

Errors travel as gRPC status codes plus a ``hbrep-error`` trailing metadata entry naming the kind:
UNAUTHENTICATED "bad cluster token"; NOT_FOUND + TableNotFoundException (``hbrep-tables``: names);
FAILED_PRECONDITION + NoSuchColumnFamilyException (``hbrep-families``: ``table:family`` list);
INVALID_ARGUMENT for other bad input; UNAVAILABLE when the server is stopping or aborted.

With ``hbrep.rpc.tls.enabled`` (``replication/tls.py``) servers listen with TLS only and every client
opens a TLS channel (:func:`open_channel`); a plain-text client gets no answer (UNAVAILABLE).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

import grpc

from replication.proto import HBase_pb2
from replication.tls import TlsSettings

AUTH_METADATA = "authorization"
ROUTING_EPOCH = "hbrep-routing-epoch"  # the routing epoch a client routed a write in (serial replication)
ERROR_KIND = "hbrep-error"
ERROR_TABLES = "hbrep-tables"
ERROR_FAMILIES = "hbrep-families"
TABLE_NOT_FOUND = "TableNotFoundException"
NO_SUCH_FAMILY = "NoSuchColumnFamilyException"
NOT_SERVING = "NotServingRegionException"  # a write routed in an older routing epoch than the server's
BAD_TOKEN = "bad cluster token"
MAX_MESSAGE = 256 * 1024 * 1024  # hbase.ipc.max.request.size

CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE),
    ("grpc.max_receive_message_length", MAX_MESSAGE),
]


def address_of(server_name_or_address: str) -> str:
    """``host,port,startcode`` or ``host:port`` → ``host:port`` for a gRPC channel."""
    if "," in server_name_or_address:
        host, port, _ = server_name_or_address.split(",")
        return f"{host}:{port}"
    return server_name_or_address


def server_credentials(tls: TlsSettings) -> grpc.ServerCredentials:
    """The server's certificate and key; with ``client.auth``, client certificates must chain to ``ca``."""
    return grpc.ssl_server_credentials(
        [(tls.read("key"), tls.read("cert"))],
        root_certificates=tls.read("ca") if tls.client_auth else None,
        require_client_auth=tls.client_auth,
    )


def open_channel(address: str, tls: TlsSettings | None) -> grpc.Channel:
    """A channel to ``host:port``: TLS (server verified against ``ca``, our certificate presented when
    set) when ``tls`` is given, plain text otherwise."""
    if tls is None:
        return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.read("ca"), private_key=tls.read("key"), certificate_chain=tls.read("cert")
    )
    return grpc.secure_channel(address, credentials, options=CHANNEL_OPTIONS)


def uuid_to_pb(value: uuid.UUID) -> HBase_pb2.UUID:
    """HBase's UUID message: the 128-bit value as most/least significant unsigned 64-bit halves."""
    return HBase_pb2.UUID(most_sig_bits=value.int >> 64, least_sig_bits=value.int & (2**64 - 1))


def uuid_from_pb(pb: HBase_pb2.UUID) -> uuid.UUID:
    return uuid.UUID(int=(pb.most_sig_bits << 64) | pb.least_sig_bits)


def uuids_to_pb(values: Iterable[uuid.UUID]) -> list[HBase_pb2.UUID]:
    return [uuid_to_pb(v) for v in values]
