"""Defaults that the Airflow DAG files need when they are parsed, where the library must not load: this
module imports nothing (``plugins/hbrep_airflow/dag_settings.py`` reads them; ``replication.config``'s
``DEFAULTS`` are built from them, so there is one place for each value)."""

LAG_ALERT_MS = 300000
"""``hbrep.lag.alert.ms``: a ship run still going this long after it was queued raises a lag alert."""

CLEANER_INTERVAL_MS = 600000
"""``hbase.master.cleaner.interval`` (HMaster's LogCleaner chore period; hbase-default.xml's value)."""
