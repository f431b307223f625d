"""The environment Airflow runs under for the embedded stack (``make demo``, ``make up``).

Only strings: nothing here imports Airflow. Airflow's home is a folder of the stack, the DAGs and the
plugin are this repository's, the source cluster is the ``hbrep_source`` connection (type ``zookeeper``),
Spark runs on ``local[2]``, and everything listens on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def airflow_environment(
    home: Path,
    source_key: str,
    *,
    api_port: int | None = None,
    spark_connect_port: int | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """This process's environment plus what every Airflow process of the embedded stack needs.

    ``api_port`` adds the API server's address (``airflow standalone``); ``spark_connect_port`` makes
    the ship DAG run on that Spark Connect server (``hbrep.spark.mode=connect``, the
    ``hbrep_spark_connect`` connection of type ``spark_connect``); ``extra`` is applied last.
    """
    quorum, zk_port, parent = source_key.rsplit(":", 2)
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
            "AIRFLOW_CONN_HBREP_SOURCE": json.dumps(
                {"conn_type": "zookeeper", "host": quorum, "port": int(zk_port), "schema": parent}
            ),
            "HBREP_CLUSTER": source_key,
            "PATH": bin_dir + os.pathsep + env.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "plugins"), env.get("PYTHONPATH")) if p),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "GX_ANALYTICS_ENABLED": "false",
        }
    )
    if api_port is not None:
        env.update(
            {
                "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                "AIRFLOW__API__HOST": "127.0.0.1",
                "AIRFLOW__API__PORT": str(api_port),
                "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{api_port}",
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{api_port}/execution/",
                "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": "0",
                "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": "0",
            }
        )
    if spark_connect_port is not None:
        env.update(
            {
                "HBREP__hbrep__spark__mode": "connect",
                "AIRFLOW_CONN_HBREP_SPARK_CONNECT": json.dumps(
                    {"conn_type": "spark_connect", "host": "127.0.0.1", "port": spark_connect_port}
                ),
            }
        )
    env.update(extra or {})
    return env
