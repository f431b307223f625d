"""Airflow loads this file from the plugins folder: it registers hbrep's Replication view."""

from __future__ import annotations

from hbrep_airflow.plugin import HbrepPlugin

__all__ = ["HbrepPlugin"]
