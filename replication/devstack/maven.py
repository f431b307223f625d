"""The classpath of real HBase and Hadoop, resolved once from Maven Central by interop/hbase/pom.xml.

The first call runs ``mvn dependency:build-classpath`` (which downloads the pinned jars into the
Maven cache, ~/.m2) and keeps the result in ``interop/hbase/target/classpath.txt``; later calls read
that file, and resolve again only when the pom is newer than it.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from replication.errors import HbrepError

INTEROP_POM = Path(__file__).resolve().parents[2] / "interop" / "hbase" / "pom.xml"


class MavenError(HbrepError):
    """Maven is missing, or the pinned HBase/Hadoop artifacts could not be resolved."""


@contextlib.contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (an OS advisory lock, released when the holder dies)."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def interop_classpath(pom: Path = INTEROP_POM, *, timeout: float = 1800.0) -> str:
    """The runtime classpath (``a.jar:b.jar:...``) of the pinned HBase and Hadoop, every jar present.

    Resolves through Maven on first use (printing how long it took to stderr) and raises MavenError
    with Maven's last lines when it cannot.
    """
    out = pom.parent / "target" / "classpath.txt"
    resolved = _resolved_classpath(pom, out)
    if resolved is not None:
        return resolved
    with _exclusive(pom.parent / "target" / ".resolve.lock"):  # one process resolves; the others wait, then read
        resolved = _resolved_classpath(pom, out)
        return resolved if resolved is not None else _resolve(pom, out, timeout)


def _resolved_classpath(pom: Path, out: Path) -> str | None:
    """The classpath resolved earlier into ``out`` when it is newer than the pom and every jar is there."""
    if out.exists() and out.stat().st_mtime >= pom.stat().st_mtime:
        classpath = out.read_text().strip()
        if classpath and all(Path(jar).exists() for jar in classpath.split(":")):
            return classpath
    return None


def _resolve(pom: Path, out: Path, timeout: float) -> str:
    """Run Maven's dependency:build-classpath into ``out`` and return the classpath."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenError("mvn not found on PATH (Maven resolves the real HBase and Hadoop jars)")
    started = time.monotonic()
    command = [mvn, "-B", "-q", "-f", str(pom), "dependency:build-classpath", f"-Dmdep.outputFile={out}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise MavenError(f"Maven did not resolve {pom} within {timeout:.0f}s") from None
    if done.returncode != 0 or not out.exists():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-10:])
        raise MavenError(f"Maven could not resolve {pom} (exit {done.returncode}):\n{tail}")
    print(f"hbrep: resolved the HBase/Hadoop classpath from Maven in {time.monotonic() - started:.1f}s",
          file=sys.stderr)  # fmt: skip
    return out.read_text().strip()


INTEROP_SOURCES = INTEROP_POM.parent / "src" / "main" / "java"


def compile_interop_tools(
    classpath: str, sources: Path = INTEROP_SOURCES, classes: Path | None = None, *, timeout: float = 600.0
) -> Path:
    """Compile hbrep's small Java tools (interop/hbase/src/main/java) against ``classpath``; return the
    classes folder. Recompiles only when a source is newer than the last build; MavenError (with
    javac's first lines) when javac is missing or the sources do not compile."""
    classes = classes if classes is not None else sources.parents[2] / "target" / "classes"
    stamp = classes / ".compiled"
    java_files = sorted(sources.rglob("*.java"))
    if not java_files:
        raise MavenError(f"no Java sources under {sources}")
    newest = max(path.stat().st_mtime for path in java_files)
    if stamp.exists() and stamp.stat().st_mtime >= newest:
        return classes
    javac = shutil.which("javac")
    if javac is None:
        raise MavenError("javac not found on PATH (hbrep's HBase tools are compiled with Java 17)")
    shutil.rmtree(classes, ignore_errors=True)
    classes.mkdir(parents=True)
    command = [javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", classpath, *map(str, java_files)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise MavenError(f"javac did not compile {sources} within {timeout:.0f}s") from None
    if done.returncode != 0:
        head = "\n".join((done.stdout + done.stderr).strip().splitlines()[:10])
        raise MavenError(f"javac could not compile {sources} (exit {done.returncode}):\n{head}")
    stamp.touch()
    return classes


def interop_tools_classpath(pom: Path = INTEROP_POM) -> str:
    """The pinned HBase/Hadoop classpath with hbrep's compiled Java tools (io.hbrep.interop.*) first.

    Processes that ask at once (two test workers, two ``hbrep hbase start``) resolve and compile one at a
    time: the second waits, then finds the classpath file and the classes already there."""
    classpath = interop_classpath(pom)
    with _exclusive(pom.parent / "target" / ".compile.lock"):
        target = pom.parent / "target"
        classes = compile_interop_tools(classpath, pom.parent / "src" / "main" / "java", target / "classes")
    return f"{classes}:{classpath}"
