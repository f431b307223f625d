"""``make demo-hbase``: real HBase → hbrep's DAGs → real HBase, judged by HBase's own VerifyReplication.

1. ZooKeeper from pyspark's jars; real Apache HBase A (``/hbase-a``: master, 2 region servers, Thrift)
   and B (``/hbase-b``: 1 region server), from the jars pinned in interop/hbase/pom.xml, on loopback.
2. Table ``usertable`` on both (family ``cf`` replicated, ``local`` kept local); a shadow peer ``1`` on A
   (``add_peer --shadow``: DISABLED in HBase, so A queues and keeps every WAL; hbrep ships them).
3. A write load into A through its Thrift server; half-way the region server holding the table is
   SIGKILLed, and A's own master splits its logs and moves its replication queue to the other server.
4. Under Airflow's scheduler (as ``make up`` runs it): ``hbrep_failover`` (which leaves the claim to
   HBase) and ``hbrep_ship`` until everything is shipped.
   Beside B, peer ``2`` (shadow, family ``cf`` of the table) ships into hbrep's own cluster C (``/hbrep-c``: two
   region servers, each with HBase's RPC listener, which real HBase and hbrep's HBase-protocol ship both call);
   at the same moment as A's, one of C's region servers is SIGKILLed, and hbrep's ships move to the other.
5. Table ``history``, written on A before the peer existed and missing on B, is seeded by ``hbrep_seed_peer``
   under the scheduler: HBase's snapshot and ExportSnapshot into B's rootdir, clone_snapshot on B, the
   edits written meanwhile shipped by the seed's helper peer; HBase's VerifyReplication of it.
6. ``hbrep_verify`` (hbrep's verify and the GX checks, reading both real tables through Thrift), then HBase's
   VerifyReplication (hbase-mapreduce, local job runner) of the table and its cells on both sides, and the cells
   of A and C (HBase's tools cannot read C); a report.
Everything it started is stopped at the end, also on failure or Ctrl-C.

``--secure`` (``make demo-hbase SECURE=1``) runs the same story Kerberized: an MIT KDC made for the run
(``secure_realm.py``), ZooKeeper demanding SASL of every client, both HBase clusters with
``hbase.security.authentication=kerberos`` (every RPC, and their ZooKeeper sessions), and hbrep, in Airflow's
tasks and the Spark Connect server's workers, logged in from its keytab with HBase's keys: it reads A's queues
over SASL, ships into B and C with SASL GSSAPI at ``hbase.rpc.protection=privacy``, and HBase's VerifyReplication
runs as HBase's principal. C's region servers are Kerberized too: they reach ZooKeeper with SASL as hbrep, and
their listeners accept as HBase's server principal (``hbase.regionserver.keytab.file``).
The Thrift servers log in to HBase with Kerberos and take unauthenticated clients on
loopback (no ``hbase.thrift.security.qop``: happybase speaks no SASL), which the load and hbrep's verify use.
The seed's snapshot tools (hbrep's AdminTool and HBase's ExportSnapshot) run as hbrep's principal too: a ticket
from its keytab, HBase's client keys and ZooKeeper's SASL (``devstack/hbase_admin.py``, ``kerberos_login``).
``--ticket-lifetime 120 --soak-lifetimes 3`` makes the realm's tickets live two minutes and, after step 5, keeps a
probe row going into A every 10 s, each timed until B has it, until three lifetimes have passed since the realm
started (and for one lifetime at least): every process (HBase's, ZooKeeper, Airflow's, Spark's) has had to get
new tickets while shipping went on.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from replication.cluster.embedded import EmbeddedCluster, start_cluster
from replication.cluster.hbase_registry import hbase_cluster_key
from replication.config import Config
from replication.devstack.airflow_api import AirflowApi
from replication.devstack.demo import run_dag, run_demo, say, start_services, wait_replicated
from replication.devstack.hbase import RealHBase
from replication.devstack.native_pair import stop_side_by_side, table_cells
from replication.devstack.secure_realm import SecureRealm, secure_realm
from replication.fs import get_filesystem
from replication.hbase.shadow_peers import add_shadow_peer
from replication.monitoring.metrics import MetricsStore
from replication.monitoring.status import replication_status
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.zk.client import connected, zk_options
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.peer_storage import ReplicationPeerConfig
from replication.zk.queue_storage import ReplicationQueueStorage

TABLE = "usertable"
PEER = "1"
PEER_C = "2"  # into hbrep's own cluster C
HISTORY = "history"
HISTORY_ROWS = 500
DAG_IDS = ("hbrep_failover", "hbrep_ship", "hbrep_verify")


def write_load(
    cluster: RealHBase,
    rows: int,
    kill_at: int,
    killed: list[str],
    acked: list[int],
    at_kill: Callable[[], None] | None = None,
) -> None:
    """Write ``rows`` rows (cf and local) through A's Thrift server, each retried until A takes it; at
    ``kill_at`` SIGKILL the region server holding the table's region, then run ``at_kill``."""
    connection = cluster.happybase_connection()
    try:
        for i in range(rows):
            if i == kill_at and not killed:
                index = cluster.regionserver_holding(TABLE)
                killed.append(cluster.server_name(index))
                cluster.regionserver(index).kill()
                if at_kill is not None:
                    at_kill()
            data = {b"cf:field0": b"value-%d" % i, b"local:note": b"stays-on-a"}
            connection = cluster.put_until_taken(connection, TABLE, f"user{i:06d}".encode(), data)
            acked.append(i + 1)
    finally:
        connection.close()


def write_history(cluster: RealHBase) -> None:
    """Table HISTORY on A only, HISTORY_ROWS rows written and its WAL rolled: the rows a new peer's queues never
    see, for the seed to copy."""
    cluster.admin("create-table", HISTORY, "1", "cf:1")
    connection = cluster.happybase_connection()
    try:
        for i in range(HISTORY_ROWS):
            connection.table(HISTORY).put(b"old%06d" % i, {b"cf:field0": b"history-%d" % i})
    finally:
        connection.close()
    cluster.admin("roll")  # the history leaves the WALs a new peer's queues start at


def compare_cells(source: RealHBase, peer: RealHBase | EmbeddedCluster, table: str, family: str) -> dict[str, Any]:
    """The cells of ``family`` in ``table`` on both clusters (latest versions; through Thrift, or an hbrep
    cluster's own store files once flushed), as sets: whether the row keys and the cells are equal, their counts,
    and how many cells each side lacks."""
    wanted = family.encode()
    on_source = {cell for cell in table_cells(source, table) if cell[1] == wanted}
    peer_cells = hbrep_cluster_cells(peer, table) if isinstance(peer, EmbeddedCluster) else table_cells(peer, table)
    on_peer = {cell for cell in peer_cells if cell[1] == wanted}
    return {
        "rows_equal": {c[0] for c in on_source} == {c[0] for c in on_peer},
        "cells_equal": on_source == on_peer,
        "source_cells": len(on_source),
        "peer_cells": len(on_peer),
        "missing_on_peer": len(on_source - on_peer),
        "only_on_peer": len(on_peer - on_source),
    }


def hbrep_cluster_cells(cluster: EmbeddedCluster, table: str) -> set[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every cell (row, family, qualifier, timestamp, value; latest version) of ``table`` on an hbrep cluster,
    flushed first and read from its store files."""
    with cluster.client() as client:
        client.flush(table)
    fs, root = get_filesystem(cluster.root)
    return {(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in scan_cells(read_cells(fs, root, table))}


def start_hbrep_sink(stack: contextlib.ExitStack, key: str, state: Path, realm: SecureRealm | None) -> EmbeddedCluster:
    """hbrep's cluster C at ``key`` (two region servers, each with HBase's RPC listener) and the table's family
    ``cf`` on it, stopped by ``stack``. In a realm its servers reach ZooKeeper as hbrep and their listeners accept
    Kerberos as HBase's server principal (HBase's keys: ``hbase.regionserver.keytab.file``)."""
    settings = {}
    if realm is not None:
        settings = {**realm.hbrep_settings(), "hbase.regionserver.keytab.file": str(realm.hbase.path)}
    conf = Config.load(env={}, overrides={**settings, "hbrep.regionserver.hbase.rpc.enabled": "true"})
    cluster = stack.enter_context(start_cluster(key, str(state), 2, conf=conf, name="c"))
    fs, root = get_filesystem(cluster.root)
    TableRegistry(fs, root).create(TableDescriptor.of(TABLE, ColumnFamilyDescriptor("cf", scope=1)))
    return cluster


SOAK_EVERY_S = 10.0  # one probe row every 10 s during the soak
SOAK_ARRIVAL_S = 180.0  # how long the last probes may take once the soak has ended


def soak_probes(source: RealHBase, peer: RealHBase, until: float, every_s: float = SOAK_EVERY_S) -> dict[str, Any]:
    """Until ``until`` (``time.monotonic()``), put one probe row into A's TABLE every ``every_s`` seconds (family cf,
    replicated) and time each until B's Thrift server returns it, then wait up to SOAK_ARRIVAL_S for the last ones.
    Returns the probes written, those that arrived, and the write-to-visible lags in seconds (median, largest)."""
    writer, reader = source.happybase_connection(), peer.happybase_connection()
    written: dict[bytes, float] = {}
    lags: dict[bytes, float] = {}
    next_write = time.monotonic()
    last_call = until + SOAK_ARRIVAL_S
    try:
        while True:
            now = time.monotonic()
            if now < until and now >= next_write:
                row = b"soak%06d" % len(written)
                writer = source.put_until_taken(writer, TABLE, row, {b"cf:field0": b"probe-" + row})
                written[row] = now
                next_write += every_s
            pending = [row for row in written if row not in lags]
            if pending:
                for row, _data in reader.table(TABLE).rows(pending, columns=[b"cf:field0"]):
                    lags[row] = time.monotonic() - written[row]
            if now >= until and (len(lags) == len(written) or now > last_call):
                break
            time.sleep(1)
    finally:
        writer.close()
        reader.close()
    ordered = sorted(lags.values())
    return {
        "probes": len(written),
        "arrived": len(lags),
        "lag_p50_s": round(ordered[len(ordered) // 2], 1) if ordered else None,
        "lag_max_s": round(ordered[-1], 1) if ordered else None,
    }


def quiesce(api: AirflowApi, dag_ids: tuple[str, ...], timeout: float = 180.0) -> None:
    """Pause ``dag_ids`` and wait until none of their runs is queued or running, as an operator does before stopping
    Airflow: a ship task running then would be stopped half-way and end failed. After ``timeout`` it says so and
    returns."""
    for dag_id in dag_ids:
        api.set_paused(dag_id, True)
    deadline = time.monotonic() + timeout
    while True:
        active = [
            f"{dag_id}/{run['dag_run_id']}"
            for dag_id in dag_ids
            for run in api.call("GET", f"/dags/{dag_id}/dagRuns", params={"state": ["queued", "running"]})["dag_runs"]
        ]
        if not active:
            return
        if time.monotonic() > deadline:
            say(f"still running after {timeout:.0f}s, stopped with Airflow: {active}")
            return
        time.sleep(2)


def wait_for_recovered_queue(key: ClusterKey, dead: str, conf: Config, timeout: float = 300.0) -> str:
    """Wait until A's master has moved the dead server's queue of PEER to a live server; its id."""
    wanted = f"{PEER}-{dead}"
    deadline = time.monotonic() + timeout
    while True:
        with connected(key, **zk_options(conf)) as zk:
            snapshot = ReplicationQueueStorage(zk, ZNodePaths(conf, parent=key.znode_parent)).snapshot()
        owners = [f"{q.server}/{q.queue_id}" for q in snapshot.queues() if q.queue_id == wanted]
        if owners and dead not in snapshot.replicators:
            return owners[0]
        if time.monotonic() > deadline:
            raise TimeoutError(f"HBase did not move {dead}'s queue within {timeout:.0f}s")
        time.sleep(2)


def run(
    rows: int, state: Path, secure: bool = False, ticket_lifetime: int | None = None, soak_lifetimes: int = 0
) -> dict[str, Any]:
    """The whole demo in ``state`` (Kerberized when ``secure``, tickets living ``ticket_lifetime`` seconds,
    default an hour); with ``soak_lifetimes``, probe rows keep coming (:func:`soak_probes`) until that many ticket
    lifetimes have passed since the realm issued its first tickets, for one lifetime at least. Returns the report."""
    wrong = secure_options_wrong(
        {"secure": secure, "ticket_lifetime": ticket_lifetime, "soak_lifetimes": soak_lifetimes}
    )
    if wrong:
        raise SystemExit(f"demo-hbase: {wrong}")
    begun = time.monotonic()  # before the realm issues its first ticket
    report: dict[str, Any] = {"state": str(state), "secure": secure}
    log = state / "airflow.log"
    with contextlib.ExitStack() as stack:
        realm = None
        if secure:  # entered first: the KDC stops last
            lifetime = ticket_lifetime or 3600
            realm = stack.enter_context(secure_realm(state / "kdc", ticket_lifetime_s=lifetime))
            report["ticket_lifetime_s"] = lifetime
            say(f"started an MIT KDC for realm {realm.kdc.realm}: principals {realm.zookeeper.principal}, "
                f"{realm.hbase.principal}, {realm.hbrep.principal} (keytabs in {realm.kdc.keytab_dir})")  # fmt: skip
        conf = realm.hbrep_conf() if realm is not None else Config.load(env={})
        key_a, key_b, airflow = start_services(stack, state, log, realm)
        hbase_a, hbase_b = RealHBase(state / "hbase-a"), RealHBase(state / "hbase-b")
        kerberos = realm.hbase_kerberos() if realm is not None else None
        say(f"starting real HBase A (/hbase-a, 2 region servers) and B (/hbase-b, 1), jars from Maven Central"
            f"{'; hbase.security.authentication=kerberos' if kerberos else ''}")  # fmt: skip
        # On a secure HBase, its znodes (the queues whose positions hbrep advances) are HBase's own (sasl:hbase);
        # HBase adds sasl:<user> for each user in hbase.superuser (ZKUtil.createACL): hbrep is named there
        superuser = {"hbase.superuser": realm.hbrep_short_name()} if realm is not None else {}
        stack.callback(stop_side_by_side, hbase_a, hbase_b)

        def start(cluster: RealHBase, key: str, servers: int) -> None:
            cluster.start(key, regionservers=servers, kerberos=kerberos, extra_site=superuser)
            cluster.admin("create-table", TABLE, "1", "cf:1", "local:0")

        with ThreadPoolExecutor(2, thread_name_prefix="hbase-start") as starting:  # A and B side by side
            started = [starting.submit(start, hbase_a, key_a, 2), starting.submit(start, hbase_b, key_b, 1)]
        for future in started:
            future.result()
        say(f"table {TABLE} on both: family cf replicated (scope 1), family local kept local (scope 0)")
        write_history(hbase_a)
        say(f"table {HISTORY} on A only: {HISTORY_ROWS} rows written before the peer exists (to seed later)")
        source = ClusterKey.parse(key_a)
        peer_config = ReplicationPeerConfig(
            cluster_key=key_b, configuration={"hbrep.peer.thrift": f"127.0.0.1:{hbase_b.layout().thrift_port}"}
        )
        with connected(source, **zk_options(conf)) as zk:
            add_shadow_peer(
                source, zk, ZNodePaths(conf, parent=source.znode_parent), PEER, peer_config,
                hbase_a.rootdir_uri, f"127.0.0.1:{hbase_a.layout().thrift_port}", conf,
            )  # fmt: skip
        say(f"add_peer {PEER} {key_b} --shadow: DISABLED in HBase A, shipped by hbrep")
        key_c = str(dataclasses.replace(source, znode_parent="/hbrep-c"))
        hbrep_c = start_hbrep_sink(stack, key_c, state / "c", realm)
        key_c_for_hbase = hbase_cluster_key(ClusterKey.parse(key_c), hbrep_c.paths)
        with connected(source, **zk_options(conf)) as zk:
            add_shadow_peer(
                source, zk, ZNodePaths(conf, parent=source.znode_parent), PEER_C,
                ReplicationPeerConfig(cluster_key=key_c_for_hbase, replicate_all=False, table_cfs={TABLE: ["cf"]}),
                hbase_a.rootdir_uri, f"127.0.0.1:{hbase_a.layout().thrift_port}", conf,
            )  # fmt: skip
        say(
            f"hbrep's cluster C ({key_c}, 2 region servers{', Kerberized' if realm else ''}) with table {TABLE}; "
            f"add_peer {PEER_C} {key_c_for_hbase} --shadow (C's HBase RPC listeners) --table-cfs {TABLE}:cf"
        )
        killed: list[str] = []
        acked: list[int] = []
        killed_in_c: list[str] = []

        def kill_in_c() -> None:
            killed_in_c.append(hbrep_c.servers[0])
            hbrep_c.kill(killed_in_c[0])

        started = time.monotonic()
        writer = threading.Thread(target=write_load, args=(hbase_a, rows, rows // 2, killed, acked, kill_in_c))
        writer.start()
        writer.join()
        report["rows_written"] = acked[-1] if acked else 0
        report["killed"] = killed[0] if killed else None
        report["killed_in_c"] = killed_in_c[0] if killed_in_c else None
        say(f"wrote {report['rows_written']} rows into A in {time.monotonic() - started:.1f}s; "
            f"SIGKILLed region server {report['killed']} of A and {report['killed_in_c']} of C half-way")  # fmt: skip
        report["recovered_queue"] = wait_for_recovered_queue(source, killed[0], conf)
        say(f"A's master moved the dead server's queue: {report['recovered_queue']}")
        airflow.wait_ready(timeout=300)
        api = stack.enter_context(AirflowApi(airflow.url, "admin", airflow.admin_password()))
        api.call("POST", "/pools", json={"name": "zookeeper", "slots": 4, "description": "hbrep: ZooKeeper tasks"})
        for dag_id in DAG_IDS:
            api.wait_for_dag(dag_id, timeout=180)
        verify_conf = {"peer": PEER, "table": TABLE, "start": 0, "end": int(time.time() * 1000) + 3_600_000}
        for dag_id, run_conf in (("hbrep_failover", None), ("hbrep_ship", None), ("hbrep_ship", None)):
            started_run = time.monotonic()
            run = run_dag(api, dag_id, run_conf)
            report.setdefault("dag_runs", []).append(f"{dag_id}: {run['state']}")
            say(f"{dag_id} run {run['dag_run_id']}: {run['state']} in {time.monotonic() - started_run:.0f}s")
        wait_replicated(source, conf)  # the scheduled run unpausing started may hold the lease and ship it
        # the seed of the table the peer never had, by HBase's snapshot tools (as hbrep's principal when secure),
        # before the soak: a soak's probes then span it too, and its lifetimes are not made longer by it
        api.wait_for_dag("hbrep_seed_peer", timeout=180)
        seed_conf = {"peer": PEER, "tables": HISTORY, "peer_rootdir": hbase_b.rootdir_uri}
        started_run = time.monotonic()
        run = run_dag(api, "hbrep_seed_peer", seed_conf)
        report["dag_runs"].append(f"hbrep_seed_peer: {run['state']}")
        say(f"hbrep_seed_peer run {run['dag_run_id']} ({HISTORY} by HBase's snapshot + ExportSnapshot): "
            f"{run['state']} in {time.monotonic() - started_run:.0f}s")  # fmt: skip
        report["hbase_verify_seeded"] = hbase_a.verify_replication(PEER, HISTORY, families=["cf"])
        say(f"HBase's VerifyReplication of the seeded {HISTORY}: {report['hbase_verify_seeded']}")
        if soak_lifetimes:
            lifetime = report["ticket_lifetime_s"]
            # N lifetimes since the realm started, and at least one whole lifetime of probes (a slow start)
            until = max(begun + soak_lifetimes * lifetime + SOAK_EVERY_S, time.monotonic() + lifetime)
            say(f"soak: a probe row into A every {SOAK_EVERY_S:.0f}s, each timed until B has it, until "
                f"{soak_lifetimes} ticket lifetimes ({soak_lifetimes * lifetime}s) have passed since the realm "
                f"started and for one lifetime at least ({until - time.monotonic():.0f}s from now); the scheduler "
                f"ships them")  # fmt: skip
            report["soak"] = soak_probes(hbase_a, hbase_b, until)
            report["soak"]["lifetimes"] = round((time.monotonic() - begun) / lifetime, 2)
            say(f"soak: {report['soak']}")
        run = run_dag(api, "hbrep_verify", verify_conf)
        report["dag_runs"].append(f"hbrep_verify: {run['state']}")
        say(f"hbrep_verify run {run['dag_run_id']}: {run['state']}")
        with connected(source, **zk_options(conf)) as zk:
            status = replication_status(zk, source, conf)
        fs, root = get_filesystem(hbase_a.rootdir_uri)
        stored = MetricsStore(fs, root).load()
        shipped = {peer: 0 for peer in (PEER, PEER_C)}
        for queue in stored.queues.values():
            if queue.get("peer_id") in shipped:
                shipped[queue["peer_id"]] += int(queue.get("shippedOps", 0))
        report["rows_shipped"], report["rows_shipped_c"] = shipped[PEER], shipped[PEER_C]
        report["lag_ms"] = status.peers[PEER].replicationLag
        report["verify"] = stored.checks.get(f"verify/{PEER}/{TABLE}", {})
        report["quality"] = stored.checks.get(f"quality/{PEER}/{TABLE}", {})
        say("HBase's own VerifyReplication of the table (hbase-mapreduce, local job runner)")
        report["hbase_verify"] = hbase_a.verify_replication(PEER, TABLE, families=["cf"])
        report["cells"] = compare_cells(hbase_a, hbase_b, TABLE, "cf")
        say(f"cells of family cf on A and B: {report['cells']}")
        wait_replicated(source, conf)  # the soak's last probes, to C as well
        report["cells_c"] = compare_cells(hbase_a, hbrep_c, TABLE, "cf")
        say(f"cells of family cf on A and hbrep's C: {report['cells_c']}")
        quiesce(api, (*DAG_IDS, "hbrep_seed_peer"))
        say("stopping everything it started")
    return report


def print_report(report: dict[str, Any]) -> None:
    ours = report.get("verify", {}).get("counters", {})
    theirs = report.get("hbase_verify", {})
    seeded = report.get("hbase_verify_seeded", {})
    quality = report.get("quality", {})
    cells = report.get("cells", {})
    cells_c = report.get("cells_c", {})
    lines = [
        "",
        "hbrep demo-hbase report",
        "-----------------------",
        f"rows written to HBase A          {report.get('rows_written')}",
        f"rows shipped by hbrep to B       {report.get('rows_shipped')}",
        f"replication lag                  {report.get('lag_ms')} ms",
        f"region server killed             {report.get('killed')}",
        f"queue moved by HBase's master    {report.get('recovered_queue')}",
        f"DAG runs                         {report.get('dag_runs')}",
        f"Kerberos (SASL) everywhere       {'yes' if report.get('secure') else 'no'}",
        f"HBase's VerifyReplication        GOODROWS={theirs.get('GOODROWS')} BADROWS={theirs.get('BADROWS', 0)}",
        f"hbrep's verify                   GOODROWS={ours.get('GOODROWS')} BADROWS={ours.get('BADROWS')}",
        f"row keys / cells equal on A, B   {cells.get('rows_equal')} / {cells.get('cells_equal')} "
        f"({cells.get('source_cells')} cells on A, {cells.get('peer_cells')} on B)",
        f"rows shipped by hbrep to C       {report.get('rows_shipped_c')}",
        f"region server killed in C        {report.get('killed_in_c')}",
        f"row keys / cells equal on A, C   {cells_c.get('rows_equal')} / {cells_c.get('cells_equal')} "
        f"({cells_c.get('source_cells')} cells on A, {cells_c.get('peer_cells')} on hbrep's C)",
        f"GX checks                        {'passed' if quality.get('success') else 'FAILED'}",
        f"state kept in                    {report.get('state')}",
    ]
    soak = report.get("soak")
    if soak:
        lines.insert(
            lines.index(f"DAG runs                         {report.get('dag_runs')}") + 1,
            f"soak probes written / arrived    {soak['probes']} / {soak['arrived']} over {soak['lifetimes']} ticket "
            f"lifetimes; lag p50 {soak['lag_p50_s']} s, max {soak['lag_max_s']} s",
        )
    lines[-2:-2] = [f"seeded table {HISTORY}, HBase's VerifyReplication  GOODROWS={seeded.get('GOODROWS')} "
                    f"BADROWS={seeded.get('BADROWS', 0)}"]  # fmt: skip
    print("\n".join(lines), flush=True)


def secure_arguments(parser: argparse.ArgumentParser) -> None:
    """``--secure``, ``--ticket-lifetime`` and ``--soak-lifetimes``."""
    parser.add_argument(
        "--secure", action="store_true",
        help="run it Kerberized: a KDC, SASL on ZooKeeper and every HBase RPC (make demo-hbase SECURE=1)",
    )  # fmt: skip
    parser.add_argument(
        "--ticket-lifetime", type=_ticket_lifetime, metavar="SECONDS",
        help="with --secure: how long the realm's tickets live (at least 60; default 3600)",
    )  # fmt: skip
    parser.add_argument(
        "--soak-lifetimes", type=_soak_lifetimes, default=0, metavar="N",
        help="with --secure: keep writing probe rows, shipped by the scheduler and timed until B has them, until N "
        "ticket lifetimes have passed since the realm started",
    )  # fmt: skip


def secure_options_wrong(args: dict[str, Any]) -> str | None:
    """What is wrong with the secure story's options together (one line), or None."""
    if args.get("ticket_lifetime") is not None and not args.get("secure"):
        return "--ticket-lifetime needs --secure (only the secure story has a KDC)"
    if args.get("soak_lifetimes") and not args.get("secure"):
        return "--soak-lifetimes needs --secure (only the secure story has tickets)"
    return None


def _whole_number(minimum: int, unit: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number (of ``unit``), at least ``minimum``; one-line refusals otherwise."""
    of_unit = f" of {unit}" if unit else ""
    unit_after = f" {unit}" if unit else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number{of_unit}: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"at least {minimum}{unit_after}, not {value}")
        return value

    return parse


_soak_lifetimes = _whole_number(1)  # --soak-lifetimes
_ticket_lifetime = _whole_number(60, "seconds")  # --ticket-lifetime: the KDC's and HBase's floor


def main(argv: list[str] | None = None) -> int:
    """Run the demo; exit 0 only when HBase's VerifyReplication finds every row written and no bad row, the
    cells of A and B are the same sets, and the seeded table verifies too."""
    description = __doc__.split("\n")[0]
    report = run_demo(
        argv, prog="demo-hbase", description=description, default_rows=1000, run_fn=run, report_fn=print_report,
        add_arguments=secure_arguments, check_arguments=secure_options_wrong,
    )  # fmt: skip
    theirs = report.get("hbase_verify", {})
    seeded = report.get("hbase_verify_seeded", {})
    soak = report.get("soak", {"probes": 0, "arrived": 0})
    ok = (
        theirs.get("GOODROWS") == (report.get("rows_written") or 0) + soak["probes"]
        and soak["arrived"] == soak["probes"]
        and theirs.get("BADROWS", 0) == 0
        and report.get("verify", {}).get("counters", {}).get("BADROWS") == 0
        and report.get("quality", {}).get("success")
        and report.get("cells", {}).get("cells_equal")
        and report.get("cells_c", {}).get("cells_equal")
        and seeded.get("GOODROWS") == HISTORY_ROWS
        and seeded.get("BADROWS", 0) == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
