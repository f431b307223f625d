"""Shadow peers (zk/shadow_peer.py) and a real HBase registered as a source (cluster/hbase_source.py),
on a real ZooKeeper; the end-to-end run against real HBase is tests/interop/test_shadow_peer.py."""

from __future__ import annotations

import pytest

from replication.cluster.errors import ClusterError, NoClusterInfo
from replication.cluster.hbase_source import (
    HBaseSource,
    check_rootdir,
    read_hbase_source,
    register_hbase_source,
    unregister_hbase_source,
)
from replication.cluster.source_cluster import open_source, source_name
from replication.config import Config
from replication.errors import ConfigError
from replication.failover import failover_once
from replication.zk.cluster_id import create_cluster_id_if_absent, read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.peer_storage import ReplicationPeerConfig
from replication.zk.shadow_peer import SHADOW_KEY, hbrep_ships, is_shadow_peer


def _config(**configuration: str) -> ReplicationPeerConfig:
    return ReplicationPeerConfig(cluster_key="zk:2181:/b", configuration=configuration)


def test_a_plain_peer_ships_while_enabled_and_a_shadow_peer_while_hbase_holds_it_disabled():
    assert hbrep_ships("p", _config(), True) == (True, "")
    assert hbrep_ships("p", _config(), False) == (False, "")
    assert hbrep_ships("s", _config(**{SHADOW_KEY: "true"}), False) == (True, "")
    assert hbrep_ships("s", _config(**{SHADOW_KEY: " TRUE "}), False) == (True, "")
    assert hbrep_ships("s", _config(**{SHADOW_KEY: "false"}), True) == (True, "")
    assert is_shadow_peer(_config(**{SHADOW_KEY: "true"})) and not is_shadow_peer(_config())


def test_a_shadow_peer_enabled_in_hbase_or_a_bad_mark_is_one_error_line_not_a_silent_skip():
    ships, error = hbrep_ships("s", _config(**{SHADOW_KEY: "true"}), True)
    assert ships and "peer s is a shadow peer" in error and "ENABLED in HBase" in error and "\n" not in error
    ships, error = hbrep_ships("s", _config(**{SHADOW_KEY: "yes"}), False)
    assert ships and error == "peer s: hbrep.peer.shadow must be true or false, not 'yes'"
    assert not is_shadow_peer(_config(**{SHADOW_KEY: "yes"}))


def test_a_registered_real_hbase_opens_as_a_source_of_kind_hbase_and_failover_leaves_it_to_hbase(
    zkc, paths, cluster_key, tmp_path
):
    key = ClusterKey.parse(cluster_key)
    conf = Config.load(env={})
    create_cluster_id_if_absent(zkc, paths)
    with pytest.raises(NoClusterInfo, match="nor a real HBase source"):
        open_source(zkc, key, conf)
    with pytest.raises(NoClusterInfo, match="nor a real HBase source"):
        source_name(zkc, key, conf)
    (tmp_path / "WALs").mkdir()
    assert check_rootdir(tmp_path.as_uri()) == tmp_path.as_uri()
    with pytest.raises(ClusterError, match="no WALs/ folder"):
        check_rootdir(str(tmp_path / "elsewhere"))
    register_hbase_source(zkc, paths, HBaseSource(tmp_path.as_uri()))
    assert read_hbase_source(zkc, paths) == HBaseSource(tmp_path.as_uri())
    assert paths.hbase_source.startswith(paths.hbrep_root)  # nothing in HBase's own replication tree
    source = open_source(zkc, key, conf)
    assert source.is_real_hbase and source.root == str(tmp_path)
    # its name in the ship DAG's asset URIs: HBase's own cluster id (it has no hbrep ClusterInfo)
    assert source_name(zkc, key, conf) == f"hbase-{read_cluster_id(zkc, paths)}"

    # a dead server's WAL folder: HBase's master splits and claims it, hbrep only reports it
    (tmp_path / "WALs" / "127.0.0.1,16020,1700000000000").mkdir()
    report = failover_once(zkc, key, conf)
    assert report.mode == "hbase"
    assert [(s.server, s.action) for s in report.servers] == [("127.0.0.1,16020,1700000000000", "left-to-hbase")]
    forced = failover_once(zkc, key, Config.load(env={}, overrides={"hbrep.failover.mode": "hbrep"}))
    assert forced.mode == "hbrep"
    with pytest.raises(ConfigError, match=r"bad value for hbrep\.failover\.mode .*'sometimes' is not one of auto"):
        Config.load(env={}, overrides={"hbrep.failover.mode": "sometimes"})
    assert unregister_hbase_source(zkc, paths) and read_hbase_source(zkc, paths) is None


def test_enable_and_disable_peer_refuse_a_shadow_peer_with_one_line(zkc, paths, cluster_key):
    import subprocess
    import sys

    from replication.zk.peer_storage import ReplicationPeerStorage

    ReplicationPeerStorage(zkc, paths).add_peer("s", _config(**{SHADOW_KEY: "true"}), enabled=False)
    for command in ("enable_peer", "disable_peer"):
        done = subprocess.run(
            [sys.executable, "-m", "replication.cli", "--cluster", cluster_key, command, "s"],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 1 and done.stderr.strip().splitlines() == [
            "hbrep: error: peer s is a shadow peer: HBase holds it DISABLED and hbrep ships it; to stop shipping, "
            "pause its ship DAG (or remove_peer)"
        ], done.stderr
    assert not ReplicationPeerStorage(zkc, paths).is_peer_enabled("s")
