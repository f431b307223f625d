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

import logging
import multiprocessing

from airflow.executors.local_executor import LocalExecutor

LOG = logging.getLogger(__name__)


def preimport(modules: tuple[str, ...]) -> list[str]:
    """Import ``modules`` in this process (``replication.jobs.connect.import_client``); the ones that failed,
    each logged in one warning, never raised: a task importing one of them again raises it where it is needed."""
    from replication.jobs.connect import import_client

    failed = import_client(modules)
    for name, exc in failed.items():
        LOG.warning("hbrep: could not pre-import %s for task processes: %s", name, exc)
    return list(failed)


class PreloadingLocalExecutor(LocalExecutor):
    """LocalExecutor that imports the Spark Connect client before it forks its workers (see module doc)."""

    def start(self) -> None:
        """Pre-import the client modules (fork start method only), then start as the LocalExecutor does; the
        supervisor's signalled-retry fix (:mod:`hbrep_airflow.compat.signalled_retry`) is installed first."""
        from hbrep_airflow.compat.signalled_retry import install

        install()
        if multiprocessing.get_start_method() == "fork":
            from replication.jobs.connect import CLIENT_MODULES

            preimport(CLIENT_MODULES)
        super().start()
