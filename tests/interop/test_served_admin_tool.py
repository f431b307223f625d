"""The served AdminTool (replication/devstack/admin_server.py) against a real HBase: many Admin API commands in
one JVM, each as a run of its own would do it; a refused command is one line and the JVM keeps serving; a
rewritten site file gets a new JVM, and so does a JVM killed between two commands."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid

import pytest

from replication.devstack.admin_server import AdminServerError
from replication.devstack.hbase import HBaseError

pytestmark = pytest.mark.slow


def test_commands_share_one_jvm_and_answer_as_a_run_of_their_own_would(real_hbase):
    table = f"served_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", table, "1", "f:0")  # scope 0: no peer of the session's HBase ships it
    pid = real_hbase._admin.pid
    assert pid is not None
    lines = [{"op": "put", "row": f"r{i}", "family": "f", "qualifier": "q", "value": f"v{i}"} for i in range(3)]
    assert real_hbase.admin("mutate", table, stdin="\n".join(map(json.dumps, lines))) == {"applied": 3}
    served = real_hbase.admin("rows", table)
    assert real_hbase._admin.pid == pid  # the same JVM answered all three
    assert served == {f"r{i}": {"f:q": f"v{i}"} for i in range(3)}
    assert real_hbase.run_tool("io.hbrep.interop.AdminTool", ["rows", table], parse_json=True) == served


def test_a_refused_command_is_one_line_and_the_jvm_keeps_serving(real_hbase):
    with pytest.raises(HBaseError) as refused:
        real_hbase.admin("flush", f"no_such_table_{uuid.uuid4().hex[:6]}")
    assert len(str(refused.value).splitlines()) == 1
    assert str(refused.value).startswith("AdminTool flush: ") and "TableNotFoundException" in str(refused.value)
    pid = real_hbase._admin.pid
    assert pid is not None and real_hbase.admin("servers")
    assert real_hbase._admin.pid == pid
    with pytest.raises(AdminServerError, match=r"^AdminTool hold-open: .*hold-open runs only in a process of its own"):
        real_hbase._admin.call(["hold-open", "a", "b", "1"])
    assert real_hbase._admin.pid == pid


def test_a_killed_jvm_is_started_again_at_the_next_command(real_hbase):
    live = real_hbase.admin("servers")
    pid = real_hbase._admin.pid
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while real_hbase._admin.pid == pid:  # until the kernel has ended it (Popen.poll reaps it)
        assert time.monotonic() < deadline, "the SIGKILLed JVM still runs"
        time.sleep(0.1)
    assert real_hbase.admin("servers") == live
    assert real_hbase._admin.pid not in (None, pid)


def test_a_rewritten_site_file_gets_a_new_jvm(real_hbase):
    live = real_hbase.admin("servers")
    pid = real_hbase._admin.pid
    stat = real_hbase.site_file.stat()
    os.utime(real_hbase.site_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert real_hbase.admin("servers") == live
    assert real_hbase._admin.pid not in (None, pid)
