"""Airflow executors for hbrep deployments."""
