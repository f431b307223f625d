"""replication.spark_daemon: Spark's Python workers re-read a zip archive only when it changed."""

from __future__ import annotations

import importlib
import sys
import zipfile
import zipimport

import pytest

from replication import spark_daemon

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12's zip importer is lazy already")


def _zip(path, **modules: str) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, source in modules.items():
            archive.writestr(f"{name}.py", source)


def test_an_archive_is_read_again_only_when_it_changed(tmp_path, monkeypatch):
    archive = tmp_path / "lib.zip"
    _zip(archive, first="X = 1\n")
    reads = []
    monkeypatch.setattr(spark_daemon, "_read_again", lambda importer: reads.append(importer.archive))
    monkeypatch.setattr(spark_daemon, "_archive_versions", {})
    one, two = zipimport.zipimporter(str(archive)), zipimport.zipimporter(f"{archive}/pkg")
    spark_daemon.invalidate_if_changed(one)
    spark_daemon.invalidate_if_changed(two)  # another importer of the same, unchanged archive
    spark_daemon.invalidate_if_changed(one)
    assert reads == [str(archive)]
    _zip(archive, first="X = 1\n", second="Y = 2\n")  # rewritten: another size
    spark_daemon.invalidate_if_changed(two)
    assert reads == [str(archive), str(archive)]


def test_a_changed_archive_is_seen_by_the_importer(tmp_path, monkeypatch):
    archive = tmp_path / "lib.zip"
    _zip(archive, first="X = 1\n")
    monkeypatch.setattr(spark_daemon, "_archive_versions", {})
    importer = zipimport.zipimporter(str(archive))
    spark_daemon.invalidate_if_changed(importer)
    assert importer.find_spec("second") is None
    _zip(archive, first="X = 1\n", second="Y = 2\n")
    spark_daemon.invalidate_if_changed(importer)
    assert importer.find_spec("second") is not None


@pytest.mark.slow
def test_the_sessions_python_workers_run_hbreps_daemon(spark):
    """The session hbrep builds starts its Python workers through replication.spark_daemon: they hold zip
    importers (pyspark.zip is first on their path) and those no longer re-read their archive per task."""
    assert spark.sparkContext.getConf().get("spark.python.daemon.module") == spark_daemon.DAEMON_MODULE

    def _worker_view(_rows):  # nested, so Spark pickles it by value (the workers cannot import tests/)
        import sys as worker_sys
        import zipimport as worker_zipimport

        yield (
            worker_zipimport.zipimporter.invalidate_caches.__name__,
            any(isinstance(i, worker_zipimport.zipimporter) for i in worker_sys.path_importer_cache.values()),
        )

    views = spark.sparkContext.parallelize([0, 1], 2).mapPartitions(_worker_view).collect()
    assert views == [("invalidate_if_changed", True)] * 2
    importlib.invalidate_caches()  # this process is untouched: the daemon patches only Spark's workers
    assert zipimport.zipimporter.invalidate_caches.__name__ == "invalidate_caches"


def test_the_connect_server_runs_the_daemon_only_with_a_python_that_has_hbrep(tmp_path):
    from replication.devstack.spark_connect import SparkConnectServer

    ours = SparkConnectServer(tmp_path, 15002).spark_conf()
    assert ours["spark.python.daemon.module"] == spark_daemon.DAEMON_MODULE
    other = SparkConnectServer(tmp_path, 15002, python="/usr/bin/python3").spark_conf()
    assert "spark.python.daemon.module" not in other  # Spark's own daemon: that Python may lack hbrep
    chosen = SparkConnectServer(tmp_path, 15002, extra_conf={"spark.python.daemon.module": "pyspark.daemon"})
    assert chosen.spark_conf()["spark.python.daemon.module"] == "pyspark.daemon"


@pytest.mark.slow
def test_the_sessions_python_workers_keep_the_memory_they_freed(spark):
    """The daemon sets keep_freed_memory before it forks: a worker that builds and frees 32 MB of request
    bytes again and again faults the pages in once, not every time (glibc's default gives them back)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("mallopt is glibc's")

    def _faults_per_round(_rows):  # nested, so Spark pickles it by value
        import resource

        faults = []
        for _ in range(4):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            blocks = [b"x" * (4 << 20) for _ in range(8)]
            del blocks
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        yield faults

    rounds = spark.sparkContext.parallelize([0], 1).mapPartitions(_faults_per_round).collect()[0]
    pages = 8 * (4 << 20) // 4096
    assert max(rounds[1:]) < pages // 20, rounds
