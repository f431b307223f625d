"""The commands issue 43 added, on hbrep's own clusters: ``deleteall`` deletes as the shell's does (and
``get``/``scan`` still read hbrep's table files, not HBase's RPC); ``compact``/``major_compact`` say in one
line that an hbrep cluster has no compactions."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
from support import create_table

pytestmark = pytest.mark.slow


def hbrep(key, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", "--cluster", str(key), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_deleteall_and_compactions_on_an_hbrep_cluster(pair):
    key, name = pair.source_key, f"t_{uuid.uuid4().hex[:6]}"
    create_table(pair.source, name, ("f", 1), ("g", 1))
    for row, column in (("r1", "f:a"), ("r1", "g:b"), ("r2", "f:a"), ("r2", "f:c")):
        assert hbrep(key, "put", name, row, column, "v").returncode == 0
    done = hbrep(key, "deleteall", name, "r1")
    assert done.returncode == 0 and done.stdout.strip() == f"deleted all of {name} r1"
    assert hbrep(key, "deleteall", name, "r2", "f:c").returncode == 0
    scanned = json.loads(hbrep(key, "scan", name, "--json").stdout)
    assert [(r["row"], [(c["family"], c["qualifier"]) for c in r["cells"]]) for r in scanned["rows"]] == [
        ("r2", [("f", "a")])
    ]
    for command in ("compact", "major_compact"):
        done = hbrep(key, command, name)
        assert done.returncode == 1 and done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "is an hbrep cluster, which has no compactions" in lines[0], done.stderr
