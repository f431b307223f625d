"""Running a job through ``spark-submit``: the package zipped for ``--py-files``, the master from config."""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import re
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

from replication.errors import HbrepError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
# PEP 552 flags word: hash-based (bit 0), source not checked (bit 1 clear)
_UNCHECKED_HASH_FLAGS = (0b01).to_bytes(4, "little")
_MARSHAL_FORMAT = 2  # no back-references: the same bytes whatever the writing process holds (see _bytecode)


class SparkJobFailed(HbrepError):
    """spark-submit exited non-zero (the message has the tail of its output)."""


def build_pyfiles(dest_dir: str | os.PathLike[str]) -> Path:
    """Zip the ``replication`` package (Python and .proto files) for ``--py-files``; returns the zip.

    Each module's bytecode for this Python goes beside its source (``x.pyc`` next to ``x.py``, the layout
    zipimport reads), so a Spark Python worker importing from the zip does not compile the package again:
    zipimport cannot cache what it compiles. The bytecode is unchecked-hash (PEP 552): the zip is built
    from one tree at once, so source and bytecode cannot disagree. A worker whose Python has another
    bytecode version ignores the .pyc files and compiles the sources, as before.
    """
    dest = Path(dest_dir) / "hbrep-replication.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE_DIR.rglob("*")):
            if path.suffix in (".py", ".proto", ".pyi") and "__pycache__" not in path.parts:
                name = Path("replication") / path.relative_to(PACKAGE_DIR)
                archive.write(path, name)
                if path.suffix == ".py":
                    # dated as its source, not now: equal trees give equal zips (Spark Connect refuses a
                    # second artifact of the same name with other bytes)
                    entry = zipfile.ZipInfo(str(name.with_suffix(".pyc")), archive.getinfo(str(name)).date_time)
                    entry.compress_type = zipfile.ZIP_DEFLATED
                    archive.writestr(entry, _bytecode(path.read_bytes(), str(name)))
    tmp.replace(dest)
    return dest


def package_digest() -> str:
    """A digest of the ``replication`` package's sources (names and bytes): its version for sessions and zips."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if path.suffix in (".py", ".proto", ".pyi") and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(PACKAGE_DIR)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def package_zip(folder: Path, digest: str | None = None) -> Path:
    """The package zip in ``folder``, named by the package's digest (an equal name means equal bytes): built
    once per code version and folder (:func:`build_pyfiles` in a folder of this process and thread, then
    renamed, so processes or threads building at once do not meet), reused after."""
    digest = digest or package_digest()
    # the bytecode inside is this Python's: a client on another Python version names another zip
    target = Path(folder) / f"hbrep-replication-{digest[:16]}-{importlib.util.MAGIC_NUMBER.hex()}.zip"
    if not target.exists():
        built = build_pyfiles(Path(folder) / f".build-{os.getpid()}-{threading.get_ident()}")
        built.replace(target)
        built.parent.rmdir()
    return target


def _bytecode(source: bytes, name: str) -> bytes:
    """The .pyc bytes of ``source`` (unchecked-hash), as py_compile writes them; tracebacks show ``name``.

    Marshal format 2, not the default 3: format 3 marks objects referenced more than once, which depends on
    the refcounts of the process that writes it (interned names), so two processes wrote different bytes
    for one tree, and Spark Connect refused the second zip of the same name (ARTIFACT_ALREADY_EXISTS).
    """
    code = compile(source, name, "exec", dont_inherit=True)
    return (
        importlib.util.MAGIC_NUMBER
        + _UNCHECKED_HASH_FLAGS
        + importlib.util.source_hash(source)
        + marshal.dumps(code, _MARSHAL_FORMAT)
    )


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
        output = done.stdout + done.stderr
        log = Path(tempfile.gettempdir()) / f"hbrep-spark-submit-{name}-{os.getpid()}.log"
        with os.fdopen(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:  # owner-only
            out.write(output)
        raise SparkJobFailed(
            f"spark-submit {Path(script).name} exited with {done.returncode}: {failure_cause(output)} "
            f"(its output: {log})"
        )
    return done


_EXCEPTION_LINE = re.compile(r"^:?\s*(?:Caused by: )?[\w.$]+(?:Exception|Error)\b(?::.*)?$")


def failure_cause(output: str) -> str:
    """The one line of a failed Spark application's output that says why: the last exception of its Python
    traceback (with the Java exception a ``Py4JJavaError`` wraps, on the line after it), else the last
    exception line of the output, else its last line."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")), default=-1)
    if start >= 0:
        for i in range(start + 1, len(lines)):
            if not lines[i][0].isspace() and _EXCEPTION_LINE.match(lines[i]):
                cause = lines[i]
                if "Py4JJavaError" in cause and i + 1 < len(lines) and lines[i + 1].startswith(": "):
                    cause = lines[i + 1][2:]
                return cause
    found = [line.strip() for line in lines if _EXCEPTION_LINE.match(line.strip()) and not line.startswith("\t")]
    if found:
        return found[-1]
    return lines[-1].strip() if lines else "no output"
