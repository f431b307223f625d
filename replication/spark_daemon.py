"""Spark's Python worker daemon (``pyspark.daemon``) with a zip importer that re-reads an archive only when
it changed. Sessions and the Connect server that hbrep starts run their Python workers through it
(``spark.python.daemon.module``, :data:`DAEMON_CONF`).

Why: every task a Python worker runs starts with ``importlib.invalidate_caches()`` (pyspark's
``worker_util.setup_spark_files``, because a task may bring new files). On Python 3.11 that makes every
``zipimporter`` in ``sys.path_importer_cache`` read its archive's whole central directory again, in
Python, and a worker holds one importer per package folder it imported from ``pyspark.zip`` (Spark puts
pyspark.zip, py4j's zip and spark-core's jar first on the workers' PYTHONPATH): measured here, 80-95 ms
of CPU at the start of every task, in a pass that ships one queue per task. The archives do not change
while a worker lives, so reading one again only when its size or mtime changed keeps what the call is
for (Python 3.12 made the same call lazy, so nothing is changed there).
"""

from __future__ import annotations

import os
import sys
import zipimport

DAEMON_MODULE = "replication.spark_daemon"
DAEMON_CONF = {"spark.python.daemon.module": DAEMON_MODULE}

_read_again = zipimport.zipimporter.invalidate_caches
_archive_versions: dict[str, tuple[int, int]] = {}


def _archive_version(archive: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(archive)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def invalidate_if_changed(importer: zipimport.zipimporter) -> None:
    """``zipimporter.invalidate_caches`` that reads the archive's directory again only when the archive
    changed (size or mtime) since it was last read through any importer of this process."""
    version = _archive_version(importer.archive)
    if version is not None and _archive_versions.get(importer.archive) == version:
        return
    _read_again(importer)
    if version is not None:
        _archive_versions[importer.archive] = version


def install() -> bool:
    """Use :func:`invalidate_if_changed` for every zip importer of this process (Python < 3.12 only;
    True when installed)."""
    if sys.version_info >= (3, 12):
        return False
    zipimport.zipimporter.invalidate_caches = invalidate_if_changed  # type: ignore[method-assign]
    return True


if __name__ == "__main__":
    install()
    from replication.process_memory import keep_freed_memory

    keep_freed_memory()  # the workers it forks build the ship requests (process_memory.py)
    # Forget hbrep's own modules before the daemon forks its workers: a worker imports them from the task's
    # files (a Spark Connect artifact, --py-files) when it has them, as under pyspark.daemon, not from where
    # this daemon was found.
    for name in [name for name in sys.modules if name == "replication" or name.startswith("replication.")]:
        del sys.modules[name]
    from pyspark import daemon

    daemon.manager()
