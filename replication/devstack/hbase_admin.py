"""HBase's own Admin API for any real HBase cluster, by its cluster key (``hbrep add_peer --shadow``).

A running HBase 2.x learns about peers only through its master's procedures (AddPeerProcedure and the
RefreshPeerProcedure it sends every region server), so a peer written into its ZooKeeper directly is
seen only after a restart. hbrep therefore asks HBase itself: the AdminTool compiled from the checked-in
Maven project (``interop/hbase``, the pinned HBase client from Maven Central), with a configuration that
holds only what the cluster key says (quorum, client port, znode parent).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from replication.config import Config, write_site_xml
from replication.devstack.hbase import ADMIN_TOOL_MAIN, LOG4J2_TOOLS, HBaseError, RealHBase
from replication.devstack.kdc import jaas_keytab_login
from replication.kerberos import KEYTAB_KEY, PRINCIPAL_KEY, KerberosError, check_keytab, kerberos_identity
from replication.zk.client import ZK_SASL_SERVICE
from replication.zk.cluster_key import ClusterKey

# HBase's keys an HBase client of a Kerberized cluster needs besides its own identity, copied from hbrep's
# configuration when set there (HBase resolves _HOST in the servers' principals itself).
RENEWER_KEY = "yarn.resourcemanager.principal"
_SERVER_KEYS = ("hbase.master.kerberos.principal", "hbase.regionserver.kerberos.principal", "hbase.rpc.protection")
_TICKET_CACHE_JAAS = "Client {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useTicketCache=true;\n};\n"


def client_site(key: ClusterKey) -> dict[str, str]:
    """The hbase-site.xml values of an HBase client of the cluster at ``key``."""
    return {
        "hbase.zookeeper.quorum": ",".join(f"{host}:{port}" for host, port in key.servers),
        "hbase.zookeeper.property.clientPort": str(key.servers[0][1]),
        "zookeeper.znode.parent": key.znode_parent,
        "hbase.client.retries.number": "5",
    }


def kerberos_login(
    conf: Config | None, folder: Path, key: ClusterKey | None = None
) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """What makes an HBase Java tool hbrep's Kerberos identity when ``conf`` asks for Kerberos
    (``hbase.security.authentication=kerberos``), as hbrep's own clients are: the hbase-site values (HBase's
    and Hadoop's security mode, the servers' principals and ``hbase.rpc.protection`` from ``conf``, hbrep's
    principal as the renewer of a MapReduce tool's delegation tokens), the JVM
    options (the realm's krb5.conf, a JAAS ``Client`` section for ZooKeeper's SASL and, for a quorum of one host
    ``key`` names, ZooKeeper's principal by that host as written, as hbrep's own ZooKeeper client names it; Java's
    client would name it by the reverse lookup of the address, ``localhost`` for ``127.0.0.1``) and the environment
    (``KRB5CCNAME``: with a keytab, a fresh ticket of hbrep's principal in a cache in ``folder``, by ``kinit``,
    which Hadoop's login and HBase's client read; without one, the process's own cache). Nothing for a cluster
    without Kerberos. KerberosError (one line) when the keytab cannot be read or ``kinit`` fails."""
    identity = kerberos_identity(conf) if conf is not None else None
    if identity is None or conf is None:
        return {}, [], {}
    site = {"hbase.security.authentication": "kerberos", "hadoop.security.authentication": "kerberos"}
    site |= {key: conf.get_str(key, "") for key in _SERVER_KEYS if conf.get_str(key, "")}
    krb5_conf = identity.krb5_conf or os.environ.get("KRB5_CONFIG", "")
    env = {"KRB5_CONFIG": krb5_conf} if krb5_conf else {}
    if identity.principal:
        # the renewer a MapReduce tool (ExportSnapshot, local job runner) names for the delegation tokens it gets of
        # the file systems it copies (TokenCache); without a ResourceManager, hbrep's own principal, as
        # spark_tokens.py names it (else "Can't get Master Kerberos principal for use as renewer")
        site[RENEWER_KEY] = identity.principal
    jaas = folder / "jaas.conf"
    if identity.keytab:
        check_keytab(identity.keytab)
        site |= {KEYTAB_KEY: identity.keytab, PRINCIPAL_KEY: identity.principal}
        jaas.write_text(jaas_keytab_login("Client", identity.keytab, identity.principal))
        cache = f"FILE:{folder / 'tool.ccache'}"
        done = subprocess.run(
            [shutil.which("kinit") or "kinit", "-kt", identity.keytab, "-c", cache, identity.principal],
            capture_output=True, text=True, env={**os.environ, **env}, timeout=60,
        )  # fmt: skip
        if done.returncode != 0:
            raise KerberosError(f"kinit {identity.principal} for HBase's tools failed: {done.stderr.strip()}")
        env["KRB5CCNAME"] = cache
    else:
        jaas.write_text(_TICKET_CACHE_JAAS)
    options = [f"-Djava.security.auth.login.config={jaas}", "-Dzookeeper.sasl.client.canonicalize.hostname=false"]
    hosts = {host for host, _ in key.servers} if key is not None else set()
    if len(hosts) == 1:
        realm = identity.principal.rpartition("@")[2] if "@" in identity.principal else ""
        options.append(f"-Dzookeeper.server.principal={ZK_SASL_SERVICE}/{hosts.pop()}{'@' + realm if realm else ''}")
    if krb5_conf:
        options.append(f"-Djava.security.krb5.conf={krb5_conf}")
    return site, options, env


def hbase_tool(
    key: ClusterKey,
    main_class: str,
    args: list[str],
    *,
    site: dict[str, str] | None = None,
    stdin: str | None = None,
    parse_json: bool = False,
    timeout: float = 300.0,
    heap_mb: int = 256,
    name: str = "HBase",
    conf: Config | None = None,
) -> Any:
    """Run one HBase tool (``main_class`` from the pinned HBase classpath) as a client of the real HBase at
    ``key``, with ``site`` added to its hbase-site.xml, as hbrep's Kerberos identity when ``conf`` asks for
    Kerberos (:func:`kerberos_login`); its stdout (JSON with ``parse_json``), or HBaseError starting with
    ``name`` and the cluster, then the tool's last error line."""
    with tempfile.TemporaryDirectory(prefix="hbrep-hbase-client-") as folder:
        client = RealHBase(folder)  # only its conf/ folder: the tools' classpath, site file and log config
        client.conf_dir.mkdir()
        secure_site, secure_options, env = kerberos_login(conf, client.conf_dir, key)
        write_site_xml(client.site_file, {**client_site(key), **secure_site, **(site or {})})
        if secure_site:  # Hadoop's UGI reads core-site.xml, not hbase-site.xml (HBase's client logs in through it)
            write_site_xml(client.conf_dir / "core-site.xml", {"hadoop.security.authentication": "kerberos"})
        (client.conf_dir / "log4j2-tools.properties").write_text(LOG4J2_TOOLS)
        options = [f"-Dhadoop.tmp.dir={folder}/tmp", *secure_options]  # a MapReduce tool's job runner works there
        try:
            return client.run_tool(main_class, args, stdin=stdin, parse_json=parse_json, timeout=timeout,
                                   heap_mb=heap_mb, jvm_options=options, env=env)  # fmt: skip
        except HBaseError as exc:
            # the tool's own words, not a stack trace's frames ("\tat ...", "... 12 more")
            lines = [line for line in str(exc).splitlines() if line.strip() and not line[:1].isspace()]
            tool_lines = [line for line in lines if line.startswith("AdminTool ")]
            raise HBaseError(f"{name} at {key}: {(tool_lines or lines or ['no output'])[-1]}") from None


def hbase_admin(key: ClusterKey, *args: str, stdin: str | None = None, conf: Config | None = None) -> Any:
    """Run one AdminTool command against the real HBase at ``key`` (as hbrep's Kerberos identity when ``conf``
    asks for Kerberos); its JSON answer, or HBaseError with the tool's last error line (e.g. the master cannot
    be reached, the peer exists)."""
    return hbase_tool(key, ADMIN_TOOL_MAIN, list(args), stdin=stdin, parse_json=True, name="HBase Admin", conf=conf)
