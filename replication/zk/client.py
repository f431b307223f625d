"""Opening kazoo clients for a cluster key, with one clear error when ZooKeeper is unreachable."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError, SessionClosedRequireSaslError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from replication.config import Config
from replication.errors import HbrepError
from replication.kerberos import KerberosError, KerberosIdentity, check_login, kerberos_identity
from replication.tls import TlsSettings, zk_client_tls
from replication.zk.cluster_key import ClusterKey


class ZooKeeperUnavailable(HbrepError):
    """ZooKeeper could not be reached (or authenticated against) in time."""


def parse_auth(auth: str | None) -> list[tuple[str, str]]:
    """``user:password`` → kazoo ``auth_data`` for the digest scheme ([] when empty)."""
    if not auth:
        return []
    if ":" not in auth:
        raise HbrepError("ZooKeeper auth must be user:password")
    return [("digest", auth)]


SESSION_TIMEOUT_KEY = "zookeeper.session.timeout"


def session_timeout_s(conf: Config | None = None) -> float:
    """``zookeeper.session.timeout`` (ms, HBase's key) in seconds: the session timeout a client asks
    ZooKeeper for (the server grants it within its min/max session timeout, 2 and 20 ticks by default).
    ``conf`` None: the configuration of the environment (``HBREP_CONF``, ``HBREP__`` overrides)."""
    conf = Config.load() if conf is None else conf
    return conf.get_int(SESSION_TIMEOUT_KEY) / 1000.0


def zk_options(conf: Config) -> dict[str, object]:
    """``connect`` keyword arguments from a configuration: digest credentials (``hbrep.zk.auth``),
    TLS (``hbrep.zk.tls.*``, ``replication/tls.py``), Kerberos (``hbase.security.authentication=kerberos``,
    ``replication/kerberos.py``) and the session timeout (``zookeeper.session.timeout``)."""
    return {
        "auth": conf.get_str("hbrep.zk.auth", "") or None,
        "tls": zk_client_tls(conf),
        "kerberos": kerberos_identity(conf),
        "session_timeout": session_timeout_s(conf),
    }


ZK_SASL_SERVICE = "zookeeper"  # the service part of ZooKeeper's principal (ZooKeeper's zookeeper.sasl.client.username)


def _sasl_options(identity: KerberosIdentity | None) -> dict[str, object]:
    # kazoo's SASL through pure-sasl's GSSAPI mechanism (the ``kerberos`` binding), before any request
    if identity is None:
        return {}
    options: dict[str, object] = {"mechanism": "GSSAPI", "service": ZK_SASL_SERVICE}
    if identity.principal:
        options["principal"] = identity.principal
    return {"sasl_options": options}


def _ssl_options(tls: TlsSettings | None) -> dict[str, object]:
    # kazoo's SSL options: the server's certificate must chain to ``ca`` and name the host it is reached at.
    if tls is None:
        return {}
    return {"use_ssl": True, "verify_certs": True, "ca": tls.ca, "certfile": tls.cert or None,
            "keyfile": tls.key or None}  # fmt: skip


def connect(
    cluster: ClusterKey | str,
    *,
    timeout: float = 15.0,
    auth: str | None = None,
    read_only: bool = False,
    tls: TlsSettings | None = None,
    kerberos: KerberosIdentity | None = None,
    reconnect_for: float | None = 30.0,
    session_timeout: float | None = None,
) -> KazooClient:
    """A started KazooClient for the cluster's quorum (retrying connection loss with backoff).

    ``tls`` (``replication.tls.zk_client_tls``): a TLS session to the quorum's secure client port.
    ``reconnect_for``: how long (s) a lost connection is retried before the client closes for good; None
    retries until the client is stopped (a long-running server such as ``metrics serve``).
    ``session_timeout``: the session timeout (s) asked of ZooKeeper; None = ``zookeeper.session.timeout``
    of the environment's configuration (:func:`session_timeout_s`). When a client dies, its ephemeral
    znodes (a region server's ``rs`` node, a claim's lock) go once the session has been silent that long.
    ``kerberos``: authenticate the session with SASL GSSAPI as that identity (``replication/kerberos.py``);
    a ticket for ZooKeeper's principal is asked of the KDC first, so no ticket, a wrong principal or an
    unreadable keytab is one KerberosError before any connection is made.
    Raises ZooKeeperUnavailable naming the quorum when no server answers within ``timeout``.
    """
    key = ClusterKey.parse(cluster) if isinstance(cluster, str) else cluster
    if kerberos is not None:
        check_login(kerberos, ZK_SASL_SERVICE, key.servers[0][0])
    client = KazooClient(
        hosts=key.hosts,
        timeout=session_timeout_s() if session_timeout is None else session_timeout,
        # Reconnecting after a member stops is bounded by time too: while the rest of an ensemble elects a
        # leader they refuse connections, and a count of 3 gave up within about 2 s and closed the client for
        # good (every later call: ConnectionClosedError). A successful connect resets it (kazoo).
        connection_retry=KazooRetry(max_tries=-1, delay=0.2, max_delay=2.0, deadline=reconnect_for),
        # zk.retry(...) retries ConnectionLoss/expiry until the session has moved to another ensemble
        # member: bounded by time (30 s, longer than a reconnect), not by a count that load can exhaust.
        command_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=2.0, deadline=30.0),
        auth_data=parse_auth(auth) or None,
        read_only=read_only,
        logger=logging.getLogger("kazoo.client"),
        **_ssl_options(tls),
        **_sasl_options(kerberos),
    )
    try:
        client.start(timeout=timeout)
        # kazoo reports CONNECTED before a SASL exchange ends, and a ZooKeeper that demands SASL closes a session
        # without it at its first request: one request now turns either outcome into one clear error
        client.exists("/")
    except KazooTimeoutError:
        _close(client)
        raise ZooKeeperUnavailable(f"ZooKeeper at {key.hosts} did not answer within {timeout:.0f}s") from None
    except SessionClosedRequireSaslError:
        _close(client)
        raise ZooKeeperUnavailable(
            f"ZooKeeper at {key.hosts} demands Kerberos (SASL): set hbase.security.authentication=kerberos, "
            "hbase.client.kerberos.principal and hbase.client.keytab.file"
        ) from None
    except AuthFailedError:
        _close(client)
        raise KerberosError(
            f"ZooKeeper at {key.hosts} refused the Kerberos (SASL) authentication of {kerberos.describe()}"  # type: ignore[union-attr]
        ) from None
    return client


def _close(client: KazooClient) -> None:
    with contextlib.suppress(Exception):
        client.stop()
        client.close()


def require_connected(client: KazooClient, cluster: ClusterKey | str) -> None:
    """Return at once when the session is connected; else raise ZooKeeperUnavailable naming its state.

    For a reader that must answer now (a metrics scrape): a call on a lost connection would otherwise wait
    out kazoo's command retry (up to 30 s) before failing.
    """
    if not client.connected:
        raise ZooKeeperUnavailable(f"ZooKeeper of {cluster} is not connected (session {client.state})")


@contextlib.contextmanager
def connected(cluster: ClusterKey | str, **kwargs: object) -> Iterator[KazooClient]:
    """``with connected(key) as zk:`` — a client that is stopped and closed on exit."""
    client = connect(cluster, **kwargs)  # type: ignore[arg-type]
    try:
        yield client
    finally:
        client.stop()
        client.close()
