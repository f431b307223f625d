"""Airflow for tests: AIRFLOW_HOME in a temp dir, the repo's dags/ and plugins/ folders, a migrated SQLite DB.

``configure()`` must run before ``airflow`` is first imported (it only sets environment variables);
``init_db()`` migrates the DB once per session and creates the ``zookeeper`` pool.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"
PLUGINS = REPO / "plugins"


def configure() -> Path:
    """Point Airflow at a private home, the repo's dags/plugins and a local[2] Spark connection."""
    home = os.environ.get("HBREP_TEST_AIRFLOW_HOME")
    if home is None:
        home = tempfile.mkdtemp(prefix="hbrep-")
        os.environ["HBREP_TEST_AIRFLOW_HOME"] = home
    env = {
        "AIRFLOW_HOME": home,
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PLUGINS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
    }
    os.environ.update(env)
    if str(PLUGINS) not in sys.path:
        sys.path.insert(0, str(PLUGINS))
    return Path(home)


_DB_READY = False


def init_db() -> None:
    """Migrate the Airflow DB (once) and create the ``zookeeper`` pool the DAGs use."""
    global _DB_READY
    if _DB_READY:
        return
    from airflow.models.pool import Pool
    from airflow.utils.db import initdb

    initdb()
    Pool.create_or_update_pool("zookeeper", slots=4, description="protects the ZooKeeper ensemble",
                               include_deferred=False)  # fmt: skip
    _DB_READY = True


def zk_connection_json(cluster_key: str) -> str:
    """``AIRFLOW_CONN_*`` JSON for a cluster key ``host:port:/parent``."""
    quorum, port, parent = cluster_key.rsplit(":", 2)
    return json.dumps({"conn_type": "zookeeper", "host": quorum, "port": int(port), "schema": parent})
