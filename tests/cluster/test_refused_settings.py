"""HBase settings hbrep's region servers cannot honour stop them at start with one line naming the key
(``hbase.regionserver.wal.enablecompression``); false, the default, starts them. ``hbase.replication.bulkload.
enabled=true`` is accepted (an hbrep cluster receives bulk loads as a peer). Real region servers."""

from __future__ import annotations

import pytest

from replication.cluster.embedded import start_cluster
from replication.errors import HbrepError


@pytest.mark.slow
@pytest.mark.parametrize("key", ["hbase.regionserver.wal.enablecompression"])
def test_a_setting_hbrep_cannot_honour_stops_the_region_server(cluster_key, tmp_path, cluster_conf, key):
    with pytest.raises(HbrepError, match=rf"{key.replace('.', chr(92) + '.')}=true"):
        start_cluster(cluster_key, str(tmp_path / "on"), 1, conf=cluster_conf.with_overrides({key: True}), name="on")
    off = cluster_conf.with_overrides({key: False})
    with start_cluster(cluster_key + "-off", str(tmp_path / "off"), 1, conf=off, name="off") as cluster:
        assert len(cluster.servers) == 1


@pytest.mark.slow
def test_bulk_load_replication_on_starts_the_region_server(cluster_key, tmp_path, cluster_conf):
    on = cluster_conf.with_overrides({"hbase.replication.bulkload.enabled": True})
    with start_cluster(cluster_key + "-bulk", str(tmp_path / "bulk"), 1, conf=on, name="bulk") as cluster:
        assert len(cluster.servers) == 1
