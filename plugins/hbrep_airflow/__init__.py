"""hbrep's Airflow provider: hooks, operators and the Replication UI view over the ``replication`` library.

Provider-style registration: :func:`get_provider_info` is what the ``apache_airflow_provider`` entry point
names, so the ``zookeeper`` connection type shows in the Airflow UI once the package is installed with it.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def get_provider_info() -> dict[str, Any]:
    """Provider metadata in the shape of Airflow's provider_info schema (connection type, hooks, operators)."""
    return {
        "package-name": "hbrep",
        "name": "hbrep",
        "description": "HBase-style cluster replication run as batch (ZooKeeper queues, PySpark ship jobs).",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "hbrep",
                "external-doc-url": "https://hbase.apache.org/book.html#_cluster_replication",
                "tags": ["apache"],
            }
        ],
        "hooks": [
            {
                "integration-name": "hbrep",
                "python-modules": ["hbrep_airflow.hooks.zookeeper", "hbrep_airflow.hooks.replication"],
            }
        ],
        "operators": [
            {
                "integration-name": "hbrep",
                "python-modules": ["hbrep_airflow.operators.replication", "hbrep_airflow.operators.consistency"],
            }
        ],
        "sensors": [{"integration-name": "hbrep", "python-modules": ["hbrep_airflow.sensors.consistency"]}],
        "triggers": [
            {
                "integration-name": "hbrep",
                "python-modules": ["hbrep_airflow.triggers.consistency", "hbrep_airflow.triggers.zookeeper_events"],
            }
        ],
        "connection-types": [
            {"connection-type": "zookeeper", "hook-class-name": "hbrep_airflow.hooks.zookeeper.ZooKeeperHook"}
        ],
        "plugins": [{"name": "hbrep", "plugin-class": "hbrep_airflow.plugin.HbrepPlugin"}],
    }
