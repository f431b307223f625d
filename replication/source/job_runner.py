"""How the ship step runs its Spark job: any object with ``run_ship`` (implementations: jobs/launch.py).

The ship step (source/cycle.py) hands a runner the manifest file and where the result file goes; the
runner ships every queue of the manifest, writes the result file and returns it. In-process (a given
SparkSession) and spark-submit runners live in ``replication/jobs/launch.py``; a runner never changes
ZooKeeper: positions move only in the commit step.
"""

from __future__ import annotations

from typing import Protocol

from replication.config import Config
from replication.source.manifest import ShipResult


class ShipJobRunner(Protocol):
    """Runs the ship job of one manifest."""

    def run_ship(self, manifest_path: str, result_path: str, conf: Config) -> ShipResult:
        """Ship every queue of the manifest at ``manifest_path``; the result is written at
        ``result_path`` and returned. Raises when the job could not run (positions then stay put)."""
        ...
