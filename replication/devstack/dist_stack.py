"""The distributed stack's shared services and workers (``make up DIST=1``, tests/devstack/test_dist_stack.py).

What separate hosts would share, each a real server on 127.0.0.1 under ``<state>/``::

    hdfs/           a NameNode and a DataNode (devstack/hdfs.py): the source cluster's root (its WALs) and
                    hbrep's work dir (manifests, results: ``<root>/.hbrep/airflow-cycles``) live there
    redis/          the Celery broker (devstack/redis.py)
    spark/          a Spark standalone Master and two Workers (devstack/spark_cluster.py)
    spark-connect/  the Spark Connect server, attached to that master (``--master spark://...``)
    celery/         two Celery workers, each with its own HOME, temp dir and working dir (devstack/celery_workers.py)

:func:`airflow_extra` is what the Airflow processes add on this stack: the CeleryExecutor on the broker,
``spark_default`` on the standalone master (spark-submit mode), ``hbrep.spark.master`` likewise.
The ship DAG runs on the Connect server (``hbrep.spark.mode=connect``) unless spark-submit mode is asked for.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from replication.devstack.celery_workers import CeleryWorker, celery_environment
from replication.devstack.hdfs import HdfsCluster
from replication.devstack.redis import RedisServer
from replication.devstack.spark_cluster import SparkCluster
from replication.devstack.spark_connect import SparkConnectServer
from replication.net import free_port

WORKERS = 2
SOURCE_ROOT_ON_HDFS = "/hbase-a"
# Spark executors of the Connect server: one core and 512 MB each, one per Worker, two cores in all. Each Worker
# offers two cores (slots, not the machine's cores) and 2 GB, so a spark-submit job (spark-submit mode, the
# default executor memory of 1 GB) gets the other core of each Worker while the Connect server holds its own;
# with one core per Worker the Connect server held them all and a submitted job never got an executor.
WORKER_CORES, WORKER_MEMORY_MB = 2, 2048
EXECUTOR_CONF = {"spark.executor.memory": "512m", "spark.executor.cores": "1", "spark.cores.max": str(WORKERS)}


@dataclass
class DistServices:
    """The shared servers and the Celery workers of one state folder (see module doc)."""

    state: Path
    connect_port: int | None = None
    hdfs: HdfsCluster = field(init=False)
    redis: RedisServer = field(init=False)
    spark: SparkCluster = field(init=False)
    connect: SparkConnectServer = field(init=False)
    workers: list[CeleryWorker] = field(init=False)

    def __post_init__(self) -> None:
        self.state = Path(self.state).resolve()
        self.hdfs = HdfsCluster(self.state / "hdfs")
        self.redis = RedisServer(self.state / "redis")
        self.spark = SparkCluster(self.state / "spark", WORKERS, cores=WORKER_CORES, memory_mb=WORKER_MEMORY_MB)
        port = self.connect_port or _recorded_port(self.state / "spark-connect") or free_port()
        self.connect = SparkConnectServer(self.state / "spark-connect", port, driver_memory_mb=768,
                                          master=self.spark.master_url, extra_conf=EXECUTOR_CONF)  # fmt: skip
        self.workers = [CeleryWorker(self.state / "celery", i) for i in range(1, WORKERS + 1)]

    def source_root(self) -> str:
        """The source cluster's root on HDFS (``webhdfs://127.0.0.1:<http>/hbase-a``): WALs and work dir."""
        return self.hdfs.webhdfs_root(SOURCE_ROOT_ON_HDFS)

    def start_shared(self) -> None:
        """Start HDFS, the broker, the Spark master and workers, then the Connect server on that master."""
        self.hdfs.start()
        self.redis.start()
        self.spark.start()
        self.connect.start(timeout=300)

    def airflow_extra(self) -> dict[str, str]:
        """What every Airflow process of this stack adds to its environment (see module doc)."""
        return {
            **celery_environment(self.redis.url),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": self.spark.master_url}),
            "HBREP__hbrep__spark__master": self.spark.master_url,
        }

    def start_workers(self, shared_env: Mapping[str, str], timeout: float = 240.0) -> None:
        """Start both Celery workers with the stack's Airflow environment and wait until they are ready."""
        for worker in self.workers:
            worker.start(shared_env)
        for worker in self.workers:
            worker.wait_ready(timeout)

    def stop(self) -> None:
        """Stop the workers, then the Connect server, the Spark cluster, the broker and HDFS."""
        for worker in self.workers:
            with contextlib.suppress(Exception):
                worker.stop()
        self.connect.stop()
        self.spark.stop()
        self.redis.stop()
        self.hdfs.stop()


def _recorded_port(state: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int((state / "spark-connect.port").read_text())
    return None
