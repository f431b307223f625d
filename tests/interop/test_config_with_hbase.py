"""Configuration: hbrep's Config reads the hbase-site.xml the real HBase runs with, and every key hbrep
shares with HBase has HBase's default, compared against HBase itself: hbase-default.xml from the
hbase-common jar, and (for keys that file does not list) the default constants compiled into HBase's
classes, read with javap."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from replication.config import DEFAULTS, Config
from replication.devstack.maven import interop_classpath
from replication.zk.layout import ZNodePaths

pytestmark = pytest.mark.slow

# Keys whose default HBase declares as a constant rather than in hbase-default.xml: (class under
# org.apache.hadoop.hbase, field).
CODE_DEFAULTS = {
    "replication.source.shipedits.timeout": ("HConstants", "REPLICATION_SOURCE_SHIPEDITS_TIMEOUT_DFAULT"),
    "hbase.regionserver.replication.handler.count": ("HConstants", "DEFAULT_REGION_SERVER_REPLICATION_HANDLER_COUNT"),
    "hbase.replication.source.maxthreads": ("HConstants", "REPLICATION_SOURCE_MAXTHREADS_DEFAULT"),
    "hbase.replication.bulkload.enabled": ("HConstants", "REPLICATION_BULKLOAD_ENABLE_DEFAULT"),
    "hbase.rpc.timeout": ("HConstants", "DEFAULT_HBASE_RPC_TIMEOUT"),
    "zookeeper.znode.parent": ("HConstants", "DEFAULT_ZOOKEEPER_ZNODE_PARENT"),
    "zookeeper.session.timeout": ("HConstants", "DEFAULT_ZK_SESSION_TIMEOUT"),
    "hbase.zookeeper.property.clientPort": ("HConstants", "DEFAULT_ZOOKEEPER_CLIENT_PORT"),
    "zookeeper.znode.replication": ("replication.ZKReplicationStorageBase", "REPLICATION_ZNODE_DEFAULT"),
    "zookeeper.znode.replication.peers": ("replication.ZKReplicationPeerStorage", "PEERS_ZNODE_DEFAULT"),
    "zookeeper.znode.replication.peers.state": ("replication.ZKReplicationPeerStorage", "PEERS_STATE_ZNODE_DEFAULT"),
    "zookeeper.znode.replication.hfile.refs": (
        "replication.ZKReplicationQueueStorage", "ZOOKEEPER_ZNODE_REPLICATION_HFILE_REFS_DEFAULT"
    ),
    "zookeeper.znode.replication.regions": (
        "replication.ZKReplicationQueueStorage", "ZOOKEEPER_ZNODE_REPLICATION_REGIONS_DEFAULT"
    ),
    "replication.bad.sink.threshold": ("replication.regionserver.ReplicationSinkManager", "DEFAULT_BAD_SINK_THRESHOLD"),
    "replication.source.ratio": ("replication.regionserver.ReplicationSinkManager", "DEFAULT_REPLICATION_SOURCE_RATIO"),
    "hbase.separate.oldlogdir.by.regionserver": ("wal.AbstractFSWALProvider", "DEFAULT_SEPARATE_OLDLOGDIR"),
}  # fmt: skip

# Deliberate differences (docs/hbase.md, "Real HBase beside hbrep"): hbrep's embedded region servers bind a
# free port by default (0), where an HBase region server takes 16020.
DELIBERATE = {"hbase.regionserver.port": ("0", "16020")}


def _hbase_default_xml() -> dict[str, str]:
    jar = next(j for j in interop_classpath().split(":") if Path(j).name.startswith("hbase-common-"))
    root = ET.fromstring(zipfile.ZipFile(jar).read("hbase-default.xml"))
    return {p.findtext("name").strip(): (p.findtext("value") or "").strip() for p in root.iter("property")}


def _constants(class_names: list[str]) -> dict[str, dict[str, str]]:
    """The static final constants of each class (name -> value as javap prints it), read by one javap run (a
    JVM start each took about 5 s)."""
    done = subprocess.run(["javap", "-p", "-constants", "-cp", interop_classpath(), *class_names],
                          capture_output=True, text=True, check=True)  # fmt: skip
    listings = re.split(r"^Compiled from .*$", done.stdout, flags=re.MULTILINE)[1:]  # one per class, in order
    assert len(listings) == len(class_names), done.stdout[:2000]
    constants: dict[str, dict[str, str]] = {}
    for class_name, listing in zip(class_names, listings, strict=True):
        assert f" {class_name}" in listing.split("{", 1)[0], (class_name, listing[:300])
        found = constants.setdefault(class_name, {})
        for match in re.finditer(r"static final \S+ (\w+) = (.*);", listing):
            value = match.group(2)
            value = value[1:-1] if value.startswith('"') else re.sub(r"(?<=\d)[lfd]$", "", value)
            found[match.group(1)] = value
    return constants


def _same(ours: str, theirs: str) -> bool:
    try:
        return float(ours) == float(theirs)
    except ValueError:
        return ours.lower() == theirs.lower()


def test_every_shared_key_has_hbases_default():
    xml = _hbase_default_xml()
    constants = _constants(sorted({f"org.apache.hadoop.hbase.{name}" for name, _field in CODE_DEFAULTS.values()}))
    compared, differing = [], []
    for key, ours in DEFAULTS.items():
        if key.startswith("hbrep."):
            continue
        if key in xml:
            theirs = xml[key]
        elif key in CODE_DEFAULTS:
            class_name, field = CODE_DEFAULTS[key]
            theirs = constants[f"org.apache.hadoop.hbase.{class_name}"][field]
        else:
            continue  # an inline literal in HBase's code (spec §9 names the class)
        compared.append(key)
        if not _same(ours, theirs) and DELIBERATE.get(key) != (ours, theirs):
            differing.append((key, ours, theirs))
    assert differing == []
    # 23 since the keys no hbrep code reads left DEFAULTS (config.NOT_USED_HBASE_KEYS)
    assert len(compared) >= 23, compared
    assert DELIBERATE["hbase.regionserver.port"][1] == xml["hbase.regionserver.port"]


def test_config_reads_the_site_file_real_hbase_runs_with(real_hbase):
    layout = real_hbase.layout()
    conf = Config.load(real_hbase.site_file, env={})
    assert conf.source_of("zookeeper.znode.parent") == str(real_hbase.site_file)
    assert conf.get_str("zookeeper.znode.parent") == layout.znode_parent
    assert conf.get_int("hbase.zookeeper.property.clientPort") == layout.zk_port
    assert conf.get_str("hbase.zookeeper.quorum") == layout.zk_quorum
    assert conf.get_str("hbase.wal.provider") == "filesystem"
    assert conf.get_int("hbase.regionserver.port") == layout.regionserver_ports[0]
    assert conf.get_int("zookeeper.session.timeout") == 20000
    assert ZNodePaths(conf).queues == f"{layout.znode_parent}/replication/rs"
    assert conf.get_str("hbase.rootdir") == real_hbase.rootdir.as_uri()
