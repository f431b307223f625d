"""The package zip that Spark workers import from (--py-files, or a Spark Connect artifact)."""

import subprocess
import sys
import zipfile

from replication.jobs.submit import build_pyfiles


def test_workers_import_the_zips_bytecode_not_its_sources(tmp_path):
    zip_path = build_pyfiles(tmp_path)
    probe = (
        f"import sys; sys.path.insert(0, {str(zip_path)!r})\n"
        "import replication.source.replication_source as m\n"
        "print(m.__file__)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == f"{zip_path}/replication/source/replication_source.pyc"


def test_equal_trees_give_equal_zips(tmp_path):
    """Every entry is dated as its source file (a .pyc written 'now' made each build differ, and Spark
    Connect refuses a second artifact of one name with other bytes)."""
    with zipfile.ZipFile(build_pyfiles(tmp_path)) as archive:
        dates = {info.filename: info.date_time for info in archive.infolist()}
    compiled = [name for name in dates if name.endswith(".pyc")]
    assert compiled and all(dates[name] == dates[name[:-1]] for name in compiled)


def test_processes_holding_other_modules_write_the_same_zip(tmp_path):
    """Marshal's default format depends on the writing process's refcounts; the zip must not (an Airflow task
    and a test process sharing one Connect session name the same artifact)."""
    build = (
        "import hashlib, sys, tempfile\n"
        "from replication.jobs.submit import build_pyfiles\n"
        "print(hashlib.sha256(build_pyfiles(tempfile.mkdtemp(dir=sys.argv[1])).read_bytes()).hexdigest())\n"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", preload + build, str(tmp_path)], capture_output=True, text=True, check=True
        ).stdout
        for preload in ("", "import pyspark.sql.connect.session, grpc, kazoo.client\n")
    }
    assert len(digests) == 1, digests
