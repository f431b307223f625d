"""Values the DAG files share, read from the environment (and, for hbrep's configuration keys, the site file).

Configuration keys (``hbase.master.cleaner.interval``, ``hbrep.lag.alert.ms``, ``hbrep.spark.mode``) are read
as ``replication.config.Config.load`` reads them, later wins: the default, then the ``hbase-site.xml`` that
``HBREP_CONF`` names, then the ``HBREP__<key>`` environment override (:func:`conf_value`); the library is not
imported (DAG files are parsed without it), and the site file is read once per parse.

- ``HBREP_ZK_CONN_ID`` (default ``hbrep_source``): the ZooKeeper connection of the source cluster;
- ``HBREP_SPARK_CONN_ID`` (default ``spark_default``): the Spark connection of the ship job (submit mode);
- ``hbrep.spark.mode`` (default ``submit``): ``connect`` ships on a Spark Connect server;
- ``HBREP_SPARK_CONNECT_CONN_ID`` (default ``hbrep_spark_connect``): that server's ``spark_connect`` connection;
- ``HBREP_SHIP_SCHEDULE`` (default ``* * * * *``): the ship DAG's schedule;
- ``HBREP_SHIP_ON_EDITS`` (default ``true``): the ship DAG also starts when new edits are queued while no run
  is active (an asset watcher in the triggerer); ``false`` keeps the cron alone;
- ``HBREP_ZK_POOL`` (default ``zookeeper``): the pool every ZooKeeper-touching task runs in;
- ``hbrep.lag.alert.ms``: the lag alert threshold;
- ``hbase.master.cleaner.interval``: how often the log cleaner runs (HMaster's LogCleaner chore period);
- ``HBREP_VERIFY_START`` (default ``2026-11-15``): first day the daily verify DAG covers;
- ``HBREP_CONSISTENCY_POLL_S`` (default ``5``): how often ``hbrep_wait_for_peer`` checks its token.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import xml.etree.ElementTree as ET
from datetime import timedelta
from pathlib import Path

from airflow.sdk import AsyncCallback, DeadlineAlert, DeadlineReference

# the library's own defaults: replication.defaults imports nothing, so DAG parsing still loads no library code
from replication.defaults import CLEANER_INTERVAL_MS as DEFAULT_CLEANER_INTERVAL_MS
from replication.defaults import LAG_ALERT_MS as DEFAULT_LAG_ALERT_MS

ZK_CONN_ID = os.environ.get("HBREP_ZK_CONN_ID", "hbrep_source")
SPARK_CONN_ID = os.environ.get("HBREP_SPARK_CONN_ID", "spark_default")
ZK_POOL = os.environ.get("HBREP_ZK_POOL", "zookeeper")
SPARK_CONNECT_CONN_ID = os.environ.get("HBREP_SPARK_CONNECT_CONN_ID", "hbrep_spark_connect")
VERIFY_START = os.environ.get("HBREP_VERIFY_START", "2026-11-15")


@functools.lru_cache(maxsize=4)
def _site_values(path: str) -> dict[str, str]:
    """The ``<property>`` values of an hbase-site.xml (as ``replication.config.read_site_xml``); a file that
    is missing or not XML raises, naming it, as the library does."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ValueError(f"configuration file {path} (HBREP_CONF) cannot be read: {exc}") from None
    return {
        (prop.findtext("name") or "").strip(): (prop.findtext("value") or "").strip() for prop in root.iter("property")
    }


def conf_value(key: str, default: str) -> str:
    """A configuration key as ``Config.load`` layers it: ``HBREP__<key>`` (``.`` as ``__``), else the
    ``HBREP_CONF`` site file's value, else ``default`` (the library's default)."""
    override = os.environ.get("HBREP__" + key.replace(".", "__"))
    if override is not None:
        return override
    site = os.environ.get("HBREP_CONF")
    if site:
        return _site_values(site).get(key, default)
    return default


def spark_mode() -> str:
    """``hbrep.spark.mode`` (read when the DAG file is parsed), else ``submit``."""
    return conf_value("hbrep.spark.mode", "submit").strip()


def consistency_poll_s() -> float:
    """Seconds between two checks of a consistency token: ``HBREP_CONSISTENCY_POLL_S``, else 5."""
    return float(os.environ.get("HBREP_CONSISTENCY_POLL_S", "5"))


def ship_schedule() -> str:
    """The ship DAG's schedule: ``HBREP_SHIP_SCHEDULE``, else every minute."""
    return os.environ.get("HBREP_SHIP_SCHEDULE", "* * * * *")


def ship_on_edits() -> bool:
    """``HBREP_SHIP_ON_EDITS`` (``true``/``false``, also ``1``/``0``, ``yes``/``no``), else true; any other value
    raises, naming it.

    On by default (event-started ship runs beside the cron, as in HBase where a source ships as soon as its
    WAL reader sees an edit); the tests of scheduled ship runs alone set ``false``.
    """
    raw = os.environ.get("HBREP_SHIP_ON_EDITS", "true").strip().lower()
    if raw not in ("true", "1", "yes", "false", "0", "no"):
        raise ValueError(f"HBREP_SHIP_ON_EDITS must be true or false, not {raw!r}")
    return raw in ("true", "1", "yes")


def lag_alert_ms() -> int:
    """``hbrep.lag.alert.ms`` (:func:`conf_value`), else the library default."""
    return int(conf_value("hbrep.lag.alert.ms", str(DEFAULT_LAG_ALERT_MS)))


def lag_deadline() -> timedelta:
    """How long a ship run may take from being queued before the lag deadline alert fires."""
    return timedelta(milliseconds=lag_alert_ms())


def cleaner_interval() -> timedelta:
    """``hbase.master.cleaner.interval`` (HMaster's LogCleaner chore period) as the log cleaner DAG's schedule."""
    ms = int(conf_value("hbase.master.cleaner.interval", str(DEFAULT_CLEANER_INTERVAL_MS)))
    if ms < 1:  # the library's validator: at least 1 ms
        raise ValueError(f"bad value for hbase.master.cleaner.interval: {ms} is below the minimum 1")
    return timedelta(milliseconds=ms)


def ship_deadline() -> DeadlineAlert:
    """The ship DAG's DeadlineAlert: when a run is still going ``hbrep.lag.alert.ms`` after it was queued,
    the triggerer runs ``notifiers.lag_deadline_missed``, which records the alert on the source cluster."""
    return DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT,
        interval=lag_deadline(),
        callback=AsyncCallback(
            "hbrep_airflow.notifiers.lag_deadline_missed",
            kwargs={"threshold_ms": lag_alert_ms(), "zookeeper_conn_id": ZK_CONN_ID},
        ),
    )


def ship_script() -> str:
    """Path of ``replication/jobs/ship.py`` (``replication.jobs.launch.SHIP_SCRIPT``), found without
    importing the library: DAG files are parsed without it (tests/dags/test_dag_import.py)."""
    spec = importlib.util.find_spec("replication")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the replication package is not importable")
    return str(Path(next(iter(spec.submodule_search_locations))) / "jobs" / "ship.py")


def pyfiles_here(snapshot: dict) -> str:
    """The ``--py-files`` zip for a ship task, on the machine that renders the task (its worker). For a manifest
    on HDFS, the package zipped in this worker's own temp dir (``replication.jobs.launch.pyfiles_for``, once per
    code version): the snapshot task may have run on another host, whose temp dir this one cannot read. For a
    local manifest, the snapshot's zip beside it. Used as the DAG's ``hbrep_pyfiles`` macro; the library is
    imported only when a ship task is rendered, never at parse time."""
    if "://" not in snapshot["manifest"]:
        return str(snapshot["pyfiles"])
    from replication.jobs.launch import pyfiles_for

    return str(pyfiles_for(snapshot["manifest"]))


SHIP_PYFILES = "{{ hbrep_pyfiles(ti.xcom_pull(task_ids='peer.snapshot', map_indexes=ti.map_index)) }}"


def snapshot_xcom(key: str, snapshot_task_id: str = "peer.snapshot") -> str:
    """Jinja pulling ``key`` of the same map index's snapshot XCom (for the ship task's templated args)."""
    return f"{{{{ ti.xcom_pull(task_ids='{snapshot_task_id}', map_indexes=ti.map_index)['{key}'] }}}}"
