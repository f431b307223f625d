"""A Kerberized stack per module: an MIT KDC made for the run, ZooKeeper demanding SASL (Kerberos) of every
client, and the principals hbrep and its tests use, with their keytabs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from support import kerberos_environment

from replication.config import Config
from replication.devstack.kdc import Keytab, MitKdc
from replication.devstack.zookeeper import ZooKeeperSasl, ZooKeeperServer
from replication.net import free_port


@dataclass
class KerberizedZooKeeper:
    """The KDC, the SASL-only ZooKeeper, hbrep's principal and another one (``intruder``)."""

    kdc: MitKdc
    zookeeper: ZooKeeperServer
    hbrep: Keytab
    intruder: Keytab

    def settings(self, keytab: Keytab | None = None, **changes: str) -> dict[str, str]:
        """hbrep's Kerberos keys for ``keytab`` (default: hbrep's), with ``changes`` (key with ``_`` for ``.``)."""
        keytab = keytab or self.hbrep
        values = {
            "hbase.security.authentication": "kerberos",
            "hbase.client.kerberos.principal": keytab.principal,
            "hbase.client.keytab.file": str(keytab.path),
            # Spark's Python workers may have started before this module's KDC (the session's Spark)
            "hbrep.kerberos.krb5.conf": str(self.kdc.krb5_conf),
        }
        values.update({key.replace("_", "."): value for key, value in changes.items()})
        return values

    def conf(self, keytab: Keytab | None = None, **changes: str) -> Config:
        """A configuration with :meth:`settings`."""
        return Config.load(env={}, overrides=self.settings(keytab, **changes))

    def cli_env(self, keytab: Keytab | None = None, **changes: str) -> dict[str, str]:
        """The environment of an ``hbrep`` command run as a user would: the realm's krb5.conf, no ticket cache
        or client keytab of this machine or process, and :meth:`settings` as ``HBREP__`` variables."""
        env = {
            "KRB5_CONFIG": str(self.kdc.krb5_conf),
            "KRB5CCNAME": f"FILE:{self.kdc.state_dir / 'no-cache'}",
            "KRB5_CLIENT_KTNAME": str(self.kdc.state_dir / "no-client-keytab"),
        }
        for key, value in self.settings(keytab, **changes).items():
            env["HBREP__" + key.replace(".", "__")] = value
        return env


@pytest.fixture(scope="module")
def kerberized_zk(request, tmp_path_factory) -> Iterator[KerberizedZooKeeper]:
    """The stack of one module; its tickets live ``TICKET_LIFETIME_S`` (a module constant; default an hour)."""
    root = tmp_path_factory.mktemp("kerberized")
    lifetime = getattr(request.module, "TICKET_LIFETIME_S", 3600)
    kdc = MitKdc(root / "kdc", ticket_lifetime_s=lifetime, renew_lifetime_s=lifetime)
    kdc.start()
    zookeeper = None
    try:
        server = kdc.add_principal("zookeeper/127.0.0.1")
        stack = KerberizedZooKeeper(
            kdc=kdc,
            zookeeper=ZooKeeperServer(
                root / "zk", free_port(), sasl=ZooKeeperSasl(server.principal, server.path, kdc.krb5_conf)
            ),
            hbrep=kdc.add_principal("hbrep/127.0.0.1"),
            intruder=kdc.add_principal("intruder/127.0.0.1"),
        )
        zookeeper = stack.zookeeper
        zookeeper.start()
        with kerberos_environment(kdc.krb5_conf):  # this process's GSSAPI library: the run's realm
            yield stack
    finally:
        if zookeeper is not None:
            zookeeper.stop()
        kdc.stop()
