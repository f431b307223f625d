from __future__ import annotations

import pytest

from replication.config import DEFAULTS, Config, read_site_xml, write_site_xml
from replication.errors import ConfigError


def test_defaults_match_hbase():
    conf = Config.load(env={})
    assert conf.get_int("replication.source.size.capacity") == 67108864
    assert conf.get_int("replication.source.nb.capacity") == 25000
    assert conf.get_float("replication.source.ratio") == 0.5
    assert conf.get_int("replication.sleep.before.failover") == 30000
    assert conf.get_int("hbase.master.logcleaner.ttl") == 600000
    assert conf.get_bool("replication.source.eof.autorecovery") is False
    assert conf.get_str("zookeeper.znode.parent") == "/hbase"
    assert conf.source_of("replication.source.ratio") == "defaults"


def test_site_xml_overrides_defaults_and_keeps_unknown_keys(tmp_path):
    site = tmp_path / "hbase-site.xml"
    site.write_text(
        """<?xml version="1.0"?>
<configuration>
  <property><name>replication.source.ratio</name><value>0.25</value></property>
  <property><name>replication.source.nb.capacity</name><value> 100 </value></property>
  <property><name>my.custom.key</name><value>kept</value></property>
</configuration>
"""
    )
    conf = Config.load(site, env={})
    assert conf.get_float("replication.source.ratio") == 0.25
    assert conf.get_int("replication.source.nb.capacity") == 100
    assert conf["my.custom.key"] == "kept"
    assert conf.source_of("replication.source.ratio") == str(site)


def test_env_file_and_env_overrides(tmp_path):
    site = tmp_path / "site.xml"
    write_site_xml(site, {"replication.source.ratio": 0.3})
    env = {"HBREP_CONF": str(site), "HBREP__replication__source__nb__capacity": "7"}
    conf = Config.load(env=env)
    assert conf.get_float("replication.source.ratio") == 0.3
    assert conf.get_int("replication.source.nb.capacity") == 7
    assert conf.source_of("replication.source.nb.capacity") == "environment HBREP__replication__source__nb__capacity"


def test_bad_ratio_rejected_with_key_named(tmp_path):
    site = tmp_path / "hbase-site.xml"
    write_site_xml(site, {"replication.source.ratio": 2})
    with pytest.raises(ConfigError, match=r"replication\.source\.ratio .*2\.0 is outside \(0\.0, 1\.0\]"):
        Config.load(site, env={})


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("replication.source.nb.capacity", "many", "not an integer"),
        ("replication.source.size.capacity", "0", "below the minimum 1"),
        ("replication.source.eof.autorecovery", "maybe", "not a boolean"),
        ("zookeeper.znode.parent", "hbase", "must start with '/'"),
        ("hbrep.regionserver.gc.thresholds", "20000,20", "three comma-separated non-negative integers"),
        ("hbrep.regionserver.gc.thresholds", "20000,-1,10", "three comma-separated non-negative integers"),
        ("hbrep.spark.mode", "yarn", "'yarn' is not one of connect | submit"),
        ("hbrep.spark.connect.url", "http://127.0.0.1:15002", "not a Spark Connect URL"),
        ("hbrep.spark.connect.port", "70000", "above the maximum 65535"),
        ("hbrep.ship.window.ms", "-1", "below the minimum 0"),
    ],
)
def test_bad_values_rejected(key, value, message):
    with pytest.raises(ConfigError, match=message) as info:
        Config.load(env={}, overrides={key: value})
    assert key in str(info.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        Config.load(tmp_path / "nope.xml", env={})
    bad = tmp_path / "bad.xml"
    bad.write_text("<configuration><property>")
    with pytest.raises(ConfigError, match="not valid XML"):
        Config.load(bad, env={})
    wrong = tmp_path / "wrong.xml"
    wrong.write_text("<settings/>")
    with pytest.raises(ConfigError, match="not <configuration>"):
        read_site_xml(wrong)


def test_site_xml_round_trip(tmp_path):
    path = tmp_path / "x.xml"
    write_site_xml(path, {"a.b": "1", "c": True})
    assert read_site_xml(path) == {"a.b": "1", "c": "true"}


def test_with_overrides_validates():
    conf = Config.load(env={})
    assert conf.with_overrides({"replication.source.ratio": "1"}).get_float("replication.source.ratio") == 1.0
    with pytest.raises(ConfigError):
        conf.with_overrides({"replication.source.ratio": "0"})
    assert set(DEFAULTS) <= set(conf)


def test_a_bad_spark_mode_is_one_clear_line_from_the_cli(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "replication.cli", "spark", "status"],
        capture_output=True,
        text=True,
        env={"HBREP__hbrep__spark__mode": "local", "PATH": ""},
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "hbrep: error: bad value for hbrep.spark.mode (from environment HBREP__hbrep__spark__mode): "
        "'local' is not one of connect | submit"
    ]
