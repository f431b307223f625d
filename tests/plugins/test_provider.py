"""Provider registration, the plugin's mounts, and ZooKeeperHook against a real ZooKeeper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_provider_info_matches_airflows_schema():
    import importlib.resources

    import jsonschema
    from hbrep_airflow import get_provider_info

    schema = json.loads(importlib.resources.files("airflow").joinpath("provider_info.schema.json").read_text())
    info = get_provider_info()
    jsonschema.validate(info, schema)
    (conn_type,) = info["connection-types"]
    assert conn_type == {
        "connection-type": "zookeeper",
        "hook-class-name": "hbrep_airflow.hooks.zookeeper.ZooKeeperHook",
    }
    from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

    assert ZooKeeperHook.conn_type == "zookeeper"


def test_plugin_mounts_the_view_and_adds_a_nav_entry():
    from hbrep_plugin import HbrepPlugin

    (app,) = HbrepPlugin.fastapi_apps
    assert app["url_prefix"] == "/hbrep"
    routes = {route.path for route in app["app"].routes}
    assert {"/", "/api/status"} <= routes
    (view,) = HbrepPlugin.external_views
    assert view["href"] == "/hbrep/" and view["name"] == "Replication"


def test_zookeeper_hook_reads_quorum_port_parent_and_auth(monkeypatch, zk_server):
    from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

    monkeypatch.setenv("AIRFLOW_CONN_ZK_TEST", f"zookeeper://alice:secret@127.0.0.1:{zk_server.port}/hbase-x")
    hook = ZooKeeperHook("zk_test")
    assert str(hook.cluster_key) == f"127.0.0.1:{zk_server.port}:/hbase-x"
    assert hook.auth == "alice:secret"
    ok, message = hook.test_connection()
    assert not ok and "/hbase-x does not exist" in message
    with hook.connected() as zk:
        zk.ensure_path("/hbase-x")
    assert hook.test_connection() == (True, f"connected to 127.0.0.1:{zk_server.port}:/hbase-x")


def test_zookeeper_hook_json_form_and_missing_quorum(monkeypatch):
    from hbrep_airflow.hooks.zookeeper import ZooKeeperHook

    from replication.errors import HbrepError

    monkeypatch.setenv(
        "AIRFLOW_CONN_ZK_JSON", json.dumps({"conn_type": "zookeeper", "host": "zk1,zk2", "schema": "/hbase-b"})
    )
    assert str(ZooKeeperHook("zk_json").cluster_key) == "zk1,zk2:2181:/hbase-b"
    monkeypatch.setenv("AIRFLOW_CONN_ZK_EMPTY", json.dumps({"conn_type": "zookeeper", "port": 2181}))
    with pytest.raises(HbrepError, match="connection zk_empty: no ZooKeeper quorum"):
        _ = ZooKeeperHook("zk_empty").cluster_key


def test_dag_settings_take_the_library_defaults(monkeypatch):
    """The lag alert threshold and the log cleaner's interval of the DAG files are the library's defaults."""
    from datetime import timedelta

    from hbrep_airflow import dag_settings

    from replication.config import Config

    monkeypatch.delenv("HBREP__hbrep__lag__alert__ms", raising=False)
    monkeypatch.delenv("HBREP__hbase__master__cleaner__interval", raising=False)
    conf = Config.load(env={})
    assert dag_settings.lag_alert_ms() == conf.get_int("hbrep.lag.alert.ms") == dag_settings.DEFAULT_LAG_ALERT_MS
    assert dag_settings.cleaner_interval() == timedelta(milliseconds=conf.get_int("hbase.master.cleaner.interval"))
    assert conf.get_int("hbase.master.cleaner.interval") == dag_settings.DEFAULT_CLEANER_INTERVAL_MS
    monkeypatch.setenv("HBREP__hbrep__lag__alert__ms", "1234")
    assert dag_settings.lag_alert_ms() == Config.load().get_int("hbrep.lag.alert.ms") == 1234


def test_ship_on_edits_is_on_unless_turned_off_and_a_bad_value_is_named(monkeypatch):
    from hbrep_airflow import dag_settings

    monkeypatch.delenv("HBREP_SHIP_ON_EDITS", raising=False)
    assert dag_settings.ship_on_edits() is True
    monkeypatch.setenv("HBREP_SHIP_ON_EDITS", "no")
    assert dag_settings.ship_on_edits() is False
    monkeypatch.setenv("HBREP_SHIP_ON_EDITS", "yes")
    assert dag_settings.ship_on_edits() is True
    monkeypatch.setenv("HBREP_SHIP_ON_EDITS", "False")
    assert dag_settings.ship_on_edits() is False
    monkeypatch.setenv("HBREP_SHIP_ON_EDITS", "sometimes")
    with pytest.raises(ValueError, match="HBREP_SHIP_ON_EDITS must be true or false, not 'sometimes'"):
        dag_settings.ship_on_edits()


def test_the_ship_tasks_pyfiles_are_zipped_on_its_own_worker_for_a_manifest_on_hdfs(tmp_path, monkeypatch):
    """Celery workers on separate hosts: the snapshot's zip is in the other worker's temp dir, so the ship
    task's worker zips the package in its own, once per code version; a local manifest keeps the snapshot's."""
    import zipfile

    from hbrep_airflow import dag_settings

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "this-worker-tmp"))
    (tmp_path / "this-worker-tmp").mkdir()
    elsewhere = "/nonexistent/other-worker-tmp/hbrep-pyfiles/hbrep-replication-0123.zip"
    manifest = "webhdfs://127.0.0.1:9870/hbase-a/.hbrep/airflow-cycles/cycle-7/manifest.json"
    here = dag_settings.pyfiles_here({"pyfiles": elsewhere, "manifest": manifest})
    assert here.startswith(str(tmp_path / "this-worker-tmp" / "hbrep-pyfiles" / "hbrep-replication-")), here
    with zipfile.ZipFile(here) as archive:
        assert "replication/jobs/ship.py" in archive.namelist()
    built = Path(here).stat().st_mtime_ns
    assert dag_settings.pyfiles_here({"pyfiles": elsewhere, "manifest": manifest}) == here  # built once
    assert Path(here).stat().st_mtime_ns == built
    beside = str(tmp_path / "cycle-8" / "hbrep-replication.zip")
    local_manifest = str(tmp_path / "cycle-8" / "manifest.json")
    assert dag_settings.pyfiles_here({"pyfiles": beside, "manifest": local_manifest}) == beside
    assert "hbrep_pyfiles(" in dag_settings.SHIP_PYFILES
