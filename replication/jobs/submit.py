"""Running a job through ``spark-submit``: the package zipped for ``--py-files``, the master from config."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from replication.errors import HbrepError

PACKAGE_DIR = Path(__file__).resolve().parent.parent


class SparkJobFailed(HbrepError):
    """spark-submit exited non-zero (the message has the tail of its output)."""


def build_pyfiles(dest_dir: str | os.PathLike[str]) -> Path:
    """Zip the ``replication`` package (Python and .proto files) for ``--py-files``; returns the zip."""
    dest = Path(dest_dir) / "hbrep-replication.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE_DIR.rglob("*")):
            if path.suffix in (".py", ".proto", ".pyi") and "__pycache__" not in path.parts:
                archive.write(path, Path("replication") / path.relative_to(PACKAGE_DIR))
    tmp.replace(dest)
    return dest


def spark_submit(
    script: str | os.PathLike[str],
    args: list[str],
    *,
    master: str,
    work_dir: str | os.PathLike[str],
    conf: dict[str, str] | None = None,
    timeout_s: float | None = None,
    name: str = "hbrep",
) -> subprocess.CompletedProcess[str]:
    """Run ``spark-submit`` for ``script``; SparkJobFailed (with the output tail) when it fails."""
    spark_submit_bin = Path(sys.executable).parent / "spark-submit"
    command = [
        str(spark_submit_bin) if spark_submit_bin.exists() else "spark-submit",
        "--master",
        master,
        "--name",
        name,
        "--py-files",
        str(build_pyfiles(work_dir)),
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
    ]
    for key, value in (conf or {}).items():
        command += ["--conf", f"{key}={value}"]
    command += [str(script), *args]
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise SparkJobFailed(f"spark-submit {Path(script).name} did not finish within {timeout_s:.0f}s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
        raise SparkJobFailed(f"spark-submit {Path(script).name} exited with {done.returncode}:\n{tail}")
    return done
