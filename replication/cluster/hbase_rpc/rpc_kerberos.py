"""Kerberos on hbrep's HBase RPC client, configured with HBase's own keys.

- ``hbase.security.authentication=kerberos``: every connection to an HBase master or region server starts
  with the KERBEROS preamble and a SASL GSSAPI exchange (``sasl.py``, ``gssapi.py``) as hbrep's identity
  (``hbase.client.kerberos.principal`` + ``hbase.client.keytab.file``, or the ticket cache;
  ``replication/kerberos.py``);
- the server's principal: ``hbase.master.kerberos.principal`` for MasterService,
  ``hbase.regionserver.kerberos.principal`` for ClientService and AdminService (HBase's ``SecurityInfo``),
  ``_HOST`` replaced by the lower-cased canonical name of the host connected to (Hadoop's
  ``SecurityUtil.getServerPrincipal`` with ``InetAddress.getCanonicalHostName``), or by the host as named when
  ``hbase.unsafe.client.kerberos.hostname.disable.reversedns=true``;
- ``hbase.rpc.protection``: ``authentication`` (default), ``integrity`` or ``privacy`` (comma-separated
  list allowed), the SASL quality of protection asked for;
- ``hbase.ipc.client.fallback-to-simple-auth-allowed`` (default false): whether a server that answers
  "use SIMPLE" is accepted.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from replication.cluster.hbase_rpc.sasl import sasl_qops
from replication.config import Config
from replication.errors import ConfigError
from replication.kerberos import PROTECTION_KEY, KerberosIdentity, kerberos_identity

MASTER_PRINCIPAL_KEY = "hbase.master.kerberos.principal"
REGIONSERVER_PRINCIPAL_KEY = "hbase.regionserver.kerberos.principal"
FALLBACK_KEY = "hbase.ipc.client.fallback-to-simple-auth-allowed"
NO_REVERSE_DNS_KEY = "hbase.unsafe.client.kerberos.hostname.disable.reversedns"
CRYPTO_AES_KEY = "hbase.rpc.crypto.encryption.aes.enabled"  # AES instead of the GSS wrap under privacy
MASTER_SERVICES = ("MasterService", "RegionServerStatusService", "LockService", "HbckService")
HOST_PATTERN = "_HOST"


def server_principal(pattern: str, hostname: str) -> str:
    """``pattern`` with a ``_HOST`` instance replaced by ``hostname`` lower-cased
    (``SecurityUtil.getServerPrincipal``)."""
    parts = pattern.replace("@", "/").split("/")
    if len(parts) != 3 or parts[1] != HOST_PATTERN:
        return pattern
    return f"{parts[0]}/{hostname.lower()}@{parts[2]}"


def canonical_host(host: str) -> str:
    """The canonical name of ``host`` as Java's ``InetAddress.getCanonicalHostName`` gives it (the reverse
    lookup of its address), else ``host`` itself."""
    try:
        return socket.gethostbyaddr(socket.gethostbyname(host))[0]
    except OSError:
        return host


@dataclass(frozen=True)
class RpcKerberos:
    """How hbrep authenticates to HBase servers with Kerberos (see the module docstring)."""

    identity: KerberosIdentity
    master_principal: str
    regionserver_principal: str
    qops: tuple[str, ...]
    fallback_allowed: bool = False
    reverse_dns: bool = True
    crypto_aes: bool = False  # with privacy, ask the server for AES (crypto_aes.py) in the ConnectionHeader

    def principal_for(self, service: str, host: str) -> tuple[str, str]:
        """(service, host) of the server principal for ``service`` on ``host`` (``hbase``, ``rs1.example.com``);
        ConfigError naming the key when it is not set or not ``primary/instance@REALM``."""
        key = MASTER_PRINCIPAL_KEY if service in MASTER_SERVICES else REGIONSERVER_PRINCIPAL_KEY
        pattern = self.master_principal if key == MASTER_PRINCIPAL_KEY else self.regionserver_principal
        if not pattern:
            raise ConfigError(
                f"hbase.security.authentication=kerberos needs {key}: the servers' principal (e.g. hbase/_HOST@REALM)"
            )
        hostname = canonical_host(host) if self.reverse_dns and HOST_PATTERN in pattern else host
        principal = server_principal(pattern, hostname)
        parts = principal.replace("@", "/").split("/")
        if len(parts) != 3 or not all(parts):
            raise ConfigError(f"{key}={pattern}: Kerberos principal {principal!r} is not primary/instance@REALM")
        return parts[0], parts[1]


def rpc_kerberos(conf: Config) -> RpcKerberos | None:
    """The Kerberos settings of HBase RPC connections, None when ``hbase.security.authentication`` is simple;
    ConfigError naming the key when ``hbase.rpc.protection`` is not one HBase knows."""
    identity = kerberos_identity(conf)
    if identity is None:
        return None
    try:
        qops = sasl_qops(conf.get_str(PROTECTION_KEY, "authentication"))
    except ValueError as exc:
        raise ConfigError(f"{PROTECTION_KEY}: {exc}") from None
    return RpcKerberos(
        identity=identity,
        master_principal=conf.get_str(MASTER_PRINCIPAL_KEY, "").strip(),
        regionserver_principal=conf.get_str(REGIONSERVER_PRINCIPAL_KEY, "").strip(),
        qops=qops,
        fallback_allowed=conf.get_bool(FALLBACK_KEY, False),
        reverse_dns=not conf.get_bool(NO_REVERSE_DNS_KEY, False),
        crypto_aes=conf.get_bool(CRYPTO_AES_KEY, False),
    )
