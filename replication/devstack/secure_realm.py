"""The Kerberos realm of a secure dev stack (``make demo-hbase SECURE=1``): one MIT KDC made for the run, and
the principals of ZooKeeper (``zookeeper/127.0.0.1``), HBase's servers (``hbase/127.0.0.1``) and hbrep
(``hbrep/127.0.0.1``), each with its keytab.

hbrep is configured with HBase's own keys (``hbase.security.authentication``, ``hbase.client.kerberos.principal``,
``hbase.client.keytab.file``, the servers' principals, ``hbase.rpc.protection``); the one key of hbrep's own is
``hbrep.kerberos.krb5.conf``, the realm's krb5.conf for processes that started before the realm (Spark's Python
workers).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from replication.config import Config
from replication.devstack.hbase import HBaseKerberos
from replication.devstack.kdc import Keytab, MitKdc
from replication.devstack.zookeeper import ZooKeeperSasl

SERVER_PROTECTIONS = "privacy,integrity,authentication"  # the servers take any; hbrep asks for privacy


@dataclass(frozen=True)
class SecureRealm:
    """The running KDC and the stack's three identities."""

    kdc: MitKdc
    zookeeper: Keytab
    hbase: Keytab
    hbrep: Keytab

    def zookeeper_sasl(self) -> ZooKeeperSasl:
        """ZooKeeper's server side: SASL (Kerberos) demanded of every client."""
        return ZooKeeperSasl(self.zookeeper.principal, self.zookeeper.path, self.kdc.krb5_conf)

    def hbase_kerberos(self) -> HBaseKerberos:
        """The Kerberos settings of a real HBase cluster of this realm (every protection taken)."""
        return HBaseKerberos(self.hbase.principal, str(self.hbase.path), str(self.kdc.krb5_conf), SERVER_PROTECTIONS)

    def hbrep_settings(self, protection: str = "privacy") -> dict[str, str]:
        """hbrep's keys (HBase's names): its keytab login, the servers' principals, ``protection`` on the RPC."""
        return {
            **self.hbase_kerberos().client_settings(),
            "hbase.rpc.protection": protection,
            "hbase.client.kerberos.principal": self.hbrep.principal,
            "hbase.client.keytab.file": str(self.hbrep.path),
            "hbrep.kerberos.krb5.conf": str(self.kdc.krb5_conf),
        }

    def hbrep_short_name(self) -> str:
        """hbrep's short name (``hbrep``): its ZooKeeper ACL id and the user HBase's ``hbase.superuser`` names."""
        return self.hbrep.principal.split("/")[0].split("@")[0]

    def hbrep_conf(self) -> Config:
        """A configuration with :meth:`hbrep_settings` (and nothing else)."""
        return Config.load(env={}, overrides=self.hbrep_settings())

    def hbrep_environment(self) -> dict[str, str]:
        """The environment of a process running hbrep in this realm (Airflow's, the CLI's): the realm's krb5.conf
        and :meth:`hbrep_settings` as ``HBREP__`` variables."""
        env = {"KRB5_CONFIG": str(self.kdc.krb5_conf)}
        env.update({"HBREP__" + key.replace(".", "__"): value for key, value in self.hbrep_settings().items()})
        return env


@contextlib.contextmanager
def secure_realm(state: Path, *, ticket_lifetime_s: int = 3600) -> Iterator[SecureRealm]:
    """Start a KDC in ``state`` (tickets live ``ticket_lifetime_s``), make the three principals and point this
    process's GSSAPI library at the realm (``KRB5_CONFIG``, put back on exit); the KDC stops on exit."""
    kdc = MitKdc(state, ticket_lifetime_s=ticket_lifetime_s, renew_lifetime_s=ticket_lifetime_s)
    kdc.start()
    saved = os.environ.get("KRB5_CONFIG")
    try:
        realm = SecureRealm(
            kdc=kdc,
            zookeeper=kdc.add_principal("zookeeper/127.0.0.1"),
            hbase=kdc.add_principal("hbase/127.0.0.1"),
            hbrep=kdc.add_principal("hbrep/127.0.0.1"),
        )
        os.environ["KRB5_CONFIG"] = str(kdc.krb5_conf)
        yield realm
    finally:
        if saved is None:
            os.environ.pop("KRB5_CONFIG", None)
        else:
            os.environ["KRB5_CONFIG"] = saved
        kdc.stop()
