"""TLS settings of hbrep's connections, read from the configuration (``hbrep.rpc.tls.*``, ``hbrep.zk.tls.*``).

Region-server RPC (gRPC), ``hbrep.rpc.tls.``:

- ``enabled``: serve and connect with TLS only (a plain-text client is refused by the server);
- ``cert`` / ``key``: PEM certificate chain and private key of this process (the server's identity;
  clients present them as their certificate when set);
- ``ca``: PEM bundle of the CA(s) trusted to sign the other side's certificate (servers' for clients;
  clients' for servers with ``client.auth``); empty = the system's default roots for clients;
- ``client.auth``: servers demand a client certificate signed by ``ca`` (mutual TLS).

ZooKeeper client sessions, ``hbrep.zk.tls.``: ``enabled``, ``ca`` (verifies the server), ``cert`` / ``key``
(presented when ZooKeeper demands client certificates). The cluster key then names the secure client port.

Each setting is checked when the configuration is built (``replication/config.py``); the combinations
are checked here, with one :class:`~replication.errors.ConfigError` naming the keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replication.config import Config
from replication.errors import ConfigError

RPC_PREFIX = "hbrep.rpc.tls."
ZK_PREFIX = "hbrep.zk.tls."


@dataclass(frozen=True)
class TlsSettings:
    """Where the PEM files are, for one kind of connection (None: plain text)."""

    cert: str
    key: str
    ca: str
    client_auth: bool
    prefix: str

    def read(self, which: str) -> bytes | None:
        """The bytes of ``cert``/``key``/``ca`` (None when not set); ConfigError naming the key if unreadable."""
        path = getattr(self, which)
        if not path:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read {self.prefix}{which} file {path}: {exc.strerror}") from None


# Each key spelled out whole, so that a search for a key finds where it is read.
_KEYS = {
    RPC_PREFIX: ("hbrep.rpc.tls.enabled", "hbrep.rpc.tls.cert", "hbrep.rpc.tls.key", "hbrep.rpc.tls.ca"),
    ZK_PREFIX: ("hbrep.zk.tls.enabled", "hbrep.zk.tls.cert", "hbrep.zk.tls.key", "hbrep.zk.tls.ca"),
}
RPC_CLIENT_AUTH = "hbrep.rpc.tls.client.auth"


def _settings(conf: Config, prefix: str) -> TlsSettings | None:
    enabled, cert, key, ca = _KEYS[prefix]
    if not conf.get_bool(enabled, False):
        return None
    return TlsSettings(
        cert=conf.get_str(cert, ""),
        key=conf.get_str(key, ""),
        ca=conf.get_str(ca, ""),
        client_auth=conf.get_bool(RPC_CLIENT_AUTH, False) if prefix == RPC_PREFIX else False,
        prefix=prefix,
    )


def _check_pair(tls: TlsSettings) -> None:
    if bool(tls.cert) != bool(tls.key):
        raise ConfigError(f"{tls.prefix}cert and {tls.prefix}key must be set together")


def rpc_server_tls(conf: Config) -> TlsSettings | None:
    """The region server's TLS settings (None: plain text); ConfigError when they cannot serve TLS."""
    tls = _settings(conf, RPC_PREFIX)
    if tls is None:
        return None
    _check_pair(tls)
    if not tls.cert:
        raise ConfigError(f"{RPC_PREFIX}enabled is true but {RPC_PREFIX}cert and {RPC_PREFIX}key are not set")
    if tls.client_auth and not tls.ca:
        raise ConfigError(f"{RPC_PREFIX}client.auth is true but {RPC_PREFIX}ca (the clients' CA) is not set")
    return tls


def rpc_client_tls(conf: Config) -> TlsSettings | None:
    """A client's TLS settings for region-server RPC (None: plain text)."""
    tls = _settings(conf, RPC_PREFIX)
    if tls is not None:
        _check_pair(tls)
    return tls


def zk_client_tls(conf: Config) -> TlsSettings | None:
    """A ZooKeeper client's TLS settings (None: plain text)."""
    tls = _settings(conf, ZK_PREFIX)
    if tls is not None:
        _check_pair(tls)
        if not tls.ca:
            raise ConfigError(f"{ZK_PREFIX}enabled is true but {ZK_PREFIX}ca (ZooKeeper's CA) is not set")
    return tls
