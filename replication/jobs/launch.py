"""Launching the ship job: its script, the ``--py-files`` archive, and the runners ``ship_step`` takes.

- :class:`InProcessRunner` runs the job in a given SparkSession (tests, ``hbrep ship --once --in-process``);
- :class:`SparkSubmitRunner` runs ``spark-submit replication/jobs/ship.py`` on ``hbrep.spark.master``;
- :class:`replication.jobs.connect.ConnectShipRunner` runs it on a Spark Connect server (``hbrep.spark.mode``
  ``connect``);
- :func:`runner_for` picks one; :func:`pyfiles_for` builds the archive a separate ``spark-submit`` (the
  Airflow ship task) passes as ``--py-files``. All three follow ``source/job_runner.ShipJobRunner``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from replication.config import Config
from replication.jobs.connect import ConnectShipRunner
from replication.jobs.ship import run_ship_job
from replication.jobs.submit import build_pyfiles, package_zip, spark_submit
from replication.kerberos import kerberos_identity, spark_login_conf
from replication.source.job_runner import ShipJobRunner
from replication.source.manifest import Manifest, ShipResult, is_uri, read_text, write_text

SHIP_SCRIPT = Path(__file__).resolve().with_name("ship.py")


def pyfiles_for(manifest_path: str) -> Path:
    """The ``replication`` package zipped beside the manifest, for ``spark-submit --py-files``; for a
    manifest on HDFS, in this machine's temp dir (spark-submit reads --py-files from a local path), once per
    code version (``package_zip``): every worker host builds its own, none reads another's."""
    if is_uri(manifest_path):
        return package_zip(Path(tempfile.gettempdir()) / "hbrep-pyfiles")
    return build_pyfiles(Path(manifest_path).parent)


class InProcessRunner:
    """Runs the ship job in ``spark`` (a SparkSession of this process)."""

    def __init__(self, spark: Any):
        self.spark = spark

    def run_ship(self, manifest_path: str, result_path: str, conf: Config) -> ShipResult:
        """Ship the manifest's queues in the session; write and return the result."""
        result = run_ship_job(self.spark, Manifest.from_json(read_text(manifest_path)))
        write_text(result_path, result.to_json())
        return result


class SparkSubmitRunner:
    """Runs ``spark-submit replication/jobs/ship.py`` on ``hbrep.spark.master``; the job writes the result."""

    def run_ship(self, manifest_path: str, result_path: str, conf: Config) -> ShipResult:
        """Submit the job and wait for it; SparkJobFailed (with the output tail) when it fails."""
        manifest = Manifest.from_json(read_text(manifest_path))
        spark_submit(
            SHIP_SCRIPT,
            ["--manifest", manifest_path, "--result", result_path],
            master=conf.get_str("hbrep.spark.master"),
            work_dir=Path(manifest_path).parent if not is_uri(manifest_path) else Path(tempfile.gettempdir()),
            name=f"hbrep-ship-{manifest.cycle_id}",
            conf=spark_login_conf(kerberos_identity(conf)),  # Spark's JVMs as hbrep's principal, when Kerberized
        )
        return ShipResult.from_json(read_text(result_path))


def runner_for(conf: Config, spark: Any = None) -> ShipJobRunner:
    """In ``spark`` when a session is given; else by ``hbrep.spark.mode``: the Spark Connect server
    (``connect``, jobs/connect.ConnectShipRunner) or spark-submit (``submit``)."""
    if spark is not None:
        return InProcessRunner(spark)
    if conf.get_str("hbrep.spark.mode") == "connect":
        return ConnectShipRunner(conf)
    return SparkSubmitRunner()
