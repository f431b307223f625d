"""The cluster CLI end to end: start, rs list/kill, create_table/alter/describe, put/delete/flush, load, stop."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replication.fs import LocalFileSystem
from replication.processes import pid_alive
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells

pytestmark = pytest.mark.slow


def hbrep(key: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replication.cli", "--cluster", key, *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={"HBREP__zookeeper__session__timeout": "4000", "PATH": "/usr/bin:/bin"},
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_cluster_lifecycle_and_writes(cluster_key, tmp_path):
    root = str(tmp_path / "root")
    started = json.loads(ok(hbrep(cluster_key, "cluster", "start", "demo", "--root", root,
                                  "--regionservers", "2", "--json")))  # fmt: skip
    servers = started["servers"]
    try:
        assert len(servers) == 2
        listed = json.loads(ok(hbrep(cluster_key, "rs", "list", "--json")))
        assert sorted(s["server"] for s in listed) == sorted(servers)
        assert all(pid_alive(s["pid"]) for s in listed)

        ok(hbrep(cluster_key, "create_table", "t1", "f:1", "g"))
        ok(hbrep(cluster_key, "alter", "t1", "--family", "g", "--scope", "1"))
        described = json.loads(ok(hbrep(cluster_key, "describe", "t1", "--json")))
        assert {f["name"]: f["scope"] for f in described["families"]} == {"f": 1, "g": 1}

        ok(hbrep(cluster_key, "put", "t1", "r1", "f:a", "v1", "--ts", "10"))
        ok(hbrep(cluster_key, "put", "t1", "r1", "g:b", "v2", "--ts", "10"))
        ok(hbrep(cluster_key, "put", "t1", "r2", "f:a", "v3", "--ts", "10"))
        ok(hbrep(cluster_key, "delete", "t1", "r1", "f:a", "--ts", "20"))
        ok(hbrep(cluster_key, "delete", "t1", "r2"))
        flushed = json.loads(ok(hbrep(cluster_key, "flush", "t1", "--json")))
        assert flushed["files"]
        state = scan_cells(read_cells(LocalFileSystem(), root, "t1"))
        assert [(c.row, c.family, c.value) for c in state] == [(b"r1", b"g", b"v2")]

        loaded = json.loads(ok(hbrep(cluster_key, "load", "t1", "--rows", "500", "--json")))
        assert loaded["rows"] == 500 and loaded["rows_per_s"] > 0
        text = ok(hbrep(cluster_key, "load", "t1", "--rows", "50", "--rate", "500"))
        assert "loaded 50 rows into t1" in text and "rows/s" in text

        bad = hbrep(cluster_key, "put", "nope", "r", "f:a", "v")
        assert bad.returncode == 1
        assert bad.stderr.strip().splitlines() == ["hbrep: error: table nope does not exist"]
        bad_family = hbrep(cluster_key, "put", "t1", "r", "zz:a", "v")
        assert bad_family.stderr.strip().splitlines() == ["hbrep: error: table t1 has no column family 'zz'"]

        victim = servers[0]
        killed = ok(hbrep(cluster_key, "rs", "kill", victim))
        assert f"killed region server {victim}" in killed
        victim_pid = next(s["pid"] for s in listed if s["server"] == victim)
        assert not pid_alive(victim_pid)
    finally:
        stopped = hbrep(cluster_key, "cluster", "stop", "demo")
    assert stopped.returncode == 0, stopped.stderr
    assert all(not pid_alive(s["pid"]) for s in listed)
    wrong = hbrep(cluster_key, "cluster", "stop", "other")
    assert wrong.returncode == 1 and "holds cluster 'demo'" in wrong.stderr


def test_cluster_stop_then_start_at_once_on_the_same_port(cluster_key, tmp_path):
    """Issue 28: `hbrep cluster stop && hbrep cluster start` with a fixed region-server port, twice, at once."""
    from replication.net import free_port

    root, port = str(tmp_path / "root"), free_port()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "replication.cli", "--cluster", cluster_key, *args],
            capture_output=True,
            text=True,
            timeout=180,
            env={"HBREP__zookeeper__session__timeout": "4000", "HBREP__hbase__regionserver__port": str(port),
                 "PATH": "/usr/bin:/bin"},
        )  # fmt: skip

    try:
        for round_ in range(3):
            started = json.loads(ok(run("cluster", "start", "same-port", "--root", root, "--json")))
            assert [s.split(",")[1] for s in started["servers"]] == [str(port)]
            if round_ == 0:
                ok(run("create_table", "t1", "f:1"))
            ok(run("put", "t1", f"r{round_}", "f:a", "v"))  # client connections end in TIME-WAIT on the port
            assert "stopped (1 region servers)" in ok(run("cluster", "stop", "same-port"))
        # every round's write survived the restarts (stop flushes the memstores to table files)
        state = scan_cells(read_cells(LocalFileSystem(), root, "t1"))
        assert sorted(c.row for c in state) == [b"r0", b"r1", b"r2"]
    finally:
        run("cluster", "stop", "same-port")
