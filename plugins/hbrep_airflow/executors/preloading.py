"""PreloadingLocalExecutor: Airflow's LocalExecutor whose task processes start with the Spark Connect client
already imported.

Airflow 3's LocalExecutor forks its worker processes from the scheduler when it starts, and each worker
forks one process per task. A ship task in ``connect`` mode imports pyspark's Connect client (pyspark,
pandas, pyarrow, grpc), which took 1.2-1.3 s of CPU in a cold process, measured, at the start of every
window, on the same cores the pass ships with. Imported once here, before the workers are forked, every
task process inherits the modules (copy-on-write) and the import costs it nothing. Only modules are
imported: no channel, session or thread of the client exists before the fork (gRPC is fork-safe then).

The same idea as Airflow's own ``[dag_processor] parsing_pre_import_modules``, for task processes. Use it
with ``AIRFLOW__CORE__EXECUTOR=hbrep_airflow.executors.preloading.PreloadingLocalExecutor``; with
multiprocessing's spawn start method it is the LocalExecutor unchanged (nothing is inherited).
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing

from airflow.executors.local_executor import LocalExecutor

LOG = logging.getLogger(__name__)


def preimport(modules: tuple[str, ...]) -> list[str]:
    """Import ``modules`` in this process; the ones that failed (logged, never raised: a task importing one
    of them again raises the error where it is needed)."""
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # the task's own import raises it, in the task's log
            LOG.warning("hbrep: could not pre-import %s for task processes: %s", name, exc)
            failed.append(name)
    return failed


class PreloadingLocalExecutor(LocalExecutor):
    """LocalExecutor that imports the Spark Connect client before it forks its workers (see module doc)."""

    def start(self) -> None:
        """Pre-import the client modules (fork start method only), then start as the LocalExecutor does."""
        if multiprocessing.get_start_method() == "fork":
            from replication.jobs.connect import CLIENT_MODULES

            preimport(CLIENT_MODULES)
        super().start()
