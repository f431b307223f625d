"""The embedded stack's Airflow environment: the settings it adds are ones Airflow itself reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from replication.devstack.airflow_stack import (
    MIN_HEARTBEAT_INTERVAL_S,
    SCHEDULER_IDLE_SLEEP_S,
    airflow_bin,
    airflow_environment,
)

REPO = Path(__file__).resolve().parents[2]
SOURCE_KEY = "127.0.0.1:2181:/hbase"


def _airflow_reads(env: dict[str, str], section: str, key: str) -> str:
    done = subprocess.run(
        [airflow_bin(), "config", "get-value", section, key], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_airflow_reads_the_stacks_heartbeat_interval_and_idle_sleep(tmp_path, monkeypatch):
    monkeypatch.delenv("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", raising=False)
    monkeypatch.delenv("AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME", raising=False)
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY)
    assert _airflow_reads(env, "workers", "min_heartbeat_interval") == MIN_HEARTBEAT_INTERVAL_S == "1"
    assert _airflow_reads(env, "scheduler", "scheduler_idle_sleep_time") == SCHEDULER_IDLE_SLEEP_S


def test_a_heartbeat_interval_already_in_the_environment_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", "3")
    env = airflow_environment(tmp_path / "airflow", SOURCE_KEY)
    assert env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == "3"


def test_docker_compose_sets_what_the_embedded_stack_sets():
    compose = yaml.safe_load((REPO / "docker" / "docker-compose.yml").read_text())
    airflow_env = compose["x-airflow-env"]  # every Airflow service's environment
    assert airflow_env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == MIN_HEARTBEAT_INTERVAL_S
    assert airflow_env["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"] == SCHEDULER_IDLE_SLEEP_S
