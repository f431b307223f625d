"""``hbrep syncup`` (HBase's ReplicationSyncUp) drill: every region server of the source is SIGKILLed during a
load, after one ship cycle moved some positions; syncup claims the dead servers' queues and ships them, and
the peer then holds exactly the cells the source's WALs hold (row keys and cells compared as sets)."""

from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
from click.testing import CliRunner
from cluster.helpers import wal_entries
from support import add_peer, create_table, cycle, queue_snapshot, table_state, write_load

from replication.cli import cli, main

pytestmark = pytest.mark.slow


def _load(cluster, table: str, stop: threading.Event, acked: list[bytes]) -> None:
    """Batches of 20 rows until stopped or the cluster dies under it (the kill is the point)."""
    try:
        write_load(cluster, table, stop, acked)
    except Exception:  # the cluster died mid-batch: that batch was never acknowledged
        return


def test_the_whole_source_dies_mid_load_and_syncup_drains_it(pair, spark, capsys):
    add_peer(pair, "1")
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    servers = pair.source.live_servers()
    stop, acked = threading.Event(), []
    writer = threading.Thread(target=_load, args=(pair.source, table, stop, acked))
    writer.start()
    try:
        while len(acked) < 200:
            time.sleep(0.05)
        cycle(pair, spark)  # some positions move before the crash
        while len(acked) < 400:
            time.sleep(0.05)
        for server in servers:
            pair.source.kill(server)  # SIGKILL
    finally:
        stop.set()
        writer.join(timeout=60)
    for server in servers:
        pair.source.wait_until_dead(server)
    assert cycle(pair, spark).spark_job is False  # no live replicator: ship cycles leave the queues alone

    result = CliRunner().invoke(cli, ["--cluster", str(pair.source_key), "syncup", "--in-process", "--json"],
                                catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["claimed"]) == set(servers) and all(q == ["1"] for q in report["claimed"].values())
    assert report["entries_shipped"] > 0 and report["left"] == []
    assert not queue_snapshot(pair).replicators, "every queue drained: the syncup server and the dead ones are gone"

    written = {
        (c.row, c.family, c.qualifier, c.timestamp, c.type, c.value)
        for server in servers
        for e in wal_entries(pair.source.root, server)
        if e.key.table_name == table.encode()
        for c in e.cells
    }
    on_peer = set(table_state(spark, pair.peer, table))
    print(f"acknowledged rows {len(acked)}, cells in the source's WALs {len(written)}, on the peer {len(on_peer)}")
    assert on_peer == written
    assert {c[0] for c in on_peer} == {c[0] for c in written} >= set(acked)

    # with a region server alive again, syncup is refused with one line and changes nothing
    pair.source.start_region_server()
    code = main(["--cluster", str(pair.source_key), "syncup", "--in-process"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "alive" in err[0] and "syncup is for a source none of" in err[0]
