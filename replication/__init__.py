"""hbrep: HBase-style cluster replication run as batch (Airflow + PySpark + ZooKeeper).

`replication` is the library. It never imports Airflow; the Airflow plugin and DAGs live in
`plugins/` and `dags/` and call into it.
"""

__version__ = "0.1.0"
