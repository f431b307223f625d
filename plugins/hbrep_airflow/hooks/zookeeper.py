"""ZooKeeperHook: a ZooKeeper ensemble (hosts, port, znode parent, digest auth) from an Airflow connection.

Connection fields (connection type ``zookeeper``):

- host: the quorum, ``zk1,zk2,zk3`` (entries may carry their own ``host:port``);
- port: the client port (default 2181);
- schema: the znode parent (chroot) of the cluster, ``/hbase`` or ``hbase`` (default ``/hbase``);
- login/password: ZooKeeper digest credentials (optional);
- extra: ``{"session_timeout": 10.0, "connect_timeout": 15.0}`` (optional).

Examples: ``AIRFLOW_CONN_HBREP_SOURCE='zookeeper://127.0.0.1:2181/hbase-a'`` or the JSON form
``{"conn_type": "zookeeper", "host": "127.0.0.1", "port": 2181, "schema": "/hbase-a"}``.

The ``replication`` library is imported inside the methods, never at the top: operators and DAG files
import this module when a DAG file is parsed, and DAG parsing must not load the library (kazoo, Spark).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from replication.zk.cluster_key import ClusterKey

DEFAULT_PORT = 2181
DEFAULT_PARENT = "/hbase"


class ZooKeeperHook(BaseHook):
    """One ZooKeeper cluster key (quorum, port, znode parent) and authenticated kazoo clients for it."""

    conn_name_attr = "zookeeper_conn_id"
    default_conn_name = "hbrep_source"
    conn_type = "zookeeper"
    hook_name = "ZooKeeper (hbrep)"

    def __init__(self, zookeeper_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.zookeeper_conn_id = zookeeper_conn_id
        self._key: ClusterKey | None = None
        self._auth: str | None = None
        self._extra: dict[str, Any] = {}

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """How the connection form looks: schema relabelled as the znode parent, quorum placeholders."""
        return {
            "hidden_fields": [],
            "relabeling": {"host": "Quorum", "schema": "Znode parent", "login": "Digest user"},
            "placeholders": {
                "host": "zk1,zk2,zk3",
                "port": "2181",
                "schema": "/hbase",
                "extra": '{"session_timeout": 10.0}',
            },
        }

    def _load(self) -> None:
        if self._key is None:
            self.use_connection(self.get_connection(self.zookeeper_conn_id))

    def use_connection(self, conn: Any) -> None:
        """Take the cluster key, auth and extras from ``conn`` (an Airflow Connection) instead of looking
        it up (async callers fetch it with ``aget_connection``); HbrepError when it names no quorum."""
        from replication.zk.cluster_key import ClusterKey

        quorum = (conn.host or "").strip()
        if not quorum:
            from replication.errors import HbrepError

            raise HbrepError(f"connection {self.zookeeper_conn_id}: no ZooKeeper quorum in the host field")
        parent = "/" + (conn.schema or DEFAULT_PARENT).strip().strip("/")
        self._key = ClusterKey.parse(f"{quorum}:{conn.port or DEFAULT_PORT}:{parent}")
        self._auth = f"{conn.login}:{conn.password or ''}" if conn.login else None
        self._extra = dict(conn.extra_dejson or {})

    @property
    def cluster_key(self) -> ClusterKey:
        """The connection as an HBase cluster key ``quorum:port:/parent``; HbrepError when malformed."""
        self._load()
        assert self._key is not None
        return self._key

    @property
    def auth(self) -> str | None:
        """``user:password`` digest credentials, or None."""
        self._load()
        return self._auth

    def get_conn(self) -> KazooClient:
        """A started kazoo client on the quorum (absolute HBase paths; no chroot). The caller stops it.

        TLS to ZooKeeper when the configuration (hbase-site.xml / ``HBREP__`` env) sets ``hbrep.zk.tls.*``;
        Kerberos (SASL) when it sets ``hbase.security.authentication=kerberos`` (``replication/kerberos.py``).
        """
        from replication.config import Config
        from replication.kerberos import kerberos_identity
        from replication.tls import zk_client_tls
        from replication.zk.client import connect, session_timeout_s

        key = self.cluster_key
        timeout = float(self._extra.get("connect_timeout", 15.0))
        conf = Config.load()
        # the connection's extra session_timeout (s) when given, else zookeeper.session.timeout
        session = self._extra.get("session_timeout")
        return connect(key, timeout=timeout, auth=self.auth, tls=zk_client_tls(conf), kerberos=kerberos_identity(conf),
                       session_timeout=float(session) if session is not None else session_timeout_s(conf))  # fmt: skip

    @contextlib.contextmanager
    def connected(self) -> Iterator[KazooClient]:
        """``with hook.connected() as zk:`` — a client that is stopped and closed on exit."""
        client = self.get_conn()
        try:
            yield client
        finally:
            client.stop()
            client.close()

    def test_connection(self) -> tuple[bool, str]:
        """(ok, message) for the UI's Test button: connects and checks the znode parent exists."""
        try:
            with self.connected() as zk:
                parent = self.cluster_key.znode_parent
                if zk.exists(parent) is None:
                    return False, f"connected to {self.cluster_key.hosts}, but znode {parent} does not exist"
                return True, f"connected to {self.cluster_key}"
        except Exception as exc:
            return False, str(exc)
