"""No ZooKeeper password or cluster token in logs, CLI output (even with -v), status or the Spark job output."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from tests.badinput.helpers import hbrep
from tests.security.conftest import TOKEN, ZK_AUTH

pytestmark = pytest.mark.slow

PASSWORD = ZK_AUTH.split(":", 1)[1]
SECRETS = (PASSWORD, TOKEN)


def assert_clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"a secret appears in {where}"


def test_no_secret_in_cli_output_status_or_logs(secure, secure_peer, tmp_path):
    key = secure.cluster_key
    work = tmp_path / "work"
    env = {"HBREP__hbrep__cluster__token": TOKEN, "HBREP__hbrep__state__dir": str(work)}
    c = ("-v", "--cluster", key, "--zk-auth", ZK_AUTH)
    runs = [
        hbrep("-v", "--cluster", secure_peer.cluster_key, "--zk-auth", ZK_AUTH, "create_table", "s", "f:1", env=env),
        hbrep(*c, "create_table", "s", "f:1", env=env),
        hbrep(*c, "add_peer", "9", secure_peer.cluster_key, env=env),  # a peer, so the ship runs the Spark job
        hbrep(*c, "put", "s", "r1", "f:q", "v1", env=env),
        hbrep(*c, "list_peers", env=env),
        hbrep(*c, "list_peers", "--json", env=env),
        hbrep(*c, "queues", env=env),
        hbrep(*c, "status", "replication", env=env),
        hbrep(*c, "status", "replication", "--json", env=env),
        hbrep(*c, "status", "replication", "--prometheus", env=env),
        hbrep(*c, "ship", "--once", env=env),
        hbrep(*c, "describe", "s", env=env),
    ]
    for result in runs:
        assert result.returncode == 0, (result.args, result.stderr)
        assert_clean(f"{result.args[3:]}: stdout", result.stdout)
        assert_clean(f"{result.args[3:]}: stderr", result.stderr)
    assert any("INFO" in r.stderr for r in runs)  # -v did log something that was checked
    logs = [
        p
        for root in (secure.root, secure_peer.root)
        for p in Path(root, ".hbrep").rglob("*")
        if p.is_file() and p.suffix in (".log", ".out")
    ]
    assert logs, "the region servers write logs under <root>/.hbrep"
    for log in logs:
        assert_clean(str(log), log.read_text(errors="replace"))


def test_spark_job_output_has_no_secret_and_manifests_are_private(secure, tmp_path):
    from replication.config import Config
    from replication.jobs.launch import SHIP_SCRIPT
    from replication.jobs.submit import spark_submit
    from replication.source.cycle import commit_step, snapshot_step
    from replication.source.manifest import result_path_for

    conf = secure.conf.with_overrides({"hbrep.work.dir": str(tmp_path / "cycles")})
    assert isinstance(conf, Config)
    with connected(key := ClusterKey.parse(secure.cluster_key), auth=ZK_AUTH) as zk:
        outcome = snapshot_step(zk, key, conf, owner="security-test")
        try:
            done = spark_submit(
                SHIP_SCRIPT,
                ["--manifest", outcome.manifest_path, "--result", result_path_for(outcome.manifest_path)],
                master="local[1]",
                work_dir=Path(outcome.manifest_path).parent,
                name="hbrep-security-test",
            )
        finally:
            commit_step(zk, key, conf, outcome.manifest_path, owner="security-test")
    assert done.stdout or done.stderr  # spark-submit said something, and it was checked
    assert_clean("spark-submit stdout", done.stdout)
    assert_clean("spark-submit stderr", done.stderr)
    # The manifest carries the configuration the executors need (token included): owner-only.
    mode = stat.S_IMODE(os.stat(outcome.manifest_path).st_mode)
    assert mode & 0o077 == 0, oct(mode)
