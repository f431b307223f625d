"""The start of every HBase RPC connection: the 6-byte preamble, then the ConnectionHeader.

Client → server, once per connection (HBase ``RpcConnection.getConnectionHeaderPreamble`` and
``getConnectionHeader``; the server side is ``ServerRpcConnection.processPreamble`` and
``processConnectionHeader``)::

    "HBas" | version byte 0 | auth byte (80 SIMPLE, 81 KERBEROS, 82 DIGEST)
    int32 BE length | ConnectionHeader (Message#writeTo: NOT varint-delimited)

With SIMPLE authentication the server answers nothing when it accepts the header; when it refuses it,
it sends a ResponseHeader with call id -1 carrying the exception (e.g. UnknownServiceException) and
closes the connection. ``parse_preamble`` is the server side of the first six bytes (hbrep's HBase
RPC listener, ``server.py``).
"""

from __future__ import annotations

import struct

from replication.cluster.hbase_rpc.sasl import AUTH_KERBEROS  # the SASL exchange that follows it
from replication.proto import HBase_pb2, RPC_pb2

RPC_MAGIC = b"HBas"
RPC_VERSION = 0  # RpcServer.CURRENT_VERSION
AUTH_SIMPLE = 80  # AuthMethod.SIMPLE.code
ADMIN_SERVICE = "AdminService"
_I32 = struct.Struct(">i")


def preamble(auth_code: int = AUTH_SIMPLE) -> bytes:
    """The 6 bytes every connection begins with: ``HBas``, version 0 and the authentication code."""
    return RPC_MAGIC + bytes((RPC_VERSION, auth_code))


def connection_header(
    service_name: str, codec_class: str, user: str, version: HBase_pb2.VersionInfo | None = None
) -> RPC_pb2.ConnectionHeader:
    """The ConnectionHeader for ``service_name``, cells coded with ``codec_class``, as ``user`` (no compressor),
    with the client's ``version`` when given."""
    header = RPC_pb2.ConnectionHeader(
        user_info=RPC_pb2.UserInformation(effective_user=user),
        service_name=service_name,
        cell_block_codec_class=codec_class,
    )
    if version is not None:
        header.version_info.CopyFrom(version)
    return header


def connection_start(
    service_name: str, codec_class: str, user: str, version: HBase_pb2.VersionInfo | None = None
) -> bytes:
    """Everything a client writes before its first call: preamble + int32 length + ConnectionHeader."""
    header = connection_header(service_name, codec_class, user, version).SerializeToString()
    return preamble() + _I32.pack(len(header)) + header


class BadPreamble(ValueError):
    """The first bytes of a connection are not an HBase RPC preamble hbrep accepts (says why)."""


def parse_preamble(data: bytes) -> int:
    """The authentication code of a 6-byte preamble (``ServerRpcConnection.processPreamble``).

    Raises BadPreamble when the magic or the version is wrong, or the authentication is neither SIMPLE nor
    KERBEROS (hbrep's HBase RPC listener has no DIGEST: HBase's delegation tokens are refused).
    """
    if len(data) != 6 or data[:4] != RPC_MAGIC:
        raise BadPreamble(f"not an HBase RPC connection (first bytes {data[:6]!r}, want {RPC_MAGIC!r})")
    if data[4] != RPC_VERSION:
        raise BadPreamble(f"HBase RPC version {data[4]} is not supported (want {RPC_VERSION})")
    if data[5] not in (AUTH_SIMPLE, AUTH_KERBEROS):
        what = f"only SIMPLE, {AUTH_SIMPLE}, and KERBEROS, {AUTH_KERBEROS}"
        raise BadPreamble(f"authentication code {data[5]} is not supported ({what})")
    return data[5]
