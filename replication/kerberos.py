"""Kerberos identity of an hbrep process, read from HBase's own keys, and a check that it can log in.

``hbase.security.authentication=kerberos`` makes hbrep a Kerberos (SASL GSSAPI) client. Its identity:

- ``hbase.client.kerberos.principal`` + ``hbase.client.keytab.file``: the process logs in from the keytab
  into a ticket cache of its own, in memory (``KRB5CCNAME=MEMORY:...``, as Hadoop's UGI keeps a keytab
  login in memory); MIT's GSSAPI gets a new ticket from the keytab (``KRB5_CLIENT_KTNAME``) whenever the
  one it holds is about to expire, so long-running processes renew without a ``kinit`` loop;
- neither set: the ticket cache of the environment (``kinit`` beforehand; ``KRB5CCNAME``), which expires.

The realm's configuration is ``hbrep.kerberos.krb5.conf`` when set (it travels with the configuration to
Spark's Python workers, whose environment the driver does not choose), else the environment's
``KRB5_CONFIG`` (default ``/etc/krb5.conf``). One identity per process: :func:`login` sets the process
environment that the GSSAPI library reads.
:func:`check_login` asks the KDC for a service ticket and turns every failure into one line naming what
is wrong (no ticket, a principal the keytab has no key for, a keytab that cannot be read).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from replication.config import Config
from replication.errors import ConfigError, HbrepError

AUTHENTICATION_KEY = "hbase.security.authentication"
PRINCIPAL_KEY = "hbase.client.kerberos.principal"
KEYTAB_KEY = "hbase.client.keytab.file"
KRB5_CONF_KEY = "hbrep.kerberos.krb5.conf"
PROTECTION_KEY = "hbase.rpc.protection"
KEYTAB_MAGIC = (b"\x05\x01", b"\x05\x02")  # MIT keytab file format versions 1 and 2


class KerberosError(HbrepError):
    """This process cannot authenticate with Kerberos (no ticket, wrong principal, unreadable keytab)."""


@dataclass(frozen=True)
class KerberosIdentity:
    """Who this process is to Kerberos: a principal and its keytab, or ('', '') = the ticket cache."""

    principal: str = ""
    keytab: str = ""
    krb5_conf: str = ""  # hbrep.kerberos.krb5.conf; empty = the process's KRB5_CONFIG

    def describe(self) -> str:
        """``hbrep@REALM from keytab /x`` or ``the ticket cache KRB5CCNAME`` (for error lines)."""
        if self.keytab:
            return f"{self.principal} from keytab {self.keytab} ({KEYTAB_KEY})"
        cache = os.environ.get("KRB5CCNAME", "the default ticket cache")
        return f"{self.principal or 'the default principal'} from {cache}"


def kerberos_identity(conf: Config) -> KerberosIdentity | None:
    """The Kerberos identity the configuration asks for; None when ``hbase.security.authentication`` is
    ``simple``. ConfigError naming the keys when a keytab is set without its principal."""
    if conf.get_str(AUTHENTICATION_KEY, "simple").strip().lower() != "kerberos":
        return None
    principal = conf.get_str(PRINCIPAL_KEY, "")
    keytab = conf.get_str(KEYTAB_KEY, "")
    if keytab and not principal:
        raise ConfigError(f"{KEYTAB_KEY} is set but {PRINCIPAL_KEY} (whose keys it holds) is not")
    return KerberosIdentity(principal, keytab, conf.get_str(KRB5_CONF_KEY, ""))


def check_keytab(path: str) -> None:
    """KerberosError naming ``path`` unless it is a readable keytab file."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(2)
    except OSError as exc:
        raise KerberosError(f"cannot read the keytab {path} ({KEYTAB_KEY}): {exc.strerror}") from None
    if magic not in KEYTAB_MAGIC:
        raise KerberosError(f"{path} ({KEYTAB_KEY}) is not a keytab file")


def login(identity: KerberosIdentity) -> None:
    """Make ``identity`` this process's Kerberos identity (see the module docstring). A keytab login uses
    a ticket cache in this process's memory; KerberosError when the keytab cannot be read. The realm's
    configuration (``hbrep.kerberos.krb5.conf``), when set, becomes this process's ``KRB5_CONFIG``."""
    if identity.krb5_conf:
        os.environ["KRB5_CONFIG"] = identity.krb5_conf
    if not identity.keytab:
        return
    check_keytab(identity.keytab)
    keytab = str(Path(identity.keytab).resolve())
    # one cache per (principal, keytab): tickets of another login never serve this one
    login_id = hashlib.sha256(f"{identity.principal}\0{keytab}".encode()).hexdigest()[:16]
    os.environ["KRB5_CLIENT_KTNAME"] = keytab
    os.environ["KRB5CCNAME"] = f"MEMORY:hbrep-{os.getpid()}-{login_id}"


def check_login(identity: KerberosIdentity, service: str, host: str) -> None:
    """Log in (:func:`login`) and get a ticket for ``service@host`` (a ZooKeeper server, a region server)
    from the KDC; KerberosError with one line naming what is wrong when that fails."""
    import kerberos  # the GSSAPI binding (C extension) is loaded only by Kerberos users

    login(identity)
    target = f"{service}@{host}"
    try:
        _, context = kerberos.authGSSClientInit(target, principal=identity.principal or None)
        try:
            kerberos.authGSSClientStep(context, "")
        finally:
            kerberos.authGSSClientClean(context)
    except kerberos.GSSError as exc:
        raise KerberosError(explain(exc, identity, target)) from None


def explain(exc: Exception, identity: KerberosIdentity, target: str) -> str:
    """One line for a GSSAPI failure (``GSSError((major, code), (minor, code))``) of ``identity`` asking for
    a ticket to, or talking with, ``target`` (``service@host``)."""
    minor = _gss_message(exc)
    who = identity.describe()
    if "Can't find client principal" in minor or "No key table entry" in minor:
        return f"Kerberos login as {who} failed: no key or ticket for {identity.principal} ({PRINCIPAL_KEY})"
    if "No Kerberos credentials available" in minor or "No credentials cache found" in minor:
        return (
            f"no Kerberos ticket ({minor}): run kinit, or set {KEYTAB_KEY} and {PRINCIPAL_KEY}"
            if not identity.keytab
            else f"Kerberos login as {who} failed: {minor}"
        )
    if "expired" in minor.lower():
        return f"the Kerberos ticket of {who} has expired: renew it (kinit) or log in from a keytab ({KEYTAB_KEY})"
    if "not found in Kerberos database" in minor:
        return f"the KDC does not know the service principal for {target}: {minor}"
    return f"Kerberos authentication as {who} to {target} failed: {minor}"


def protection_refused(target: str, wanted: tuple[str, ...], offered: tuple[str, ...]) -> str:
    """One line for a server that offers none of the SASL qops ``hbase.rpc.protection`` asks for."""
    names = {"auth": "authentication", "auth-int": "integrity", "auth-conf": "privacy"}
    return (
        f"{target} offers hbase.rpc.protection {', '.join(names[q] for q in offered) or 'nothing'}, "
        f"hbrep asks for {', '.join(names[q] for q in wanted)}: set {PROTECTION_KEY} as the servers have it"
    )


def _gss_message(exc: Exception) -> str:
    parts = [part[0] for part in exc.args if isinstance(part, tuple) and part and isinstance(part[0], str)]
    return parts[-1] if parts else str(exc)


def spark_login_conf(identity: KerberosIdentity | None) -> dict[str, str]:
    """The Spark settings that make a Spark application's JVMs ``identity`` to Hadoop (nothing for None).

    Hadoop's client in Kerberos mode (``spark.hadoop.hadoop.security.authentication``), so that Spark's own reads
    (table files on a Kerberized WebHDFS) authenticate; with a keytab, spark-submit's ``--principal``/``--keytab``
    as settings (``spark.kerberos.principal``/``.keytab``: SparkSubmit logs the driver in from the keytab, on every
    master but a standalone one), else the ticket cache the JVM finds (``KRB5CCNAME``); and the realm's
    krb5.conf for the JDK, which reads ``java.security.krb5.conf``, not ``KRB5_CONFIG``. Only at the JVM's launch:
    a session already running keeps its identity.
    """
    if identity is None:
        return {}
    conf = {"spark.hadoop.hadoop.security.authentication": "kerberos"}
    if identity.keytab:
        check_keytab(identity.keytab)
        conf |= {"spark.kerberos.principal": identity.principal, "spark.kerberos.keytab": identity.keytab}
    krb5_conf = identity.krb5_conf or os.environ.get("KRB5_CONFIG", "")
    if krb5_conf:
        option = f"-Djava.security.krb5.conf={krb5_conf}"
        conf |= {"spark.driver.extraJavaOptions": option, "spark.executor.extraJavaOptions": option}
    return conf
