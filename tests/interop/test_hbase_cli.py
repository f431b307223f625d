"""`hbrep hbase status` on the session's real HBase (the fixture starts it with the same code as
`hbrep hbase start`), and happybase reading and writing one of its tables through Thrift."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from replication.devstack.jvm import pid_alive, port_accepts

pytestmark = pytest.mark.slow


def test_status_names_every_jvm_running(real_hbase):
    done = subprocess.run([sys.executable, "-m", "replication.cli", "hbase", "status", "--root", str(real_hbase.root),
                           "--json"], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["running"] is True and state["cluster_key"] == real_hbase.layout().cluster_key
    assert set(state["processes"]) == {"master", "rs1", "rs2", "thrift"}
    for proc in state["processes"].values():
        assert pid_alive(proc["pid"]) and port_accepts(proc["port"]) and proc["log"].endswith(".log")


def test_happybase_writes_and_reads_a_real_table(real_hbase):
    table = f"hb_{uuid.uuid4().hex[:8]}"
    connection = real_hbase.happybase_connection()
    try:
        connection.create_table(table, {"f": {"max_versions": 2}})
        t = connection.table(table)
        t.put(b"r1", {b"f:a": b"1", b"f:b": b"2"})
        t.put(b"r2", {b"f:a": b"3"})
        t.delete(b"r1", columns=[b"f:b"])
        assert dict(t.scan()) == {b"r1": {b"f:a": b"1"}, b"r2": {b"f:a": b"3"}}
        assert table.encode() in connection.tables()
    finally:
        connection.close()
