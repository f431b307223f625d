"""The dev-stack HDFS: `hbrep hdfs start|stop|status` on a state folder of its own, and bad input.

(The other tests share the session's HDFS through the ``hdfs_cluster`` fixture.)
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from replication.devstack.hdfs import HdfsCluster, HdfsError, HdfsKerberos
from replication.devstack.jvm import pid_alive
from replication.fs import get_filesystem


def hbrep(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replication.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_start_status_stop_and_restart_keeps_the_data(tmp_path):
    root = str(tmp_path / "hdfs")
    started = hbrep("hdfs", "start", "--root", root)
    try:
        assert started.returncode == 0, started.stderr
        assert "HDFS serving on hdfs://127.0.0.1:" in started.stdout
        state = json.loads(hbrep("hdfs", "status", "--root", root, "--json").stdout)
        assert state["ready"] and state["safe_mode"] is False and state["live_datanodes"] == 1
        cluster = HdfsCluster(root)
        assert (cluster.root / "name" / "current" / "VERSION").exists()
        assert state["uri"] == cluster.uri and state["webhdfs_url"] == cluster.webhdfs_url
        fs, path = get_filesystem(cluster.webhdfs_root("/kept/file"))
        fs.write_atomic(path, b"survives a restart")
        again = hbrep("hdfs", "start", "--root", root)  # already running: harmless, same pids
        assert again.returncode == 0, again.stderr
        assert (
            json.loads(hbrep("hdfs", "status", "--root", root, "--json").stdout)["namenode_pid"]
            == state["namenode_pid"]
        )
        stopped = hbrep("hdfs", "stop", "--root", root)
        assert stopped.returncode == 0 and "HDFS stopped" in stopped.stdout
        assert not pid_alive(state["namenode_pid"]) and not pid_alive(state["datanode_pid"])
        after = hbrep("hdfs", "status", "--root", root)
        assert after.returncode == 1 and "NameNode not running" in after.stdout
        restarted = hbrep("hdfs", "start", "--root", root)  # no second format: the file is still there
        assert restarted.returncode == 0, restarted.stderr
        assert fs.read_range(path, 0) == b"survives a restart"
    finally:
        hbrep("hdfs", "stop", "--root", root)
    assert "was not running" in hbrep("hdfs", "stop", "--root", root).stdout


def test_status_of_a_folder_never_started_is_one_line_and_exit_1(tmp_path):
    result = hbrep("hdfs", "status", "--root", str(tmp_path / "none"))
    assert result.returncode == 1 and result.stdout.strip() == f"HDFS: not running (never started in {tmp_path}/none)"
    assert not (tmp_path / "none").exists()  # status changes nothing


def test_a_broken_ports_file_is_one_clear_error(tmp_path):
    (tmp_path / "ports.json").write_text("not json")
    result = hbrep("hdfs", "start", "--root", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"hbrep: error: {tmp_path}/ports.json is not a JSON object of ports"]


def test_a_taken_port_refuses_the_start_before_anything_runs(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ports = {"rpc": taken, "http": 1, "dn_xfer": 2, "dn_http": 3, "dn_ipc": 4}  # an older file: no dn_proxy
        (tmp_path / "ports.json").write_text(json.dumps(ports))
        cluster = HdfsCluster(tmp_path, classpath="unused")
        with pytest.raises(HdfsError, match=f"port\\(s\\) rpc {taken} already in use"):
            cluster.start(timeout=10)
    assert not cluster.namenode.running() and not (tmp_path / "name").exists()
    kept = json.loads((tmp_path / "ports.json").read_text())
    assert {k: v for k, v in kept.items() if k != "dn_proxy"} == ports and kept["dn_proxy"] > 1024  # chosen, rest kept


@pytest.mark.slow
def test_a_port_taken_between_its_choice_and_the_first_start_is_chosen_again(tmp_path, monkeypatch):
    import replication.devstack.hdfs as hdfs_module

    real_free_port, calls = hdfs_module.free_port, []
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]

        def free_port_then_taken() -> int:  # the fifth port chosen (dn_ipc) is taken before the DataNode binds
            calls.append(1)
            return taken if len(calls) == 5 else real_free_port()

        monkeypatch.setattr(hdfs_module, "free_port", free_port_then_taken)
        cluster = HdfsCluster(tmp_path / "hdfs")
        try:
            cluster.start()
            assert cluster.ports["dn_ipc"] != taken and len(set(cluster.ports.values())) == len(hdfs_module.PORT_NAMES)
            assert f":{cluster.ports['dn_ipc']}<" in (cluster.conf_dir / "hdfs-site.xml").read_text()
            assert cluster.status().live_datanodes == 1
        finally:
            cluster.stop()


def test_a_kerberized_hdfs_site_asks_for_sasl_on_the_data_transfer_port_and_refuses_an_unknown_protection():
    identities = ("hdfs/127.0.0.1@R", "*", "/k.keytab", "/krb5.conf")
    _, hdfs = HdfsKerberos(*identities).site()
    assert hdfs["dfs.data.transfer.protection"] == "privacy"  # the default
    _, hdfs = HdfsKerberos(*identities, data_transfer_protection="authentication,integrity").site()
    assert hdfs["dfs.data.transfer.protection"] == "authentication,integrity"
    with pytest.raises(HdfsError, match=r"^dfs\.data\.transfer\.protection 'auth-conf': expected one or more of "):
        HdfsKerberos(*identities, data_transfer_protection="auth-conf")
