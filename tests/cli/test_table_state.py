"""``disable`` / ``enable`` / ``is_enabled`` on real region servers: a disabled table takes no writes (the
client's and the replication sink's), the guide's alter procedure works, and nothing replicated is lost."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
from support import add_peer, create_table, cycle, table_state

pytestmark = pytest.mark.slow


def hbrep(key, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", "--cluster", str(key), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_the_guides_alter_procedure_and_a_disabled_table_takes_no_writes(pair):
    key, table = pair.source_key, f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):  # the peer has it too: the next test's peer ships this WAL
        create_table(cluster, table, ("f", 0))
    assert hbrep(key, "is_enabled", table).stdout.strip() == "true"
    assert hbrep(key, "disable", table).returncode == 0
    assert hbrep(key, "is_enabled", table).stdout.strip() == "false"
    refused = hbrep(key, "put", table, "r1", "f:q", "v")
    assert refused.returncode != 0 and refused.stderr.strip().splitlines()[-1].endswith(f"table {table} is disabled")
    again = hbrep(key, "disable", table)
    assert again.stderr.strip() == f"hbrep: error: table {table} is already disabled"
    assert hbrep(key, "alter", table, "--family", "f", "--scope", "1").returncode == 0
    assert hbrep(key, "enable", table).returncode == 0
    assert hbrep(key, "put", table, "r1", "f:q", "v").returncode == 0
    assert hbrep(key, "count", table).stdout.strip() == "1 row(s)"  # the refused put left nothing
    assert hbrep(key, "enable", table).stderr.strip() == f"hbrep: error: table {table} is already enabled"


def test_edits_for_a_disabled_peer_table_wait_and_arrive_once_it_is_enabled(pair, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f", 1))
    add_peer(pair, "9")
    try:
        assert hbrep(pair.peer_key, "disable", table).returncode == 0
        with pair.source.client() as client:
            for i in range(30):
                client.put(table, b"r%02d" % i, b"f", b"q", b"v", ts=1000 + i)
        report = cycle(pair, spark)
        failed = [q for q in report.queues if q.peer_id == "9" and q.status == "failed"]
        assert failed and all(f"table {table} is disabled" in q.error for q in failed), report.queues
        assert hbrep(pair.peer_key, "enable", table).returncode == 0
        cycle(pair, spark)
        assert table_state(spark, pair.peer, table) == table_state(spark, pair.source, table)
        assert len(table_state(spark, pair.peer, table)) == 30
    finally:
        hbrep(pair.source_key, "remove_peer", "9")
