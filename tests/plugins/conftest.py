"""Airflow test environment for the plugin tests (see airflow_env.py)."""

from __future__ import annotations

import airflow_env

airflow_env.configure()
