"""The embedded stack's Airflow environment: the settings it adds are ones Airflow itself reads; its metadata
database is PostgreSQL unless SQLite is asked for."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from replication.devstack.airflow_stack import (
    DATABASE_ENV,
    MIN_HEARTBEAT_INTERVAL_S,
    SCHEDULER_IDLE_SLEEP_S,
    MetadataDatabaseError,
    airflow_bin,
    airflow_environment,
    metadata_database,
)

REPO = Path(__file__).resolve().parents[2]
SOURCE_KEY = "127.0.0.1:2181:/hbase"
# Where the metadata database would be: `airflow config get-value` reads settings and connects to none.
DATABASE = "postgresql+psycopg2://hbrep:secret@127.0.0.1:1/airflow"


def _airflow_reads(env: dict[str, str], section: str, key: str) -> str:
    done = subprocess.run(
        [airflow_bin(), "config", "get-value", section, key], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_airflow_reads_the_stacks_heartbeat_interval_and_idle_sleep(tmp_path, monkeypatch):
    monkeypatch.delenv("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", raising=False)
    monkeypatch.delenv("AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME", raising=False)
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY, database=DATABASE)
    assert _airflow_reads(env, "workers", "min_heartbeat_interval") == MIN_HEARTBEAT_INTERVAL_S == "1"
    assert _airflow_reads(env, "scheduler", "scheduler_idle_sleep_time") == SCHEDULER_IDLE_SLEEP_S


def test_a_heartbeat_interval_already_in_the_environment_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", "3")
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY, database=DATABASE)
    assert env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == "3"


def test_docker_compose_sets_what_the_embedded_stack_sets():
    compose = yaml.safe_load((REPO / "docker" / "docker-compose.yml").read_text())
    airflow_env = compose["x-airflow-env"]  # every Airflow service's environment
    assert airflow_env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == MIN_HEARTBEAT_INTERVAL_S
    assert airflow_env["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"] == SCHEDULER_IDLE_SLEEP_S


def test_airflow_reads_the_metadata_database_it_is_given(tmp_path):
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY, database=DATABASE)
    assert _airflow_reads(env, "database", "sql_alchemy_conn") == DATABASE


def test_sqlite_only_when_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, "sqlite")
    url, server = metadata_database(tmp_path / "postgres", tmp_path / "airflow")
    assert (url, server) == (f"sqlite:///{tmp_path / 'airflow'}/airflow.db", None)
    assert not (tmp_path / "postgres").exists()  # no PostgreSQL server was made


def test_an_unknown_database_kind_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, "mysql")
    with pytest.raises(MetadataDatabaseError, match="HBREP_AIRFLOW_DB='mysql': expected one of postgres, sqlite"):
        metadata_database(tmp_path / "postgres", tmp_path / "airflow")
    assert not (tmp_path / "postgres").exists()


def test_by_default_a_database_on_the_stacks_postgresql_server(tmp_path, monkeypatch):
    monkeypatch.delenv(DATABASE_ENV, raising=False)
    url, server = metadata_database(tmp_path / "postgres", tmp_path / "airflow", "stack_one")
    try:
        assert server is not None and server.running()
        assert url == server.url("stack_one")
        connection = server.connect("stack_one")  # the database exists
        connection.close()
    finally:
        assert server is not None and server.stop()
