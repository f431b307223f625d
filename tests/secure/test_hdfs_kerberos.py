"""hbrep on a Kerberized HDFS: a real NameNode and DataNode with ``hadoop.security.authentication=kerberos`` and
WebHDFS behind SPNEGO (``devstack/hdfs.py``, ``HdfsKerberos``), on the module's KDC and SASL-only ZooKeeper.

hbrep's WebHDFS client (``?auth=kerberos``) authenticates as the process's principal (``fs/spnego.py``): the
NameNode's audit log names that principal for what it did. An hbrep cluster whose root is on that HDFS runs a
ship cycle into a peer, and the peer ends with exactly the source's cells. Each refusal is one line, and
nothing is written: no ticket, an hbrep without Kerberos at a Kerberized WebHDFS, a principal HDFS's
permissions refuse. On a Spark standalone master, the verify job (spark-submit) and ``hbrep verify --in-process``
(a session of ``replication.spark.spark_session``) read table files there with the delegation tokens their
driver got from hbrep's keytab (``spark_tokens.py``). The DataNode's transfer port demands SASL with privacy
(``dfs.data.transfer.protection``): Hadoop's own Java client reads what hbrep wrote with the HDFS's hdfs-site, and
gets no block without a protection or with authentication only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from support import create_table, table_state

from replication.checks.verify import VerifyOptions, verify_tables
from replication.cluster.embedded import start_cluster
from replication.cluster.info import ClusterInfo, write_cluster_info
from replication.config import Config
from replication.devstack.hdfs import FSSHELL_MAIN, HdfsCluster, HdfsKerberos
from replication.devstack.spark_cluster import SparkCluster
from replication.fs import FileSystemError, get_filesystem
from replication.jobs.connect import connect_session
from replication.jobs.launch import runner_for
from replication.jobs.verify import submit_verify
from replication.kerberos import KerberosIdentity, login, spark_login_conf
from replication.net import free_port
from replication.source.cycle import run_cycle
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.table_files import write_cells
from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.reader import open_wal
from replication.wal.writer import ProtobufLogWriter
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage

pytestmark = pytest.mark.slow

ROOT = "/hbrep"  # owned by hbrep's principal (made by HDFS's superuser, the service principal)


@dataclass
class SecureHdfs:
    cluster: HdfsCluster
    superuser: KerberosIdentity  # hdfs/127.0.0.1: the principal NameNode and DataNode run as

    def uri(self, path: str) -> str:
        """A Kerberos root URI on this HDFS."""
        return f"{self.cluster.webhdfs_url}{path}?auth=kerberos"

    def audit_users(self, path: str) -> set[str]:
        """The users the audit log names for ``path``: ``hbrep (auth:KERBEROS)`` for what the NameNode did on a
        SPNEGO request, ``hbrep (auth:TOKEN)`` for what the DataNode did with the delegation token it was given."""
        return {entry["ugi"] for entry in self.cluster.audit_entries(path)}


@pytest.fixture(scope="module")
def secure_hdfs(kerberized_zk, tmp_path_factory) -> Iterator[SecureHdfs]:
    kdc = kerberized_zk.kdc
    keytab = kdc.keytab_dir / "hdfs-services.keytab"
    service = kdc.add_principal("hdfs/127.0.0.1", keytab=keytab)
    # WebHDFS's SPNEGO principals: hbrep's client asks for HTTP/<the URL's host> (127.0.0.1); Hadoop's Java client
    # in Spark's JVM asks for HTTP/<its canonical name> (localhost). "*" takes every HTTP/ principal of the keytab
    for host in ("127.0.0.1", "localhost"):
        kdc.add_principal(f"HTTP/{host}", keytab=keytab)
    cluster = HdfsCluster(
        tmp_path_factory.mktemp("secure-hdfs"),
        kerberos=HdfsKerberos(service.principal, "*", str(keytab), str(kdc.krb5_conf)),
    )
    cluster.start()
    try:
        stack = SecureHdfs(cluster, KerberosIdentity(service.principal, str(keytab)))
        login(stack.superuser)
        fs, _ = get_filesystem(stack.uri("/"))
        fs.mkdirs(ROOT)
        fs.client.set_owner(ROOT, owner="hbrep")
        yield stack
    finally:
        cluster.stop()


@pytest.fixture
def as_hbrep(kerberized_zk, monkeypatch) -> KerberosIdentity:
    """This process logged in as hbrep's principal from its keytab (its ticket cache variables restored after)."""
    for name in ("KRB5CCNAME", "KRB5_CLIENT_KTNAME"):
        monkeypatch.delenv(name, raising=False)  # monkeypatch puts back what was there, whatever login() sets
    identity = KerberosIdentity(kerberized_zk.hbrep.principal, str(kerberized_zk.hbrep.path))
    login(identity)
    return identity


def test_a_wal_hbrep_writes_on_kerberized_hdfs_reads_back_and_hdfs_saw_hbreps_principal(secure_hdfs, as_hbrep):
    fs, _ = get_filesystem(secure_hdfs.uri(ROOT))
    path = f"{ROOT}/wal-{uuid.uuid4().hex[:6]}"
    entries = [
        Entry(
            WALKey(encoded_region_name=b"r" * 32, table_name=b"t", log_sequence_number=i, write_time=1000 + i),
            [Cell(b"row%d" % i, b"f", b"q", 1000 + i, CellType.PUT, b"v%d" % i)],
        )
        for i in range(1, 6)
    ]
    writer = ProtobufLogWriter(path, fs=fs)
    for entry in entries[:3]:
        writer.append(entry)
    writer.sync()  # one APPEND through the DataNode the NameNode redirected to (a delegation token)
    for entry in entries[3:]:
        writer.append(entry)
    writer.close()
    with open_wal(path, fs=fs) as reader:
        assert [item.entry.cells for item in reader] == [e.cells for e in entries]
    assert secure_hdfs.audit_users(path) == {"hbrep (auth:KERBEROS)", "hbrep (auth:TOKEN)"}


def test_the_datanode_demands_sasl_privacy_of_every_client_of_its_transfer_port(
    secure_hdfs, kerberized_zk, as_hbrep, tmp_path
):
    fs, _ = get_filesystem(secure_hdfs.uri(ROOT))
    path = f"{ROOT}/sasl-{uuid.uuid4().hex[:6]}"
    data = b"written by hbrep through WebHDFS: the DataNode's own DFSClient did the SASL handshake\n" * 64
    with fs.create(path) as out:
        out.write(data)
    cache = tmp_path / "hbrep-cache"
    kerberized_zk.kdc.kinit(kerberized_zk.hbrep, cache)  # Hadoop's Java login reads a FILE ticket cache
    datanode_log = secure_hdfs.cluster.datanode.log_file
    seen = datanode_log.stat().st_size
    once = ("-D", "dfs.client.max.block.acquire.failures=0")  # one attempt, not 3 with seconds of wait between
    clients = {
        "hdfs-site": (),  # the HDFS's own client configuration: dfs.data.transfer.protection=privacy
        "unprotected": ("-D", "dfs.data.transfer.protection=", *once),
        "authentication": ("-D", "dfs.data.transfer.protection=authentication", *once),
    }
    running = {}
    for name, options in clients.items():  # hdfs dfs -get (its log goes to stdout), the three JVMs at once
        copy = tmp_path / f"{name}.copy"
        command, env = secure_hdfs.cluster.tool_command(FSSHELL_MAIN, *options, "-get", path, str(copy))
        env["KRB5CCNAME"] = f"FILE:{cache}"
        output = (tmp_path / f"{name}.log").open("wb")
        running[name] = (subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT), output, copy)
    results = {}
    for name, (process, output, copy) in running.items():
        code = process.wait(timeout=120)
        output.close()
        copied = copy.read_bytes() if copy.exists() else None
        results[name] = (code, copied, (tmp_path / f"{name}.log").read_text(errors="replace"))
    code, copied, log = results["hdfs-site"]
    assert code == 0 and copied == data, log[-3000:]
    code, copied, log = results["unprotected"]
    assert code != 0 and copied is None, log[-3000:]
    assert "get: Could not obtain block: " in log, log[-3000:]
    code, copied, log = results["authentication"]
    assert code != 0 and copied is None, log[-3000:]
    assert "SaslException: DIGEST-MD5: No common protection layer between client and server" in log, log[-3000:]
    # the DataNode's side of both refusals (it may log a moment after the client gave up)
    expected = (
        "Failed to read expected SASL data transfer protection handshake from client at",
        "InvalidMagicNumberException: Received 1c51",  # the first bytes of a READ_BLOCK op (version 28, op 81)
        "instead of deadbeef from client.",  # ... not SaslDataTransferServer's magic number
        "java.io.IOException: DIGEST-MD5: No common protection layer between client and server",
    )
    deadline = time.monotonic() + 10
    while True:
        with datanode_log.open("rb") as log:
            log.seek(seen)
            logged = log.read().decode(errors="replace")
        if all(line in logged for line in expected) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [line for line in expected if line not in logged] == [], logged[-5000:]


def test_refusals_are_one_line_and_write_nothing(secure_hdfs, kerberized_zk, as_hbrep, monkeypatch):
    path = f"{ROOT}/refused-{uuid.uuid4().hex[:6]}"
    # no ticket: an empty cache and no keytab
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{kerberized_zk.kdc.state_dir / 'no-cache'}")
    monkeypatch.delenv("KRB5_CLIENT_KTNAME", raising=False)
    fs, _ = get_filesystem(secure_hdfs.uri(ROOT))
    with pytest.raises(FileSystemError) as no_ticket:
        fs.create(path).close()
    assert "\n" not in str(no_ticket.value) and "no Kerberos ticket" in str(no_ticket.value), no_ticket.value
    # an hbrep without Kerberos at a Kerberized WebHDFS
    simple, _ = get_filesystem(f"{secure_hdfs.cluster.webhdfs_url}{ROOT}")
    with pytest.raises(FileSystemError) as not_kerberos:
        simple.create(path).close()
    assert "\n" not in str(not_kerberos.value) and "?auth=kerberos" in str(not_kerberos.value), not_kerberos.value
    # another principal of the realm: authenticated, and refused by HDFS's permissions on hbrep's root
    login(KerberosIdentity(kerberized_zk.intruder.principal, str(kerberized_zk.intruder.path)))
    other, _ = get_filesystem(secure_hdfs.uri(ROOT))
    with pytest.raises(FileSystemError) as denied:
        other.create(path).close()
    assert "\n" not in str(denied.value) and "AccessControlException" in str(denied.value), denied.value
    assert "intruder" in str(denied.value), denied.value
    login(as_hbrep)
    mine, _ = get_filesystem(secure_hdfs.uri(ROOT))
    assert not mine.exists(path)  # nothing of the refused writes is there


def test_a_ship_cycle_from_a_cluster_on_kerberized_hdfs_leaves_the_peer_with_its_cells(
    secure_hdfs, kerberized_zk, as_hbrep, spark, tmp_path
):
    conf = kerberized_zk.conf().with_overrides({"replication.source.sleepforretries": "50"})
    tag = uuid.uuid4().hex[:8]
    port = kerberized_zk.zookeeper.port
    keys = {name: f"127.0.0.1:{port}:/hbase-{name}-{tag}" for name in ("ha", "hb")}
    source_root = secure_hdfs.uri(f"{ROOT}/ha-{tag}")
    peer = start_cluster(keys["hb"], str(tmp_path / "hb"), 1, conf=conf, name="hb")
    try:
        source = start_cluster(keys["ha"], source_root, 1, conf=conf, name="ha")
        try:
            for cluster in (source, peer):
                create_table(cluster, "t", ("f", 1))
            source_key = ClusterKey.parse(keys["ha"])
            with connected(source_key, **zk_options(conf)) as zk:
                ReplicationPeerStorage(zk, source.paths).add_peer("1", ReplicationPeerConfig(cluster_key=keys["hb"]))
            with source.client() as client:
                for i in range(30):
                    client.put("t", f"row{i:02d}".encode(), b"f", b"q", f"v{i}".encode())
                client.delete("t", b"row07")
            with connected(source_key, **zk_options(conf)) as zk:
                report = run_cycle(zk, source_key, conf, runner=runner_for(conf, spark))
            assert report.queues and all(q.status == "ok" for q in report.queues), report.as_dict()
            # the peer holds exactly what was written: every cell of its table is one of the source WALs' cells
            # (read from the Kerberized HDFS by hbrep's reader), and the rows are the ones written and not deleted
            rows = table_state(spark, peer, "t")
            assert {(r[0], r[5]) for r in rows} == {(f"row{i:02d}".encode(), f"v{i}".encode()) for i in range(30)} - {
                (b"row07", b"v7")
            }
            (server,) = source.servers
            fs, root = get_filesystem(source_root)
            wal_dir = f"{root}/WALs/{server}"
            wals = [status.path for status in fs.list(wal_dir)]
            assert wals, f"no WAL in {wal_dir}"
            written = set()
            for wal in wals:
                with open_wal(wal, fs=fs) as reader:
                    written |= {
                        (c.row, c.family, c.qualifier, c.timestamp, int(c.type), c.value)
                        for item in reader
                        for c in item.entry.cells
                    }
            assert {(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows} <= written
            # HBase's VerifyReplication as a user runs it (spark-submit): Spark's JVM reads the source's table files
            # on the Kerberized HDFS, logged in from hbrep's keytab (spark.kerberos.principal / keytab)
            with source.client() as client:
                client.flush("t")
            with peer.client() as client:
                client.flush("t")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("HBREP__", "KRB5"))}
            env.update(kerberized_zk.cli_env())
            # the Kerberized HDFS's client configuration, as an operator points Spark at it: Hadoop's login in the
            # JVM reads hadoop.security.authentication from core-site.xml, not from Spark's settings
            env["HADOOP_CONF_DIR"] = str(secure_hdfs.cluster.conf_dir)
            done = subprocess.run(
                [sys.executable, "-m", "replication.cli", "--cluster", keys["ha"], "verify", "1", "t", "--json"],
                capture_output=True, text=True, env=env, timeout=300,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            counters = json.loads(done.stdout)["counters"]
            assert counters["GOODROWS"] == 29 and counters.get("BADROWS", 0) == 0, counters
            # the region server wrote its WALs as hbrep's principal
            assert "hbrep (auth:KERBEROS)" in secure_hdfs.audit_users(wals[0])
            assert secure_hdfs.audit_users(wals[0]) <= {"hbrep (auth:KERBEROS)", "hbrep (auth:TOKEN)"}
        finally:
            source.stop()
    finally:
        peer.stop()


def test_jobs_on_a_standalone_master_read_kerberized_hdfs_with_delegation_tokens_from_the_driver(
    secure_hdfs, kerberized_zk, as_hbrep, tmp_path
):
    # a source and a peer root on the Kerberized HDFS, each with the same table file (written by hbrep's client)
    roots, files, cells = _two_roots_with_one_table(secure_hdfs, "standalone", 12)
    # ... and as two hbrep clusters (their ClusterInfo in ZooKeeper; no region server), for the CLI below
    conf = kerberized_zk.conf()
    port = kerberized_zk.zookeeper.port
    tag = uuid.uuid4().hex[:6]
    keys = [f"127.0.0.1:{port}:/hbase-standalone-{side}-{tag}" for side in ("source", "peer")]
    with connected(ClusterKey.parse(keys[0]), **zk_options(conf)) as zk:
        for key, root in zip(keys, roots, strict=True):
            parent = ClusterKey.parse(key).znode_parent
            write_cluster_info(zk, parent, ClusterInfo(parent.strip("/"), root, parent))
    # a Spark standalone master with one Worker: Spark itself neither logs in from the keytab nor gets tokens there
    spark = SparkCluster(tmp_path / "spark", workers=1, cores=1, memory_mb=640)
    spark.start()
    try:
        # the verify job through spark-submit: its driver starts the tokens (jobs/verify.py)
        seen = {path: len(secure_hdfs.cluster.audit_entries(path)) for path in files}
        result = submit_verify(
            roots[0], roots[1], "t", "{}", master=spark.master_url, work_dir=tmp_path, timeout_s=300,
            spark_conf={**spark_login_conf(as_hbrep), "spark.executor.memory": "512m", "spark.cores.max": "1"},
        )  # fmt: skip
        assert result.counters["GOODROWS"] == len(cells) and result.counters.get("BADROWS", 0) == 0, result.counters
        submitted = _accesses(secure_hdfs, files, seen)
        # the same on the same master from the CLI, whose session is replication.spark.spark_session's (as
        # repair, seed, quality and wal play build theirs): `hbrep verify --in-process` from the source cluster
        seen = {path: len(secure_hdfs.cluster.audit_entries(path)) for path in files}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HBREP__", "KRB5", "PYSPARK_SUBMIT"))}
        env.update(kerberized_zk.cli_env(hbrep_spark_master=spark.master_url))
        env["PYSPARK_SUBMIT_ARGS"] = "--conf spark.executor.memory=512m --conf spark.cores.max=1 pyspark-shell"
        done = subprocess.run(
            [sys.executable, "-m", "replication.cli", "--cluster", keys[0], "verify", keys[1], "t", "--in-process",
             "--json"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, _without_java_frames(done.stderr)[-3000:]
        counters = json.loads(done.stdout)["counters"]
        assert counters["GOODROWS"] == len(cells) and counters.get("BADROWS", 0) == 0, counters
        in_process = _accesses(secure_hdfs, files, seen)
    finally:
        spark.stop()
    # each job's driver listing and its executor's reads of each table file went to HDFS as hbrep with the
    # delegation token its driver got (replication/spark_tokens.py), where hbrep's own SPNEGO client (the writes
    # above) shows as auth:KERBEROS; without the tokens the Spark driver's first look at a file is refused
    # ("AccessControlException: Authentication required": the verify job of 18d0027, before spark_tokens.py, and
    # `hbrep verify --in-process` of bfb2ddb, before spark_session started them)
    for job in (submitted, in_process):
        for path, accesses in job.items():
            assert {ugi for _, ugi in accesses} == {"hbrep (auth:TOKEN)"}, (path, accesses)
            assert ("open", "hbrep (auth:TOKEN)") in accesses, (path, accesses)


def _two_roots_with_one_table(secure_hdfs: SecureHdfs, name: str, rows: int) -> tuple[list[str], list[str], list[Cell]]:
    """A source and a peer root on the Kerberized HDFS (``<ROOT>/<name>-source-<tag>``, ``...-peer-...``), each
    with table ``t`` and the same table file of ``rows`` cells, written by hbrep's client: the roots, the files,
    the cells."""
    tag = uuid.uuid4().hex[:6]
    roots = [secure_hdfs.uri(f"{ROOT}/{name}-{side}-{tag}") for side in ("source", "peer")]
    cells = [Cell(b"row%02d" % i, b"f", b"q", 1000 + i, CellType.PUT, b"v%d" % i) for i in range(rows)]
    files = []
    for root in roots:
        fs, root_path = get_filesystem(root)
        TableRegistry(fs, root_path).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", 1)))
        files.append(write_cells(fs, root_path, "t", "region1", [(c, i + 1) for i, c in enumerate(cells)], len(cells)))
    return roots, files, cells


def _accesses(secure_hdfs: SecureHdfs, files: list[str], seen: dict[str, int]) -> dict[str, list[tuple[str, str]]]:
    """Per file, the (command, user) of each access the audit log shows since ``seen`` (entries per file)."""
    return {
        path: [(entry.get("cmd"), entry["ugi"]) for entry in secure_hdfs.cluster.audit_entries(path)[seen[path] :]]
        for path in files
    }


def _without_java_frames(text: str) -> str:
    """``text`` without the ``at ...`` lines of Java stack traces (the exceptions' own lines stay)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("at ", "... ")))


def test_the_spark_connect_server_hbrep_starts_reads_kerberized_hdfs_as_hbrep_past_its_tickets_lifetime(
    secure_hdfs, kerberized_zk, as_hbrep, tmp_path, monkeypatch
):
    """``hbrep spark start`` with hbrep's Kerberos keys starts the Spark Connect server as hbrep's principal
    (``spark_login_conf``: SparkSubmit logs its JVM in from the keytab on the local master): the checks' verify run
    on it reads table files on the Kerberized HDFS, and HDFS names hbrep for the server's reads. Its JVM asks for
    tickets of 60 s (its krb5.conf's ``ticket_lifetime``, the realm's KDC otherwise the same), and the server still
    reads the files as hbrep once that lifetime has passed: a long-running server outlives its tickets."""
    roots, files, cells = _two_roots_with_one_table(secure_hdfs, "connect", 7)
    short_lived = tmp_path / "krb5-60s.conf"
    realm_conf = kerberized_zk.kdc.krb5_conf.read_text()
    short_lived.write_text(re.sub(r"ticket_lifetime = \S+", "ticket_lifetime = 60s", realm_conf))
    assert short_lived.read_text() != realm_conf
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HBREP__", "KRB5"))}
    env.update(kerberized_zk.cli_env())
    env["HBREP__hbrep__kerberos__krb5__conf"] = str(short_lived)  # the server's JVM: -Djava.security.krb5.conf
    env["HADOOP_CONF_DIR"] = str(secure_hdfs.cluster.conf_dir)  # what the operator provides (docs/security.md)
    state, port = tmp_path / "connect", free_port()
    spark_cli = [sys.executable, "-m", "replication.cli", "spark"]
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")  # Connect columns in pyspark.sql.functions
    conf = Config.load(env={}, overrides={"hbrep.spark.connect.ship.package": "true"})
    logged_in = time.monotonic()
    started = subprocess.run([*spark_cli, "start", "--state", str(state), "--port", str(port)], capture_output=True,
                             text=True, env=env, timeout=300)  # fmt: skip
    reads = []
    try:
        assert started.returncode == 0, _without_java_frames(started.stderr)[-3000:]
        for wait_until in (0.0, logged_in + 75):  # at once, then once the JVM's first ticket has run out
            time.sleep(max(0.0, wait_until - time.monotonic()))
            seen = {path: len(secure_hdfs.cluster.audit_entries(path)) for path in files}
            with connect_session(f"sc://127.0.0.1:{port}", conf, tmp_path / "work", purpose="checks") as spark:
                result = verify_tables(spark, roots[0], roots[1], "t", VerifyOptions())
            assert result.counters["GOODROWS"] == len(cells) and result.counters.get("BADROWS", 0) == 0, result.counters
            reads.append(_accesses(secure_hdfs, files, seen))
    finally:
        subprocess.run([*spark_cli, "stop", "--state", str(state)], capture_output=True, env=env, timeout=120)
    # the server's JVM (not this process: it read nothing since `seen`) opened each table file as hbrep, each time
    for accesses_by_path in reads:
        for path, accesses in accesses_by_path.items():
            assert accesses and {ugi.split(" ")[0] for _, ugi in accesses} == {"hbrep"}, (path, accesses)
            assert any(cmd == "open" for cmd, _ in accesses), (path, accesses)
