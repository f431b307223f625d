"""``hbrep consistency_token`` / ``hbrep check_consistency`` as a user runs them (real clusters and ZooKeeper)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from support import add_peer, create_table, cycle, table_state

from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow


def hbrep(pair, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", str(pair.source_key), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def peer_1(pair):
    add_peer(pair, "1")
    return "1"


def test_token_then_check_pending_wait_and_consistent(pair, peer_1, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("f1", 1))
    idle = hbrep(pair, "consistency_token", "1")
    assert idle.returncode == 0, idle.stderr
    assert hbrep(pair, "check_consistency", idle.stdout.strip()).returncode == 0  # nothing was written

    rows = {f"r{i:03d}".encode() for i in range(60)}
    with pair.source.client() as client:
        client.batch(table, [Cell(r, b"f1", b"q", 1, CellType.PUT, r) for r in sorted(rows)])
    taken = hbrep(pair, "consistency_token", "1", "--json")
    assert taken.returncode == 0, taken.stderr
    doc = json.loads(taken.stdout)
    assert doc["peer_id"] == "1" and doc["pending_wals"] >= 1 and doc["pending_bytes"] > 0
    token = doc["token"]

    pending = hbrep(pair, "check_consistency", token, "--json")
    assert pending.returncode == 1, pending.stderr
    state = json.loads(pending.stdout)
    assert state["consistent"] is False and state["pending_bytes"] > 0
    assert all({"queue", "wal", "bytes"} <= set(p) and p["bytes"] > 0 for p in state["pending"])
    text = hbrep(pair, "check_consistency", token)
    assert text.returncode == 1 and text.stdout.startswith(f"token {token}: pending")

    waiting = subprocess.Popen(
        [sys.executable, "-m", "replication.cli", "--cluster", str(pair.source_key), "check_consistency", token,
         "--wait", "150", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        cycle(pair, spark)
        out, err = waiting.communicate(timeout=170)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 0, err
    assert json.loads(out)["consistent"] is True
    assert {row for row, *_ in table_state(spark, pair.peer, table)} == rows
    done = hbrep(pair, "check_consistency", token)
    assert done.returncode == 0 and done.stdout.startswith(f"token {token}: consistent")


def test_bad_tokens_and_arguments_are_one_line_errors(pair, peer_1):
    malformed = hbrep(pair, "check_consistency", "ct-12")
    assert malformed.returncode == 2
    assert malformed.stderr.strip().splitlines() == [
        "hbrep: error: malformed consistency token 'ct-12' (expected ct-<13 digits>-<16 hex digits>)"
    ]
    offline = subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", "127.0.0.1:9:/nowhere", "check_consistency", "ct-12"],
        capture_output=True, text=True, timeout=10,
    )  # fmt: skip
    assert offline.returncode == 2 and offline.stderr == malformed.stderr  # told before any connection
    unknown = hbrep(pair, "check_consistency", "ct-9999999999999-00000000000000ff")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        "hbrep: error: unknown consistency token ct-9999999999999-00000000000000ff (not issued by this cluster)"
    ]
    short = {"HBREP__hbrep__consistency__token__ttl__ms": "1"}
    taken = hbrep(pair, "consistency_token", "1", env=short)
    assert taken.returncode == 0, taken.stderr
    expired = hbrep(pair, "check_consistency", taken.stdout.strip())
    assert expired.returncode == 2 and len(expired.stderr.strip().splitlines()) == 1
    assert f"consistency token {taken.stdout.strip()} expired at" in expired.stderr
    no_peer = hbrep(pair, "consistency_token", "7")
    assert no_peer.returncode != 0 and no_peer.stderr.strip().splitlines() == ["hbrep: error: peer '7' does not exist"]
    no_table = hbrep(pair, "consistency_token", "1", "--tables", "nosuch")
    assert no_table.returncode != 0
    assert no_table.stderr.strip().splitlines() == ["hbrep: error: table nosuch does not exist on the source cluster"]
    bad_ttl = hbrep(pair, "consistency_token", "1", env={"HBREP__hbrep__consistency__token__ttl__ms": "0"})
    assert bad_ttl.returncode != 0 and "hbrep.consistency.token.ttl.ms" in bad_ttl.stderr
    assert len(bad_ttl.stderr.strip().splitlines()) == 1
