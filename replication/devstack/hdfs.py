"""A real single-node HDFS on 127.0.0.1: Hadoop's own NameNode and one DataNode, as two JVMs.

Both run from the pinned Hadoop of ``interop/hbase/pom.xml`` (:func:`interop_classpath`), with a
configuration written into the state folder::

    <root>/conf/core-site.xml, hdfs-site.xml, log4j[2].properties   (HADOOP_CONF_DIR, first on -cp)
    <root>/web/webapps/...        the empty web apps Hadoop's HTTP servers look up on the classpath
    <root>/ports.json             the ports chosen on first start, kept for every later start
    <root>/name/  <root>/data/    NameNode metadata (formatted on first start) and DataNode blocks
    <root>/namenode.log|pid  <root>/datanode.log|pid  <root>/hdfs-audit.log (the NameNode's audit log)

Every address is on 127.0.0.1 (RPC, HTTP with WebHDFS, the DataNode's transfer/HTTP/IPC ports);
permissions are on (the superuser is the OS user running the NameNode), replication is 1, heartbeats
are short, so a killed DataNode is noticed in seconds. ``start`` returns only once the NameNode is out
of safe mode with a live DataNode and WebHDFS answers; it fails with one clear line and the log tail
otherwise. The object is meant for reuse (tests, the real HBase with its root dir here, benches).

With ``kerberos`` (:class:`HdfsKerberos`) the HDFS is a secure one: ``hadoop.security.authentication=kerberos``,
NameNode and DataNode logged in from a keytab, block access tokens on, and WebHDFS behind SPNEGO
(``dfs.web.authentication.kerberos.*``; the NameNode's redirects to the DataNode carry a delegation token). The
superuser is then the short name of the service principal (``hdfs``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from replication.devstack.jvm import DEV_SERVER_JIT_OPTIONS, JvmProcess, JvmProcessError, port_accepts
from replication.devstack.maven import interop_classpath
from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port, port_in_use

LOG = logging.getLogger(__name__)
NAMENODE_MAIN = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_MAIN = "org.apache.hadoop.hdfs.server.datanode.DataNode"
DFSADMIN_MAIN = "org.apache.hadoop.hdfs.tools.DFSAdmin"
FSSHELL_MAIN = "org.apache.hadoop.fs.FsShell"  # hdfs dfs
DATA_TRANSFER_QOPS = ("authentication", "integrity", "privacy")
PORT_NAMES = ("rpc", "http", "dn_xfer", "dn_http", "dn_ipc", "dn_proxy")
DATANODE_PORTS = ("dn_xfer", "dn_http", "dn_ipc", "dn_proxy")
# Hadoop 3.3 on Java 17: the reflective accesses its RPC and web layers make.
JAVA17_OPENS = tuple(
    f"--add-opens=java.base/{package}=ALL-UNNAMED"
    for package in ("java.lang", "java.util", "java.util.concurrent", "java.io", "java.nio", "sun.nio.ch", "java.net")
)

# The pinned classpath carries both reload4j (log4j 1, Hadoop's) and log4j2 (HBase's); whichever
# SLF4J binds first, the log goes to stdout (the JVM's log file) at INFO, without per-request noise;
# the NameNode's audit log (one line per operation: user, command, path) goes to hdfs-audit.log.
LOG4J1 = """\
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
log4j.logger.org.eclipse.jetty=WARN
log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=INFO,audit
log4j.additivity.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit=false
log4j.appender.audit=org.apache.log4j.FileAppender
log4j.appender.audit.File={audit_log}
log4j.appender.audit.layout=org.apache.log4j.PatternLayout
log4j.appender.audit.layout.ConversionPattern=%d{ISO8601} %m%n
log4j.logger.org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace=WARN
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""
LOG4J2 = """\
status = warn
appender.file.type = Console
appender.file.name = console
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
logger.jetty.name = org.eclipse.jetty
logger.jetty.level = warn
appender.audit.type = File
appender.audit.name = audit
appender.audit.fileName = {audit_log}
appender.audit.createOnDemand = true
appender.audit.layout.type = PatternLayout
appender.audit.layout.pattern = %d{ISO8601} %m%n
logger.audit.name = org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit
logger.audit.level = info
logger.audit.additivity = false
logger.audit.appenderRef.audit.ref = audit
logger.clienttrace.name = org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace
logger.clienttrace.level = warn
"""


class HdfsError(HbrepError):
    """The dev-stack HDFS could not be started, reached or driven."""


@dataclass
class HdfsStatus:
    """What ``status`` reports: the two JVMs, safe mode, live DataNodes and WebHDFS."""

    namenode_pid: int | None
    datanode_pid: int | None
    uri: str | None
    webhdfs_url: str | None
    safe_mode: bool | None
    live_datanodes: int | None
    webhdfs: bool
    datanode_registered: bool = False

    @property
    def ready(self) -> bool:
        """Both JVMs up, the DataNode registered, out of safe mode, WebHDFS answering."""
        return bool(
            self.namenode_pid
            and self.datanode_pid
            and self.datanode_registered
            and self.safe_mode is False
            and self.live_datanodes
            and self.webhdfs
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "ready": self.ready,
            "namenode_pid": self.namenode_pid,
            "datanode_pid": self.datanode_pid,
            "uri": self.uri,
            "webhdfs_url": self.webhdfs_url,
            "safe_mode": self.safe_mode,
            "live_datanodes": self.live_datanodes,
            "webhdfs": self.webhdfs,
            "datanode_registered": self.datanode_registered,
        }


@dataclass(frozen=True)
class HdfsKerberos:
    """A Kerberized HDFS's identities: the service principal of NameNode and DataNode (``hdfs/127.0.0.1@R``),
    WebHDFS's SPNEGO principal (``HTTP/127.0.0.1@R``, or ``*``: every ``HTTP/`` principal of the keytab, for a
    NameNode its clients reach by several names), the keytab holding them, the realm's krb5.conf, and the SASL
    protection of the DataNode's data-transfer port (``dfs.data.transfer.protection``: ``authentication``,
    ``integrity`` or ``privacy``, or several of them comma-separated, as Hadoop takes it)."""

    principal: str
    http_principal: str
    keytab: str
    krb5_conf: str
    data_transfer_protection: str = "privacy"

    def __post_init__(self) -> None:
        qops = [qop.strip() for qop in self.data_transfer_protection.split(",")]
        if not all(qop in DATA_TRANSFER_QOPS for qop in qops):
            raise HdfsError(
                f"dfs.data.transfer.protection {self.data_transfer_protection!r}: "
                f"expected one or more of {', '.join(DATA_TRANSFER_QOPS)}"
            )

    def site(self) -> tuple[dict[str, str], dict[str, str]]:
        """The core-site and hdfs-site keys of the secure mode."""
        core = {
            "hadoop.security.authentication": "kerberos",
            # Since Hadoop 3.2.1 WebHDFS on a secure NameNode takes its user from the HTTP authentication filter
            # only ("Security enabled but user not authenticated by filter" with the default simple type)
            "hadoop.http.authentication.type": "kerberos",
            "hadoop.http.authentication.kerberos.principal": self.http_principal,
            "hadoop.http.authentication.kerberos.keytab": self.keytab,
            "hadoop.http.authentication.simple.anonymous.allowed": "false",
            # the metrics the dev stack's readiness checks read (HdfsCluster.status) stay open, as a monitoring
            # scraper's would; everything else on the HTTP ports asks for SPNEGO
            "hadoop.http.authentication.kerberos.endpoint.whitelist": "/jmx",
        }
        hdfs = {
            "dfs.namenode.kerberos.principal": self.principal,
            "dfs.namenode.keytab.file": self.keytab,
            "dfs.datanode.kerberos.principal": self.principal,
            "dfs.datanode.keytab.file": self.keytab,
            "dfs.web.authentication.kerberos.principal": self.http_principal,
            "dfs.web.authentication.kerberos.keytab": self.keytab,
            "dfs.block.access.token.enable": "true",
            # SASL on the data-transfer port (Hadoop 3.3.5, read with javap): SaslDataTransferServer.receive does
            # the "general handshake" whenever DNConf.getSaslPropsResolver() is not null (this key is set) and
            # the port is unprivileged; it looks at DNConf.getIgnoreSecurePortsForTesting() only when no
            # protection is set. Every client of the port (the DataNode's own DFSClient serving WebHDFS, HBase's
            # and Spark's) reads this key from this hdfs-site and must do the handshake: a client without it is
            # refused ("Failed to read expected SASL data transfer protection handshake").
            "dfs.data.transfer.protection": self.data_transfer_protection,
            # Hadoop's switch for tests, kept for DataNode.checkSecureConfig only: with a SASL protection and no
            # privileged ports (root and jsvc) that startup check demands dfs.http.policy=HTTPS_ONLY, and it
            # returns early when this switch is on. The dev stack's WebHDFS stays on HTTP (SPNEGO).
            "ignore.secure.ports.for.testing": "true",
        }
        return core, hdfs

    def jvm_options(self) -> list[str]:
        """The realm's configuration for the JVMs (Hadoop logs in through the JDK's Kerberos)."""
        return [f"-Djava.security.krb5.conf={self.krb5_conf}"]


class HdfsCluster:
    """One NameNode and one DataNode owned through the state folder ``root`` (see module docstring)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        heap_mb: int = 384,
        classpath: str | None = None,
        kerberos: HdfsKerberos | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.heap_mb = heap_mb
        self._classpath = classpath
        self._ports: dict[str, int] | None = None
        self.kerberos = kerberos

    # -- layout ---------------------------------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        """HADOOP_CONF_DIR: core-site.xml and hdfs-site.xml (Hadoop clients such as HBase read these)."""
        return self.root / "conf"

    @property
    def ports_file(self) -> Path:
        return self.root / "ports.json"

    @property
    def ports(self) -> dict[str, int]:
        """The ports of this HDFS (chosen free on first start, then kept in ports.json)."""
        if self._ports is None:
            stored = self._stored_ports()
            if stored is None:
                raise HdfsError(f"no HDFS was ever started in {self.root} (no {self.ports_file.name})")
            missing = [name for name in PORT_NAMES if name not in stored]
            if missing:
                raise HdfsError(f"{self.ports_file} lacks the port(s) {', '.join(missing)}")
            self._ports = stored
        return self._ports

    def _stored_ports(self) -> dict[str, int] | None:
        """ports.json as read (None when there is none); HdfsError when it is not a JSON object of ports."""
        try:
            return {k: int(v) for k, v in json.loads(self.ports_file.read_text()).items()}
        except FileNotFoundError:
            return None
        except (ValueError, AttributeError, TypeError):
            raise HdfsError(f"{self.ports_file} is not a JSON object of ports") from None

    @property
    def uri(self) -> str:
        """``hdfs://127.0.0.1:<rpc>`` (fs.defaultFS, what Hadoop clients and HBase use)."""
        return f"hdfs://{LOOPBACK}:{self.ports['rpc']}"

    @property
    def http_url(self) -> str:
        """``http://127.0.0.1:<http>``: the NameNode's web server (WebHDFS, JMX)."""
        return f"http://{LOOPBACK}:{self.ports['http']}"

    @property
    def webhdfs_url(self) -> str:
        """``webhdfs://127.0.0.1:<http>``: a root URI prefix hbrep's FileSystem takes."""
        return f"webhdfs://{LOOPBACK}:{self.ports['http']}"

    def webhdfs_root(self, path: str, user: str | None = None) -> str:
        """An hbrep root URI for ``path`` on this HDFS, e.g. ``webhdfs://127.0.0.1:P/hbase?user=u``."""
        query = f"?user={user}" if user else ""
        return f"{self.webhdfs_url}/{path.lstrip('/')}{query}"

    @property
    def namenode(self) -> JvmProcess:
        """The NameNode JVM (pid and log in the state folder)."""
        return self._jvm("namenode", NAMENODE_MAIN)

    @property
    def datanode(self) -> JvmProcess:
        """The DataNode JVM (pid and log in the state folder)."""
        return self._jvm("datanode", DATANODE_MAIN)

    def classpath(self) -> str:
        """The conf dir, the web resources folder, then the pinned Hadoop/HBase jars (Maven, once)."""
        if self._classpath is None:
            self._classpath = interop_classpath()
        return f"{self.conf_dir}:{self.web_dir}:{self._classpath}"

    @property
    def web_dir(self) -> Path:
        """A classpath folder holding ``webapps/{hdfs,datanode,static}`` (see :meth:`write_config`)."""
        return self.root / "web"

    def _jvm(self, name: str, main: str, *, spawnable: bool = False) -> JvmProcess:
        # stop, status and kill need no classpath (and so no Maven); only a JVM about to start does
        classpath = self.classpath() if spawnable else ""
        options = (*DEV_SERVER_JIT_OPTIONS, *JAVA17_OPENS, f"-Dhadoop.log.dir={self.root}",
                   "-Djava.net.preferIPv4Stack=true", *self._kerberos_options())  # fmt: skip
        return JvmProcess(name, self.root, main, classpath, jvm_options=options, heap_mb=self.heap_mb,
                          env={"HADOOP_CONF_DIR": str(self.conf_dir)})  # fmt: skip

    def _kerberos_options(self) -> list[str]:
        return self.kerberos.jvm_options() if self.kerberos is not None else []

    # -- configuration --------------------------------------------------------------------------
    def _choose_ports(self, again: tuple[str, ...] = ()) -> bool:
        """Choose free ports on first start (True then), or choose ``again`` the named ones; keep them. A
        ports file of an older hbrep that lacks a port (``dn_proxy``) gets it chosen, the others kept (False:
        not a first start)."""
        stored = self._stored_ports()
        first_start = stored is None
        if stored is not None and not again:
            again = tuple(name for name in PORT_NAMES if name not in stored)
            if not again:
                return False
        kept = {name: port for name, port in (stored or {}).items() if name in PORT_NAMES and name not in again}
        chosen: list[int] = list(kept.values())
        while len(chosen) < len(PORT_NAMES):
            port = free_port()
            if port not in chosen:
                chosen.append(port)
        fresh = iter(chosen[len(kept) :])
        ports = {name: kept[name] if name in kept else next(fresh) for name in PORT_NAMES}
        self.root.mkdir(parents=True, exist_ok=True)
        self.ports_file.write_text(json.dumps(ports, indent=1) + "\n")
        self._ports = None
        return first_start

    def site_properties(self) -> tuple[dict[str, str], dict[str, str]]:
        """The core-site and hdfs-site properties written into the conf dir."""
        p = self.ports
        core = {
            "fs.defaultFS": self.uri,
            "hadoop.tmp.dir": str(self.root / "tmp"),
            "hadoop.security.authentication": "simple",
            "ipc.client.connect.max.retries": "3",
            "ipc.client.connect.retry.interval": "200",
        }
        hdfs = {
            "dfs.namenode.name.dir": f"file://{self.root / 'name'}",
            "dfs.datanode.data.dir": f"file://{self.root / 'data'}",
            "dfs.namenode.rpc-address": f"{LOOPBACK}:{p['rpc']}",
            "dfs.namenode.http-address": f"{LOOPBACK}:{p['http']}",
            "dfs.namenode.https-address": f"{LOOPBACK}:0",
            "dfs.namenode.secondary.http-address": f"{LOOPBACK}:0",
            "dfs.namenode.backup.address": f"{LOOPBACK}:0",
            "dfs.namenode.backup.http-address": f"{LOOPBACK}:0",
            "dfs.datanode.address": f"{LOOPBACK}:{p['dn_xfer']}",
            "dfs.datanode.http.address": f"{LOOPBACK}:{p['dn_http']}",
            "dfs.datanode.https.address": f"{LOOPBACK}:0",
            "dfs.datanode.ipc.address": f"{LOOPBACK}:{p['dn_ipc']}",
            # the DataNode's internal Jetty (behind its HTTP server), on localhost:0 by default: an ephemeral
            # port, which under make test once was the dn_ipc port chosen free a moment before (the IPC
            # server then failed with "Address already in use"); chosen with the others instead
            "dfs.datanode.http.internal-proxy.port": str(p["dn_proxy"]),
            "dfs.datanode.hostname": LOOPBACK,
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.webhdfs.enabled": "true",
            "dfs.permissions.enabled": "true",
            "dfs.permissions.superusergroup": "supergroup",
            "dfs.replication": "1",
            "dfs.namenode.replication.min": "1",
            "dfs.support.append": "true",
            "dfs.namenode.safemode.extension": "0",
            "dfs.namenode.safemode.min.datanodes": "1",
            "dfs.heartbeat.interval": "1",
            "dfs.namenode.heartbeat.recheck-interval": "3000",
            "dfs.blockreport.initialDelay": "0",
            "dfs.namenode.fs-limits.min-block-size": "1024",
            "dfs.client.block.write.replace-datanode-on-failure.enable": "false",
            # Not set here: dfs.client.block.write.locateFollowingBlock.initial.delay.ms 20 / .retries 12 (the
            # DataNode's DFSClient closes the file of each WebHDFS APPEND before answering, and those settings
            # cut a probe's median sync with 4 writers from 422 ms to 72 ms). With them (c9f9408), make bench
            # ONLY=failover_events failed twice in two runs on the distributed stack: a new WAL's second APPEND
            # got "No active nodes contain this block" through every retry. Without them it passed (13918c7, 07a6889).
            "dfs.datanode.du.reserved": "0",
            "dfs.namenode.resource.du.reserved": str(64 * 1024 * 1024),
            "dfs.datanode.handler.count": "3",
            "dfs.namenode.handler.count": "5",
            "dfs.namenode.service.handler.count": "3",
        }
        if self.kerberos is not None:
            secure_core, secure_hdfs = self.kerberos.site()
            core |= secure_core
            hdfs |= secure_hdfs
        return core, hdfs

    def write_config(self) -> None:
        """Write core-site.xml, hdfs-site.xml and the log4j configurations into the conf dir."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        core, hdfs = self.site_properties()
        (self.conf_dir / "core-site.xml").write_text(_site_xml(core))
        (self.conf_dir / "hdfs-site.xml").write_text(_site_xml(hdfs))
        # the audit log's path written out: every JVM with this conf dir on its classpath (Spark's, HBase's tools)
        # reads these files, and one without -Dhadoop.log.dir made a literal "${sys:hadoop.log.dir}" folder in
        # its working folder (one was committed by mistake in 8f58328)
        audit_log = str(self.root / "hdfs-audit.log")
        (self.conf_dir / "log4j.properties").write_text(LOG4J1.replace("{audit_log}", audit_log))
        (self.conf_dir / "log4j2.properties").write_text(LOG4J2.replace("{audit_log}", audit_log))
        # Hadoop's HTTP servers look for webapps/<name> on the classpath; the jars Maven Central
        # publishes leave them out (the tarball ships them beside the jars). WebHDFS and /jmx are
        # servlets registered in code, so an empty web app is all they need (the HTML UI is absent).
        for app in ("hdfs", "datanode", "static"):
            folder = self.web_dir / "webapps" / app
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "index.html").write_text(f"<p>hbrep dev-stack HDFS ({app}): see /jmx and /webhdfs/v1/</p>\n")

    @property
    def formatted(self) -> bool:
        return (self.root / "name" / "current" / "VERSION").exists()

    def format(self, timeout: float = 180.0) -> None:
        """``NameNode -format -nonInteractive`` (fresh metadata; the DataNode's old blocks are dropped)."""
        data = self.root / "data"
        if data.exists():
            shutil.rmtree(data)  # blocks of another namespace would make the DataNode refuse to join
        self._run_tool("namenode-format", NAMENODE_MAIN, ["-format", "-nonInteractive", "-force"], timeout)

    # -- life cycle -----------------------------------------------------------------------------
    def start(self, timeout: float = 180.0) -> None:
        """Start (formatting on first start) and return once ready; one clear HdfsError otherwise.

        A NameNode or DataNode already running from this folder is kept, so a second ``start`` is
        harmless. On the first start a port taken since it was chosen is chosen again; after that, a
        port of ours taken by another process is refused before anything starts.
        """
        first_start = self._choose_ports()
        self.write_config()
        deadline = time.monotonic() + timeout
        if not self.namenode.running():
            if first_start:
                self._choose_taken_again(("rpc", "http"))
            self._refuse_taken(("rpc", "http"))
            if not self.formatted:
                self.format(timeout=timeout)
            self._start(
                self._jvm("namenode", NAMENODE_MAIN, spawnable=True),
                lambda: port_accepts(self.ports["rpc"]) and self._jmx_ok(),
                deadline,
            )
        if not self.datanode.running():
            if first_start:
                self._choose_taken_again(DATANODE_PORTS)
            self.start_datanode(timeout=max(5.0, deadline - time.monotonic()))
        self.wait_ready(timeout=max(5.0, deadline - time.monotonic()))

    # A port chosen free a moment ago can be taken before its server binds it: by another process of
    # the machine, or by an outgoing connection of the NameNode started in between, since free ports
    # come from the ephemeral range (seen once under make test: "dn_ipc 41101 already in use"). On the
    # first start nothing depends on the ports yet, so a taken one is chosen again; after that they are
    # this HDFS's addresses (clients and the DataNode's registration use them) and a taken one is refused.
    def _choose_taken_again(self, names: tuple[str, ...]) -> None:
        for _ in range(5):
            taken = tuple(name for name in names if port_in_use(self.ports[name]))
            if not taken:
                return
            LOG.info("HDFS in %s: port(s) %s taken since they were chosen; choosing again", self.root, taken)
            self._choose_ports(again=taken)
            self.write_config()

    def start_datanode(self, timeout: float = 120.0) -> None:
        """Start the DataNode (same ports and blocks as before); return once it reported its blocks."""
        self._refuse_taken(DATANODE_PORTS)
        datanode = self._jvm("datanode", DATANODE_MAIN, spawnable=True)
        self._start(datanode, self._datanode_registered, time.monotonic() + timeout)

    def _start(self, jvm: JvmProcess, ready: Callable[[], bool], deadline: float) -> None:
        try:
            jvm.start(ready, timeout=max(5.0, deadline - time.monotonic()))
        except JvmProcessError as exc:
            raise HdfsError(f"HDFS in {self.root}: {exc}") from None

    def _refuse_taken(self, names: tuple[str, ...]) -> None:
        taken = [f"{name} {self.ports[name]}" for name in names if port_in_use(self.ports[name])]
        if taken:
            raise HdfsError(f"HDFS in {self.root} cannot start: port(s) {', '.join(taken)} already in use")

    def wait_ready(self, timeout: float = 120.0) -> HdfsStatus:
        """Wait until out of safe mode with a live DataNode and WebHDFS answering; HdfsError if not."""
        deadline = time.monotonic() + timeout
        state = self.status()
        while not state.ready:
            for jvm, pid in ((self.namenode, state.namenode_pid), (self.datanode, state.datanode_pid)):
                if pid is None:
                    raise HdfsError(f"HDFS in {self.root}: the {jvm.name} is not running{jvm.log_tail_suffix()}")
            if time.monotonic() > deadline:
                raise HdfsError(
                    f"HDFS in {self.root} not ready within {timeout:.0f}s (safe mode {state.safe_mode}, "
                    f"live DataNodes {state.live_datanodes}, WebHDFS {'up' if state.webhdfs else 'down'})"
                    f"{self.namenode.log_tail_suffix()}"
                )
            time.sleep(0.3)
            state = self.status()
        return state

    def stop(self) -> bool:
        """Stop the DataNode, then the NameNode; True if either ran. No process is left behind."""
        if not self.ports_file.exists():
            return False
        stopped_dn = self.datanode.stop()
        stopped_nn = self.namenode.stop()
        return stopped_dn or stopped_nn

    def kill_datanode(self) -> None:
        """SIGKILL the DataNode (failure tests); ``start_datanode`` brings it back on the same ports."""
        self.datanode.kill()

    def status(self) -> HdfsStatus:
        """The state of both JVMs and what the NameNode's JMX and WebHDFS say right now."""
        if not self.ports_file.exists():
            return HdfsStatus(None, None, None, None, None, None, False)
        nn_pid = self.namenode.read_pid() if self.namenode.running() else None
        dn_pid = self.datanode.read_pid() if self.datanode.running() else None
        safe_mode = live = None
        webhdfs = False
        if nn_pid:
            info = self._jmx("Hadoop:service=NameNode,name=NameNodeInfo")
            state = self._jmx("Hadoop:service=NameNode,name=FSNamesystemState")
            if info is not None:
                safe_mode = bool(info.get("Safemode"))
            if state is not None:
                live = int(state.get("NumLiveDataNodes", 0))
            webhdfs = self._webhdfs_answers()
        registered = bool(dn_pid) and self._datanode_registered()
        return HdfsStatus(nn_pid, dn_pid, self.uri, self.webhdfs_url, safe_mode, live, webhdfs, registered)

    # -- NameNode queries -----------------------------------------------------------------------
    def _get_json(self, path: str, base: str | None = None) -> Any:
        try:
            with urllib.request.urlopen(f"{base or self.http_url}{path}", timeout=5) as response:
                return json.loads(response.read())
        except (OSError, ValueError, urllib.error.URLError):
            return None

    def _jmx(self, bean: str, base: str | None = None) -> dict[str, Any] | None:
        answer = self._get_json(f"/jmx?qry={bean}", base)
        beans = answer.get("beans") if isinstance(answer, dict) else None
        return beans[0] if beans else None

    def _jmx_ok(self) -> bool:
        return self._jmx("Hadoop:service=NameNode,name=NameNodeInfo") is not None

    def _datanode_registered(self) -> bool:
        """The DataNode's own JMX: its transfer port accepts and it has sent a block report to the NameNode.

        (The NameNode's live count alone is not enough: after a SIGKILL it still counts the dead
        DataNode until the heartbeat recheck expires.)
        """
        # one attribute only: reading the whole bean before the storage is up logs an NPE per attribute
        answer = self._get_json(
            "/jmx?get=Hadoop:service=DataNode,name=DataNodeInfo::BPServiceActorInfo",
            f"http://{LOOPBACK}:{self.ports['dn_http']}",
        )
        beans = answer.get("beans") if isinstance(answer, dict) else None
        info = beans[0] if beans else None
        try:
            actors = json.loads(info["BPServiceActorInfo"]) if info else []
        except (KeyError, TypeError, ValueError):
            return False
        reported = any(a.get("ActorState") == "RUNNING" and a.get("LastBlockReport") not in (None, "") for a in actors)
        # the transfer port last: with SASL data-transfer protection each bare connect-and-close logs an ERROR
        # with a stack trace (an EOFException in SaslDataTransferServer.doSaslHandshake), so probe it once
        return reported and port_accepts(self.ports["dn_xfer"])

    def _webhdfs_answers(self) -> bool:
        """WebHDFS answers: the root's status, or, behind SPNEGO, a 401 asking for Kerberos (``Negotiate``)."""
        if self.kerberos is not None:
            try:
                urllib.request.urlopen(f"{self.http_url}/webhdfs/v1/?op=GETFILESTATUS", timeout=5).close()
            except urllib.error.HTTPError as exc:
                return exc.code == 401 and "negotiate" in (exc.headers.get("WWW-Authenticate") or "").lower()
            except OSError:
                return False
            return False
        answer = self._get_json("/webhdfs/v1/?op=GETFILESTATUS")
        return isinstance(answer, dict) and "FileStatus" in answer

    @property
    def audit_log(self) -> Path:
        """The NameNode's audit log: one line per namespace operation (``ugi=USER ... cmd=OP src=PATH``)."""
        return self.root / "hdfs-audit.log"

    def audit_entries(self, path: str) -> list[dict[str, str]]:
        """The audit records whose ``src`` is ``path``, oldest first, as dicts (ugi, cmd, src, dst, ...)."""
        try:
            lines = self.audit_log.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return []
        records = []
        for line in lines:
            fields = dict(part.split("=", 1) for part in line.split("\t") if "=" in part)
            if fields.get("src") == path:
                records.append(fields)
        return records

    def datanode_metrics(self) -> dict[str, Any]:
        """The DataNode's activity counters (``BytesRead``, ``BytesWritten``, ``ReadBlockOpNumOps``...)."""
        base = f"http://{LOOPBACK}:{self.ports['dn_http']}"
        bean = self._jmx(f"Hadoop:service=DataNode,name=DataNodeActivity-{LOOPBACK}-{self.ports['dn_xfer']}", base)
        if bean is None:
            raise HdfsError(f"the DataNode of {self.root} does not answer JMX at {base}")
        return bean

    # -- admin tools ----------------------------------------------------------------------------
    def dfsadmin(self, *args: str, timeout: float = 120.0) -> str:
        """Run ``hdfs dfsadmin ARGS`` (DFSAdmin from the same classpath) as the superuser; its output."""
        return self._run_tool("dfsadmin", DFSADMIN_MAIN, list(args), timeout)

    def enter_safe_mode(self) -> None:
        """``hdfs dfsadmin -safemode enter``: the namespace becomes read-only."""
        self.dfsadmin("-safemode", "enter")

    def leave_safe_mode(self) -> None:
        """``hdfs dfsadmin -safemode leave``."""
        self.dfsadmin("-safemode", "leave")

    def tool_command(self, main: str, *args: str) -> tuple[list[str], dict[str, str]]:
        """The command and environment of a short-lived Hadoop tool (``main``: DFSAdmin, :data:`FSSHELL_MAIN`...)
        on this HDFS's classpath and conf dir, with its realm's krb5.conf when Kerberized; the caller runs it
        (a Kerberized tool logs in from the ticket cache of ``KRB5CCNAME``)."""
        java = shutil.which("java")
        if java is None:
            raise HdfsError(f"java not found on PATH (the HDFS tool {main} needs Java 17)")
        options = ("-Xmx192m", *DEV_SERVER_JIT_OPTIONS, *JAVA17_OPENS, *self._kerberos_options())
        command = [java, *options, "-cp", self.classpath(), main, *args]
        return command, {**os.environ, "HADOOP_CONF_DIR": str(self.conf_dir)}

    def _run_tool(self, name: str, main: str, args: list[str], timeout: float) -> str:
        command, env = self.tool_command(main, *args)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.root, env=env)
        except subprocess.TimeoutExpired:
            raise HdfsError(f"HDFS {name} {' '.join(args)} did not finish within {timeout:.0f}s") from None
        output = done.stdout + done.stderr
        (self.root / f"{name}.log").write_text(output)
        if done.returncode != 0:
            tail = "\n".join(output.strip().splitlines()[-10:])
            raise HdfsError(f"HDFS {name} {' '.join(args)} failed (exit {done.returncode}):\n{tail}")
        return output


def _site_xml(properties: dict[str, str]) -> str:
    body = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n" for k, v in properties.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'
