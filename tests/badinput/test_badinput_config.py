"""An hbase-site.xml (or environment override) with bad values: one line naming the key, nothing started."""

from __future__ import annotations

from pathlib import Path

import pytest

from replication.config import write_site_xml
from tests.badinput.helpers import error_line, hbrep


def site(tmp_path: Path, values: dict[str, str]) -> Path:
    path = tmp_path / "hbase-site.xml"
    write_site_xml(path, values)
    return path


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("replication.source.ratio", "1.5", "1.5 is outside (0.0, 1.0]"),
        ("replication.source.nb.capacity", "lots", "'lots' is not an integer"),
        ("replication.source.eof.autorecovery", "maybe", "'maybe' is not a boolean (true/false)"),
        ("hbase.zookeeper.property.clientPort", "70000", "70000 is above the maximum 65535"),
        ("zookeeper.znode.parent", "hbase/", "'hbase/' must start with '/' and not end with '/'"),
        ("zookeeper.znode.replication.rs", "a/b", "'a/b' must be a non-empty znode name without '/'"),
    ],
)
def test_bad_value_names_the_key_and_the_file(tmp_path, cluster_key, key, value, why):
    conf = site(tmp_path, {"replication.source.size.capacity": "1024", key: value})
    result = hbrep("--conf", str(conf), "--cluster", cluster_key, "list_peers")
    assert error_line(result) == f"hbrep: error: bad value for {key} (from {conf}): {why}"
    assert result.returncode == 1 and result.stdout == ""


def test_bad_environment_override_names_the_variable(cluster_key):
    result = hbrep("--cluster", cluster_key, "queues", env={"HBREP__hbase__regionserver__maxlogs": "0"})
    assert error_line(result) == (
        "hbrep: error: bad value for hbase.regionserver.maxlogs "
        "(from environment HBREP__hbase__regionserver__maxlogs): 0 is below the minimum 1"
    )


def test_malformed_files_are_named(tmp_path, cluster_key):
    broken = tmp_path / "broken.xml"
    broken.write_text("<configuration><property><name>x</name>")
    nameless = tmp_path / "nameless.xml"
    nameless.write_text("<configuration><property><value>1</value></property></configuration>")
    wrong_root = tmp_path / "wrong.xml"
    wrong_root.write_text("<settings/>")
    missing = tmp_path / "missing.xml"
    c = ("--cluster", cluster_key, "list_peers")
    assert error_line(hbrep("--conf", str(broken), *c)) == (
        f"hbrep: error: configuration file {broken} is not valid XML: no element found: line 1, column 39"
    )
    assert error_line(hbrep("--conf", str(nameless), *c)) == (
        f"hbrep: error: configuration file {nameless}: a <property> has no <name>"
    )
    assert error_line(hbrep("--conf", str(wrong_root), *c)) == (
        f"hbrep: error: configuration file {wrong_root}: root element is <settings>, not <configuration>"
    )
    assert error_line(hbrep("--conf", str(missing), *c)) == f"hbrep: error: configuration file not found: {missing}"


def test_bad_zk_auth_is_named_without_echoing_the_secret(tmp_path, cluster_key):
    conf = site(tmp_path, {"hbrep.zk.auth": "s3cr3t-no-colon"})
    result = hbrep("--conf", str(conf), "--cluster", cluster_key, "queues")
    line = error_line(result)
    assert line == (
        f"hbrep: error: bad value for hbrep.zk.auth (from {conf}): must be empty or user:password with a "
        "non-empty user and password (value not shown)"
    )
    assert "s3cr3t" not in result.stderr + result.stdout


@pytest.mark.slow
def test_cluster_start_with_a_bad_site_file_starts_nothing(tmp_path, cluster_key, zk_server):
    from kazoo.client import KazooClient

    conf = site(tmp_path, {"hbase.regionserver.logroll.multiplier": "0"})
    root = tmp_path / "root"
    result = hbrep("--conf", str(conf), "--cluster", cluster_key, "cluster", "start", "c", "--root", str(root))
    assert error_line(result) == (
        f"hbrep: error: bad value for hbase.regionserver.logroll.multiplier (from {conf}): 0.0 is outside (0.0, 1.0]"
    )
    assert not root.exists()
    zk = KazooClient(hosts=zk_server.hosts)
    zk.start(timeout=15)
    try:
        assert zk.exists(cluster_key.rsplit(":", 1)[1]) is None  # no znode parent was created
    finally:
        zk.stop()
        zk.close()


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("hbase.regionserver.wal.enablecompression", "hbrep's region servers write uncompressed WALs"),
    ],
)
def test_cluster_start_refuses_what_its_region_servers_cannot_honour(tmp_path, cluster_key, key, why):
    conf = site(tmp_path, {key: "true"})
    root = tmp_path / "root"
    result = hbrep("--conf", str(conf), "--cluster", cluster_key, "cluster", "start", "c", "--root", str(root))
    line = error_line(result)
    assert line.startswith(f"hbrep: error: {key}=true: ") and why in line, line
    assert not root.exists()
