"""A real Apache HBase (the release pinned in interop/hbase/pom.xml) run pseudo-distributed on loopback.

One HMaster, 1..N HRegionServers and HBase's Thrift server (not on a Kerberized cluster), each a JVM of its
own, against an existing ZooKeeper (hbrep's embedded one) under their own znode parent (default ``/hbase-real``),
with the root directory on the local file system, or on HDFS when ``start`` is given a ``rootdir``
(``hdfs://127.0.0.1:<rpc port>/hbase``: WALs are then written through HDFS's own client, hflushed
into files the NameNode still holds open). With ``kerberos`` (:class:`HBaseKerberos`) the cluster is a secure
one: ``hbase.security.authentication=kerberos`` (SASL GSSAPI on every RPC), its servers, Thrift and the tools
logged in from a keytab made by ``devstack/kdc.py``, ZooKeeper reached through SASL (a JAAS ``Client``
section). Everything else lives in one folder::

    <root>/hbase.json            the cluster's ports and settings (what stop/status read)
    <root>/conf/hbase-site.xml   the configuration every HBase JVM (and every tool run) reads
    <root>/conf/log4j2.properties
    <root>/conf/jaas.conf        a Kerberized cluster's ZooKeeper login (JAAS ``Client``)
    <root>/conf/core-site.xml    a Kerberized cluster's ``hadoop.security.authentication`` (Hadoop's UGI)
    <root>/hbase/                hbase.rootdir when local: WALs/, oldWALs/, data/, MasterData/ ...
    <root>/run/<name>.pid|.log   master, rs1..rsN, thrift (JvmProcess)

``start`` returns once the Thrift server answers a table listing (so the master is initialized and
a region server carries hbase:meta); every error is one line naming what failed plus the log tail.
Tools of the same release (WALPrettyPrinter, WALPlayer, hbrep's AdminTool) run from the same
classpath and configuration through :meth:`RealHBase.run_tool`.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from replication.config import write_site_xml
from replication.devstack.admin_server import AdminServer, AdminServerError
from replication.devstack.jvm import DEV_SERVER_JIT_OPTIONS, JvmProcess, JvmProcessError, port_accepts
from replication.devstack.kdc import jaas_keytab_login
from replication.devstack.maven import interop_tools_classpath
from replication.devstack.tls_ca import ThrowAwayCA
from replication.errors import HbrepError
from replication.kerberos import KerberosIdentity
from replication.net import LOOPBACK, free_port, port_in_use
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey

MASTER_MAIN = "org.apache.hadoop.hbase.master.HMaster"
REGIONSERVER_MAIN = "org.apache.hadoop.hbase.regionserver.HRegionServer"
THRIFT_MAIN = "org.apache.hadoop.hbase.thrift.ThriftServer"
ADMIN_TOOL_MAIN = "io.hbrep.interop.AdminTool"
VERIFY_REPLICATION_MAIN = "org.apache.hadoop.hbase.mapreduce.replication.VerifyReplication"
VERIFY_COUNTER = re.compile(
    r"\b(GOODROWS|BADROWS|ONLY_IN_SOURCE_TABLE_ROWS|ONLY_IN_PEER_TABLE_ROWS|CONTENT_DIFFERENT_ROWS)=(\d+)"
)
SCAN_CACHEDROWS = "hbase.mapreduce.scan.cachedrows"  # TableInputFormat.SCAN_CACHEDROWS
DEFAULT_PARENT = "/hbase-real"
STATE_FILE = "hbase.json"

# What HBase's bin/hbase adds on Java 17 (netty reflection, direct buffers), kept to what it needs.
JAVA17_OPTIONS = (
    *DEV_SERVER_JIT_OPTIONS,
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",  # HFileSystem's block-order hook on HDFS
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Djava.net.preferIPv4Stack=true",
)

LOG4J2 = """\
status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_OUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %.2000m%n
rootLogger = INFO,console
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = WARN
logger.hbase.name = org.apache.hadoop.hbase
logger.hbase.level = INFO
"""
# Tools (WALPrettyPrinter, WALPlayer, AdminTool) print their answer on stdout: their log goes to stderr.
LOG4J2_TOOLS = LOG4J2.replace("SYSTEM_OUT", "SYSTEM_ERR").replace("rootLogger = INFO", "rootLogger = WARN")


class HBaseError(HbrepError):
    """The real HBase could not be started, reached or driven (``stdout``: what a failed tool printed)."""

    def __init__(self, message: str, stdout: str = ""):
        super().__init__(message)
        self.stdout = stdout


@dataclass
class HBaseLayout:
    """The ports and settings of one real HBase, as recorded in ``<root>/hbase.json``."""

    zk_quorum: str
    zk_port: int
    znode_parent: str
    master_port: int
    regionserver_ports: list[int]
    thrift_port: int
    heap_mb: int = 384
    extra_site: dict[str, str] = field(default_factory=dict)
    rootdir: str = ""  # hbase.rootdir as a URI; "" = <root>/hbase on the local file system
    kerberos: dict[str, str] = field(default_factory=dict)  # HBaseKerberos's fields; {} = SIMPLE

    @property
    def cluster_key(self) -> str:
        """The cluster key other clusters use to name this one (``quorum:port:/parent``)."""
        return f"{self.zk_quorum}:{self.zk_port}:{self.znode_parent}"


@dataclass
class HBaseStatus:
    """Which of the cluster's JVMs run, and where (``hbrep hbase status``)."""

    root: str
    cluster_key: str
    processes: dict[str, dict[str, Any]]

    @property
    def running(self) -> bool:
        return bool(self.processes) and all(p["running"] for p in self.processes.values())

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "running": self.running}


@dataclass(frozen=True)
class HBaseTls:
    """The files of HBase's RPC TLS for a dev cluster, made by :func:`make_tls`: the CA (PEM), the servers' PKCS12
    key store (server and client use: masters and region servers call each other) and its password, and a client
    identity for hbrep (PEM key + certificate: HBase servers demand a client certificate by default)."""

    ca: Path
    keystore: Path
    password: str
    client: Path

    def site(self, *, plaintext: bool = False) -> dict[str, str]:
        """hbase-site.xml's TLS keys (HBase's names): TLS-only servers unless ``plaintext``, TLS clients."""
        return {
            "hbase.server.netty.tls.enabled": "true",
            "hbase.server.netty.tls.supportplaintext": "true" if plaintext else "false",
            "hbase.client.netty.tls.enabled": "true",
            "hbase.rpc.tls.keystore.location": str(self.keystore),
            "hbase.rpc.tls.keystore.type": "PKCS12",
            "hbase.rpc.tls.keystore.password": self.password,
            "hbase.rpc.tls.truststore.location": str(self.ca),
            "hbase.rpc.tls.truststore.type": "PEM",
        }

    def client_settings(self) -> dict[str, str]:
        """hbrep's keys (HBase's names) to reach this cluster: trust its CA, present the client identity."""
        return {
            "hbase.client.netty.tls.enabled": "true",
            "hbase.rpc.tls.truststore.location": str(self.ca),
            "hbase.rpc.tls.keystore.location": str(self.client),
        }


@dataclass(frozen=True)
class HBaseKerberos:
    """A Kerberized dev cluster: the servers' (and the tools') principal and keytab from ``devstack/kdc.py``
    (``hbase/127.0.0.1@REALM``), the realm's krb5.conf and the RPC protection (``hbase.rpc.protection``)."""

    principal: str
    keytab: str
    krb5_conf: str
    protection: str = "authentication"

    def site(self) -> dict[str, str]:
        """hbase-site.xml's security keys (HBase's and Hadoop's names): Kerberos on every RPC, the master's, region
        servers' and Thrift's logins, and the client login HBase's tools (AdminTool, VerifyReplication) take."""
        return {
            "hadoop.security.authentication": "kerberos",
            "hbase.security.authentication": "kerberos",
            "hbase.rpc.protection": self.protection,
            "hbase.master.kerberos.principal": self.principal,
            "hbase.master.keytab.file": self.keytab,
            "hbase.regionserver.kerberos.principal": self.principal,
            "hbase.regionserver.keytab.file": self.keytab,
            "hbase.thrift.kerberos.principal": self.principal,
            "hbase.thrift.keytab.file": self.keytab,
            "hbase.client.kerberos.principal": self.principal,
            "hbase.client.keytab.file": self.keytab,
            # the delegation tokens HBase's MapReduce tools (VerifyReplication) get, as HBase's book sets up a
            # secure cluster for MapReduce (TableMapReduceUtil.initCredentials)
            "hbase.coprocessor.region.classes": "org.apache.hadoop.hbase.security.token.TokenProvider",
            # ... and the renewer MapReduce names for them (its local job runner has no ResourceManager)
            "yarn.resourcemanager.principal": self.principal,
        }

    def jaas(self) -> str:
        """The JAAS file of every JVM: its ZooKeeper (SASL) login from the keytab."""
        return jaas_keytab_login("Client", self.keytab, self.principal)

    def jvm_options(self, jaas_file: Path) -> list[str]:
        """The realm's krb5.conf, the JAAS file, and ZooKeeper's server principal (``zookeeper/127.0.0.1@REALM``,
        not the reverse lookup ZooKeeper's client makes of the quorum's address)."""
        realm = self.principal.rsplit("@", 1)[-1]
        return [
            f"-Djava.security.krb5.conf={self.krb5_conf}",
            f"-Djava.security.auth.login.config={jaas_file}",
            "-Dzookeeper.sasl.client.canonicalize.hostname=false",
            f"-Dzookeeper.server.principal=zookeeper/{LOOPBACK}@{realm}",
        ]

    def client_settings(self) -> dict[str, str]:
        """hbrep's keys (HBase's names) for the servers' principals and the protection (hbrep's own identity
        comes from hbase.client.kerberos.principal / hbase.client.keytab.file)."""
        return {
            "hbase.security.authentication": "kerberos",
            "hbase.master.kerberos.principal": self.principal,
            "hbase.regionserver.kerberos.principal": self.principal,
            "hbase.rpc.protection": self.protection,
        }


def make_tls(folder: Path) -> HBaseTls:
    """A throw-away CA in ``folder`` and the key stores a TLS dev cluster and its hbrep client use."""
    ca = ThrowAwayCA.create(folder, name="hbrep dev HBase CA")
    password = secrets.token_hex(12)
    keystore = ca.issue("hbase-server").pkcs12(password)
    client = ca.issue("hbrep-client", client=True).combined()
    return HBaseTls(ca=ca.cert_path, keystore=keystore, password=password, client=client)


def site_values(root: Path, layout: HBaseLayout) -> dict[str, str]:
    """The hbase-site.xml of a pseudo-distributed HBase on loopback, rooted in ``root``."""
    values = {
        "hbase.cluster.distributed": "true",
        "hbase.zookeeper.quorum": layout.zk_quorum,
        "hbase.zookeeper.property.clientPort": str(layout.zk_port),
        "zookeeper.znode.parent": layout.znode_parent,
        "hbase.rootdir": layout.rootdir or (root / "hbase").as_uri(),
        "hbase.tmp.dir": str(root / "tmp"),
        # protobuf WAL files under WALs/<server>/, one per region server (not the async dual writer's
        # HDFS-only fan-out); the local file system has no hflush/hsync capability to enforce.
        "hbase.wal.provider": "filesystem",
        "hbase.unsafe.stream.capability.enforce": "false",
        "hbase.replication": "true",
        # every server on 127.0.0.1, info (web) servers off
        "hbase.master.ipc.address": LOOPBACK,
        "hbase.regionserver.ipc.address": LOOPBACK,
        "hbase.master.port": str(layout.master_port),
        "hbase.master.info.port": "-1",
        "hbase.regionserver.port": str(layout.regionserver_ports[0]),
        "hbase.regionserver.info.port": "-1",
        "hbase.regionserver.thrift.ipaddress": LOOPBACK,
        "hbase.regionserver.thrift.port": str(layout.thrift_port),
        "hbase.thrift.info.port": "-1",
        # start fast and small: the master needs one region server, few handler threads
        "hbase.master.wait.on.regionservers.mintostart": "1",
        "hbase.master.wait.on.regionservers.timeout": "1000",
        "hbase.master.wait.on.regionservers.interval": "200",
        "hbase.regionserver.handler.count": "5",
        "hbase.regionserver.metahandler.count": "2",
        "hbase.regionserver.replication.handler.count": "2",
        "hbase.master.handler.count": "5",
        "hbase.thrift.minWorkerThreads": "4",
        "hbase.client.retries.number": "10",
        "hbase.client.pause": "100",
        "zookeeper.session.timeout": "20000",
        # A dead region server's queues are claimed after 1-2 s rather than HBase's 30-60 s
        # (ReplicationSourceManager.claimQueue sleeps this plus a random share of it): the dev stack and the
        # tests kill and restart servers on purpose and wait for the claim (0.94 used 2000).
        "replication.sleep.before.failover": "1000",
        "hbase.master.balancer.stochastic.runMaxSteps": "false",
        "hbase.balancer.period": "3600000",
        # small memstores and block cache (384-512 MB heaps)
        "hfile.block.cache.size": "0.1",
        "hbase.regionserver.global.memstore.size": "0.2",
        # few procedure threads: the machine has 2 cores shared by every JVM of the dev stack
        "hbase.master.procedure.threads": "4",
    }
    if layout.kerberos:
        values.update(HBaseKerberos(**layout.kerberos).site())
    values.update(layout.extra_site)
    return values


class RealHBase:
    """One pseudo-distributed HBase rooted in a folder; see the module docstring for the layout."""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        self._admin = AdminServer(lambda: self.tool_command(ADMIN_TOOL_MAIN, ["serve"]), self.run_dir / "admin.log",
                                  configuration=self._site_version)  # fmt: skip

    def _site_version(self) -> int | None:
        """The site file's modification time (ns), None while there is none: a served AdminTool JVM started on
        another version of it is replaced (see AdminServer)."""
        try:
            return self.site_file.stat().st_mtime_ns
        except OSError:
            return None

    # -- files ----------------------------------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        return self.root / "conf"

    @property
    def site_file(self) -> Path:
        return self.conf_dir / "hbase-site.xml"

    @property
    def rootdir(self) -> Path:
        """hbase.rootdir on the local file system (WALs/, oldWALs/, data/), when it is local."""
        return self.root / "hbase"

    @property
    def rootdir_uri(self) -> str:
        """hbase.rootdir as HBase's tools take it: ``file:///...`` or ``hdfs://127.0.0.1:<rpc>/...``."""
        return self.layout().rootdir or self.rootdir.as_uri()

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    @property
    def state_file(self) -> Path:
        return self.root / STATE_FILE

    def layout(self) -> HBaseLayout:
        """The recorded layout; HBaseError when this folder holds no HBase."""
        try:
            return HBaseLayout(**json.loads(self.state_file.read_text()))
        except FileNotFoundError:
            raise HBaseError(f"no real HBase in {self.root} (no {STATE_FILE}; run `hbrep hbase start` first)") from None
        except (ValueError, TypeError) as exc:
            raise HBaseError(f"{self.state_file} is not an hbrep HBase layout: {exc}") from None

    def classpath(self) -> str:
        """The conf folder, hbrep's Java tools and the pinned HBase/Hadoop jars."""
        return f"{self.conf_dir}:{interop_tools_classpath()}"

    def jvm_options(self, tool: bool = False) -> list[str]:
        """Java options of the servers (log to stdout, i.e. the log file) or of tools (log to stderr); a
        Kerberized cluster's login options (:class:`HBaseKerberos`) on both."""
        log_conf = self.conf_dir / ("log4j2-tools.properties" if tool else "log4j2.properties")
        kerberos = self.layout().kerberos if self.state_file.exists() else {}
        secure = HBaseKerberos(**kerberos).jvm_options(self.conf_dir / "jaas.conf") if kerberos else []
        return [*JAVA17_OPTIONS, f"-Dlog4j2.configurationFile={log_conf}", *secure]

    # -- processes ------------------------------------------------------------------------------
    def _jvm(self, name: str, main: str, args: Sequence[str], layout: HBaseLayout, classpath: str) -> JvmProcess:
        return JvmProcess(
            name=name,
            state_dir=self.run_dir,
            main_class=main,
            classpath=classpath,
            args=args,
            jvm_options=self.jvm_options(),
            heap_mb=layout.heap_mb,
            env={"HBASE_CONF_DIR": str(self.conf_dir)},
        )

    def processes(self, classpath: str = "") -> dict[str, JvmProcess]:
        """The cluster's JVMs by name: master, rs1..rsN, thrift (classpath only needed to start them)."""
        layout = self.layout()
        jvms = {"master": self._jvm("master", MASTER_MAIN, ["start"], layout, classpath)}
        for index, port in enumerate(layout.regionserver_ports, start=1):
            args = ["-D", f"hbase.regionserver.port={port}", "start"]
            jvms[f"rs{index}"] = self._jvm(f"rs{index}", REGIONSERVER_MAIN, args, layout, classpath)
        # A Kerberized cluster's Thrift server logs in to HBase from its keytab (hbase.thrift.keytab.file) and,
        # with no hbase.thrift.security.qop, takes unauthenticated clients (on loopback): happybase has no SASL
        thrift_args = ["-b", LOOPBACK, "-p", str(layout.thrift_port), "--infoport", "-1", "start"]
        jvms["thrift"] = self._jvm("thrift", THRIFT_MAIN, thrift_args, layout, classpath)
        return jvms

    def start(
        self,
        cluster: ClusterKey | str,
        *,
        regionservers: int = 1,
        heap_mb: int = 384,
        extra_site: Mapping[str, str] | None = None,
        rootdir: str = "",
        timeout: float = 240.0,
        kerberos: HBaseKerberos | None = None,
    ) -> HBaseLayout:
        """Start the master, ``regionservers`` region servers and Thrift; return once Thrift serves.
        ``kerberos`` makes it a Kerberized cluster (:class:`HBaseKerberos`; ZooKeeper must take SASL).

        ``cluster`` names the ZooKeeper quorum, its port and the znode parent HBase uses; ``rootdir``
        an hbase.rootdir URI elsewhere than ``<root>/hbase`` (``hdfs://127.0.0.1:<rpc port>/hbase``). Raises
        HBaseError if ZooKeeper does not answer, HBase already runs from this folder, or a JVM fails
        to start (every JVM started so far is stopped again).
        """
        key = ClusterKey.parse(cluster) if isinstance(cluster, str) else cluster
        if not 1 <= regionservers <= 9:
            raise HBaseError(f"--regionservers must be 1..9, not {regionservers}")
        if rootdir and not rootdir.startswith(("hdfs://", "file:/")):
            raise HBaseError(f"--rootdir must be an hdfs:// or file:/ URI, not {rootdir!r}")
        host, port = key.servers[0]
        if not port_accepts(port, host):
            raise HBaseError(f"ZooKeeper does not answer at {host}:{port} (start it first: hbrep zk start)")
        if self.state_file.exists() and any(p.running() for p in self.processes().values()):
            raise HBaseError(f"a real HBase already runs from {self.root} (hbrep hbase stop --root {self.root})")
        self._check_parent_is_ours(key, rootdir, kerberos)
        classpath = self.classpath()
        layout = HBaseLayout(
            zk_quorum=",".join(h for h, _ in key.servers),
            zk_port=port,
            znode_parent=key.znode_parent,
            master_port=free_port(),
            regionserver_ports=[free_port() for _ in range(regionservers)],
            thrift_port=free_port(),
            heap_mb=heap_mb,
            extra_site=dict(extra_site or {}),
            rootdir=rootdir,
            kerberos=asdict(kerberos) if kerberos is not None else {},
        )
        self.root.mkdir(parents=True, exist_ok=True)
        self.conf_dir.mkdir(exist_ok=True)
        if kerberos is not None:
            (self.conf_dir / "jaas.conf").write_text(kerberos.jaas())
            # Hadoop's UGI reads core-site.xml, not hbase-site.xml: tools then log in from hbase.client.keytab.file
            write_site_xml(self.conf_dir / "core-site.xml", {"hadoop.security.authentication": "kerberos"})
        (self.conf_dir / "log4j2.properties").write_text(LOG4J2)
        (self.conf_dir / "log4j2-tools.properties").write_text(LOG4J2_TOOLS)
        write_site_xml(self.site_file, site_values(self.root, layout))
        self.state_file.write_text(json.dumps(asdict(layout), indent=2) + "\n")
        jvms = self.processes(classpath)
        deadline = time.monotonic() + timeout
        try:
            jvms["master"].start(lambda: port_accepts(layout.master_port), timeout=_left(deadline))
            for index, rs_port in enumerate(layout.regionserver_ports, start=1):
                jvms[f"rs{index}"].start(lambda p=rs_port: port_accepts(p), timeout=_left(deadline))
            if "thrift" in jvms:
                jvms["thrift"].start(lambda: port_accepts(layout.thrift_port), timeout=_left(deadline))
            self.wait_ready(deadline)
        except (JvmProcessError, HBaseError) as exc:
            self.stop()
            raise HBaseError(f"real HBase did not start in {self.root}: {exc}") from None
        return layout

    def _check_parent_is_ours(self, key: ClusterKey, rootdir: str, kerberos: HBaseKerberos | None = None) -> None:
        """HBaseError when the znode parent holds another HBase's state (its meta location and server
        names would stall this master): a fresh root needs a fresh (or absent) parent. A root dir
        elsewhere (HDFS) is this cluster's own when this folder ran it before under the same parent."""
        if not rootdir and (self.rootdir / "hbase.id").exists():
            return
        if rootdir and self.state_file.exists():
            before = self.layout()
            if before.rootdir == rootdir and before.znode_parent == key.znode_parent:
                return
        identity = KerberosIdentity(kerberos.principal, kerberos.keytab) if kerberos is not None else None
        with connected(key, kerberos=identity) as zk:
            if zk.exists(f"{key.znode_parent}/hbaseid"):
                raise HBaseError(
                    f"znode parent {key.znode_parent} already holds another HBase cluster; "
                    f"use another parent in --cluster or remove it (the root {self.rootdir} is new)"
                )

    def restart(self, timeout: float = 240.0) -> HBaseLayout:
        """Stop every JVM and start the cluster again with its recorded settings (new ports).

        A running HBase 2.x master learns of peers only through its own procedures, so a peer written
        to ZooKeeper by another tool (``hbrep add_peer``) is loaded when the master starts.
        """
        layout = self.layout()
        self.stop()
        return self.start(
            layout.cluster_key,
            regionservers=len(layout.regionserver_ports),
            heap_mb=layout.heap_mb,
            extra_site=layout.extra_site,
            rootdir=layout.rootdir,
            timeout=timeout,
            kerberos=HBaseKerberos(**layout.kerberos) if layout.kerberos else None,
        )

    def wait_ready(self, deadline: float) -> None:
        """Wait until the master is initialized (Admin API) and Thrift lists tables; HBaseError at ``deadline``."""
        self.admin("wait-ready", str(int(_left(deadline))), timeout=_left(deadline) + 30)
        if self.layout().kerberos:
            return  # no Thrift server (see processes)
        error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                connection = self.happybase_connection()
                try:
                    connection.tables()
                    return
                finally:
                    connection.close()
            except Exception as exc:  # happybase/thriftpy2 raise several kinds while Thrift starts
                error = exc
            time.sleep(0.5)
        raise HBaseError(f"Thrift did not list tables in time (last error: {error})")

    def stop(self) -> list[str]:
        """Stop Thrift, the region servers, then the master; return the names that were running."""
        self._admin.close()
        if not self.state_file.exists():
            return []
        stopped = []
        jvms = self.processes()
        for name in [*[n for n in jvms if n == "thrift"], *[n for n in jvms if n.startswith("rs")], "master"]:
            if jvms[name].stop(timeout=20.0):
                stopped.append(name)
        return stopped

    def status(self) -> HBaseStatus:
        """Each JVM: running or not, pid, port, log file."""
        layout = self.layout()
        ports = {"master": layout.master_port, "thrift": layout.thrift_port}
        ports.update({f"rs{i}": p for i, p in enumerate(layout.regionserver_ports, start=1)})
        processes = {
            name: {
                "running": jvm.running(),
                "pid": jvm.read_pid() if jvm.running() else None,
                "port": ports[name],
                "listening": port_in_use(ports[name]),
                "log": str(jvm.log_file),
            }
            for name, jvm in self.processes().items()
        }
        return HBaseStatus(str(self.root), layout.cluster_key, processes)

    def log_files(self) -> list[Path]:
        """Every JVM log of this cluster (for a failing test's report)."""
        return sorted(self.run_dir.glob("*.log"))

    # -- one region server (failure tests) -----------------------------------------------------
    def regionserver(self, index: int) -> JvmProcess:
        """The JvmProcess of region server ``index`` (1-based), started with the cluster's classpath."""
        jvms = self.processes(self.classpath())
        name = f"rs{index}"
        if name not in jvms:
            raise HBaseError(f"no region server {index} in {self.root}")
        return jvms[name]

    def server_name(self, index: int) -> str:
        """The name ``host,port,startcode`` region server ``index`` registered in ZooKeeper."""
        port = self.layout().regionserver_ports[index - 1]
        live = self.admin("servers")
        for name in live:
            if name.split(",")[1] == str(port):
                return name
        raise HBaseError(f"region server {index} (port {port}) is not live: {live}")

    # -- clients and tools ----------------------------------------------------------------------
    def happybase_connection(self, **kwargs: Any) -> Any:
        """A happybase Connection to this cluster's Thrift server (buffered transport, binary protocol); a socket
        timeout of 60 s unless ``timeout`` (ms) says otherwise."""
        import happybase  # only the interop tests talk Thrift

        return happybase.Connection(LOOPBACK, self.layout().thrift_port, **{"timeout": 60_000, **kwargs})

    def regionserver_holding(self, table: str) -> int:
        """Which region server (1-based, as :meth:`regionserver`) holds ``table``'s only region (HBase's
        RegionLocator); HBaseError when the table has more than one region."""
        located = self.admin("locate", table)
        if len(located) != 1:
            raise HBaseError(f"table {table} has {len(located)} regions, not one: {located}")
        port = int(next(iter(located.values())).split(",")[1])
        return self.layout().regionserver_ports.index(port) + 1

    def put_until_taken(
        self, connection: Any, table: str, row: bytes, data: dict[bytes, bytes], *, timestamp: int | None = None,
        timeout: float = 240.0,
    ) -> Any:  # fmt: skip
        """Put one row through ``connection`` (a happybase Connection to this cluster), reconnecting and
        retrying the same put while its region is offline (a killed server's regions until the master
        reassigns them); the connection in use afterwards. The last error once ``timeout`` s have passed."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                connection.table(table).put(row, data, timestamp=timestamp)
                return connection
            except Exception:
                if time.monotonic() > deadline:
                    raise
                connection.close()
                time.sleep(0.5)
                connection = self.happybase_connection()

    def run_tool(
        self,
        main_class: str,
        args: Sequence[str],
        *,
        stdin: str | None = None,
        parse_json: bool = False,
        heap_mb: int = 256,
        timeout: float = 300.0,
        jvm_options: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> Any:
        """Run ``main_class`` (an HBase tool or hbrep's AdminTool) with this cluster's configuration, ``env``
        added to this process's environment.

        Returns its stdout (parsed as JSON with ``parse_json``); HBaseError with its stderr tail when
        it exits non-zero.
        """
        command = self.tool_command(main_class, args, heap_mb=heap_mb, jvm_options=jvm_options)
        environment = {**os.environ, **env} if env else None
        try:
            done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout,
                                  env=environment)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise HBaseError(f"{main_class} {' '.join(args[:2])} did not finish within {timeout:.0f}s") from None
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-15:])
            raise HBaseError(f"{main_class} {' '.join(args[:2])} exited {done.returncode}:\n{tail}", done.stdout)
        if parse_json:
            return json.loads(done.stdout)
        return done.stdout

    def tool_command(
        self, main_class: str, args: Sequence[str], *, heap_mb: int = 256, jvm_options: Sequence[str] = ()
    ) -> list[str]:
        """The ``java`` command line :meth:`run_tool` runs (for a tool that must run beside the test)."""
        options = [f"-Xmx{heap_mb}m", *self.jvm_options(tool=True), *jvm_options]
        return [*self._tool_login(), "java", *options, "-cp", self.classpath(), main_class, *args]

    def _tool_login(self) -> list[str]:
        """For a Kerberized cluster, a fresh ticket of its principal in a cache of the tools' own (``kinit``)
        and the ``env KRB5CCNAME=...`` prefix that hands it to Hadoop's UGI; nothing otherwise."""
        kerberos = self.layout().kerberos if self.state_file.exists() else {}
        if not kerberos:
            return []
        secure = HBaseKerberos(**kerberos)
        cache = f"FILE:{self.conf_dir / 'tools.ccache'}"
        kinit = shutil.which("kinit") or "kinit"
        done = subprocess.run(
            [kinit, "-kt", secure.keytab, "-c", cache, secure.principal],
            capture_output=True, text=True, env={**os.environ, "KRB5_CONFIG": secure.krb5_conf}, timeout=60,
        )  # fmt: skip
        if done.returncode != 0:
            raise HBaseError(f"kinit {secure.principal} for HBase's tools failed: {done.stderr.strip()}")
        return ["env", f"KRB5CCNAME={cache}", f"KRB5_CONFIG={secure.krb5_conf}"]

    def admin(self, *args: str, stdin: str | None = None, timeout: float = 300.0) -> Any:
        """Run one AdminTool command (HBase's Admin API) and return its JSON answer; HBaseError (one line)
        when it fails or takes over ``timeout`` seconds.

        It runs in the cluster's served AdminTool JVM (devstack/admin_server.py), started at the first call
        and ended by :meth:`stop`. In a JVM of its own: on a Kerberized cluster (its tools log in afresh
        each run, see ``_tool_login``), ``hold-open``, and while another thread's command holds the served one.
        """
        kerberized = self.state_file.exists() and bool(self.layout().kerberos)
        if kerberized or not args or args[0] == "hold-open" or self._admin.busy():
            return self.run_tool(ADMIN_TOOL_MAIN, list(args), stdin=stdin, parse_json=True, timeout=timeout)
        try:
            return self._admin.call(args, stdin=stdin, timeout=timeout)
        except AdminServerError as exc:
            raise HBaseError(str(exc)) from None

    def verify_replication(
        self, peer_id: str, table: str, families: Sequence[str] = (), timeout: float = 600.0
    ) -> dict[str, int]:
        """HBase's own VerifyReplication (hbase-mapreduce, local job runner) of ``table`` against peer
        ``peer_id`` of this cluster; its counters (GOODROWS, BADROWS, ...), the peer read 1,000 rows per scan RPC.
        HBaseError when the job fails."""
        log_conf = self.conf_dir / "log4j2-verify.properties"  # the job's counters are logged at INFO
        log_conf.write_text(
            LOG4J2_TOOLS + "logger.job.name = org.apache.hadoop.mapreduce.Job\nlogger.job.level = INFO\n"
        )
        # the mapper reads the peer with hbase.mapreduce.scan.cachedrows rows per scan RPC (HBase's default: 1)
        args = (
            [f"-D{SCAN_CACHEDROWS}=1000"]
            + ([f"--families={','.join(families)}"] if families else [])
            + [peer_id, table]
        )
        options = [f"-Dlog4j2.configurationFile={log_conf}", f"-Dhadoop.tmp.dir={self.root / 'tmp' / 'mapreduce'}"]
        command = self.tool_command(VERIFY_REPLICATION_MAIN, args, heap_mb=512, jvm_options=options)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HBaseError(f"VerifyReplication of {table} did not finish within {timeout:.0f}s") from None
        counters = {name: int(value) for name, value in VERIFY_COUNTER.findall(done.stderr)}
        if done.returncode != 0 or ("GOODROWS" not in counters and "BADROWS" not in counters):
            tail = "\n".join(done.stderr.strip().splitlines()[-15:])
            raise HBaseError(f"VerifyReplication of {table} exited {done.returncode}:\n{tail}")
        return counters


def _left(deadline: float) -> float:
    return max(1.0, deadline - time.monotonic())
