"""Triggers that run in Airflow's triggerer: async waits over the ``replication`` library (through hooks)."""
