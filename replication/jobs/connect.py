"""Running the ship job on a long-lived Spark Connect server (``hbrep.spark.mode = connect``).

The job is :func:`replication.jobs.ship_frame.run_ship_frame_job` (DataFrame API, one partition per
queue). What this module adds is the session:

- **One server-side session per package version.** Every client (each Airflow task is its own
  process) attaches to the same Spark Connect session, named by ``session_id`` = a UUID derived from
  ``hbrep.spark.connect.session`` and the digest of the ``replication`` package. The server keeps
  that session's Python workers, with the package already imported, between clients: a pass on a
  warm server starts no Python process. A new package version gets a new session, so a worker never
  runs code older than the client's. Clients close their channel, never the session.
- **The package as a Spark Connect artifact** (``addArtifacts(zip, pyfile=True)``) when
  ``hbrep.spark.connect.ship.package`` is true (the default): servers whose Python lacks hbrep get it,
  and a server that has it runs the client's exact code anyway.
- **Bounded retries.** A server that is gone fails the job within seconds (one clear error), instead
  of pyspark's default of retrying for ten minutes; no result means no position moves, and the next
  run resumes from the recorded positions.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from replication.config import Config
from replication.errors import ConfigError, HbrepError
from replication.jobs.connect_port import embedded_state_dir, read_port
from replication.jobs.ship_frame import run_ship_frame_job
from replication.jobs.submit import package_digest, package_zip
from replication.net import LOOPBACK
from replication.source.manifest import Manifest, ShipResult, is_uri, read_text, work_dir_for, write_text

LOG = logging.getLogger(__name__)


# pyspark's Connect client, as connect_session imports it
CLIENT_MODULES = ("pyspark.errors", "pyspark.sql.connect.client.retries", "pyspark.sql.connect.session")
_preload_lock = threading.Lock()
_preload: threading.Thread | None = None


def preload_client() -> bool:
    """True when pyspark's Connect client is already imported in this process (a task process forked by
    ``hbrep_airflow``'s PreloadingLocalExecutor inherits it); else start importing it in a daemon thread,
    once per process, and return False at once.

    In a cold process that import took 1.2-1.3 s of CPU, measured, and it came first in a window's first
    pass. Started when the task starts, it overlaps what comes before the first job (the connection lookup,
    ZooKeeper, the lease, the queue snapshot). ``connect_session``'s own import then waits for it on
    Python's per-module import lock, and raises any import error there: this thread changes no state.
    """
    global _preload
    if all(name in sys.modules for name in CLIENT_MODULES):
        return True
    with _preload_lock:
        if _preload is None:
            _preload = threading.Thread(target=_import_client, name="hbrep-preload-connect-client", daemon=True)
            _preload.start()
    return False


def import_client(modules: tuple[str, ...] = CLIENT_MODULES) -> dict[str, Exception]:
    """Import ``modules`` (default: the Connect client's) in this process; the ones that failed, with their
    errors (never raised: ``connect_session`` imports them again and raises there, in the caller)."""
    failed: dict[str, Exception] = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed[name] = exc
    return failed


def _import_client() -> None:
    for name, exc in import_client().items():
        LOG.debug("preloading %s failed (%s); connect_session will raise it", name, exc)


class SparkConnectUnavailable(HbrepError):
    """The Spark Connect server could not be reached, or failed the job (no position moved)."""


def connect_url(conf: Config) -> str:
    """The server's URL: ``hbrep.spark.connect.url``, else the embedded server's recorded port.

    ConfigError naming the key when neither is there (no server was ever started here).
    """
    url = conf.get_str("hbrep.spark.connect.url", "")
    if url:
        return url
    port = read_port(embedded_state_dir(conf))
    if port is None:
        raise ConfigError(
            "hbrep.spark.mode=connect needs hbrep.spark.connect.url, or a server started by 'hbrep spark start' "
            f"(no port file in {embedded_state_dir(conf)})"
        )
    return f"sc://{LOOPBACK}:{port}"


def session_id_for(name: str, digest: str, generation: int = 0) -> str:
    """The shared session's id: a UUID (version-4 form, as Spark Connect requires) of name + digest."""
    seed = hashlib.sha256(f"{name}\0{digest}\0{generation}".encode()).digest()
    return str(uuid.UUID(bytes=seed[:16], version=4))


def with_params(url: str, **params: str) -> str:
    """``url`` with ``;key=value`` parameters added (``sc://host:port/;a=b``), replacing equal keys."""
    base, _, tail = url.partition(";")
    kept = [p for p in tail.split(";") if p and p.split("=", 1)[0] not in params]
    if not base.endswith("/"):
        base += "/"
    return base + ";" + ";".join([*kept, *(f"{k}={v}" for k, v in params.items())])


def operation_tag(owner: str) -> str:
    """A Spark operation tag for a lease owner (tags may not contain commas; kept short and stable)."""
    return "hbrep-" + hashlib.sha256(owner.encode()).hexdigest()[:24]


@contextmanager
def connect_session(url: str, conf: Config, work_dir: str | os.PathLike[str], *, purpose: str = "") -> Iterator[Any]:
    """A Spark Connect session on the shared server-side session for this package (see module doc).

    ``purpose`` names a server-side session of its own beside the ship jobs' (``checks``: VerifyReplication
    and the GX checks). The channel is closed at the end; the server-side session stays for the next client.
    """
    from pyspark.errors import PySparkException  # pyspark's Connect client loads only when a job runs
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession

    digest = package_digest()
    name = conf.get_str("hbrep.spark.connect.session", "hbrep") + (f"-{purpose}" if purpose else "")
    retries = conf.get_int("hbrep.spark.connect.retries", 4)
    spark = None
    last_error: Exception | None = None
    for generation in range(3):
        session_url = with_params(url, session_id=session_id_for(name, digest, generation))
        spark = SparkSession.builder.remote(session_url).create()
        spark.client.set_retry_policies([DefaultPolicy(max_retries=retries, max_backoff=2000)])
        try:
            if conf.get_bool("hbrep.spark.connect.ship.package", True):
                add_package(spark, package_zip(Path(work_dir), digest))
            else:
                spark.version  # noqa: B018 - one round trip: is the server there?
            break
        except PySparkException as exc:
            spark.client.close()
            spark = None
            last_error = exc
            # A session that was released or expired on the server cannot be re-attached: next generation.
            if "SESSION_CLOSED" not in str(exc):
                break
        except Exception as exc:  # grpc errors while connecting
            spark.client.close()
            spark = None
            last_error = exc
            break
    if spark is None:
        raise SparkConnectUnavailable(f"Spark Connect server {url} unavailable: {_first_line(last_error)}")
    try:
        yield spark
    finally:
        spark.client.close()


def add_package(spark: Any, package: Path, attempts: int = 3) -> None:
    """Add the package zip to the session as a pyfile, also when other clients add it at the same moment.

    Spark Connect's ArtifactManager checks whether the target exists (an equal file there: nothing to do),
    then moves the upload in; two clients adding the same zip to a new session at once both pass the check,
    and the second move fails with FileAlreadyExistsException (two ship tasks of one run, one per peer, did).
    Added again, the zip meets the first one's equal file and is accepted; any other error is raised as is.
    """
    for attempt in range(1, attempts + 1):
        try:
            spark.addArtifacts(str(package), pyfile=True)
            return
        except Exception as exc:
            if "FileAlreadyExistsException" not in str(exc) or attempt == attempts:
                raise
            LOG.info("Another client added %s to the session at the same moment; adding it again", package.name)


class ConnectShipRunner:
    """Ships manifests on a Spark Connect server through one client session, kept for its lifetime.

    A ``ShipJobRunner`` for ``ship_step`` (the third beside jobs/launch.py's in-process and spark-submit
    runners): a ship window's passes share the session (no reconnect, no artifact upload per pass). The
    session is opened by the first ship and its channel closed when the ``with`` block ends (or at exit).
    ``work_dir`` holds the package zip (default, and for a work dir on HDFS: ``work_dir_for(conf)``).
    """

    def __init__(
        self,
        conf: Config,
        work_dir: str | os.PathLike[str] | None = None,
        url: str | None = None,
        owner: str | None = None,
    ) -> None:
        self.conf = conf
        # the package zip is uploaded from a local file: a work dir on HDFS keeps the manifests only
        local = work_dir is not None and not is_uri(work_dir)
        self.work_dir = Path(work_dir) if local else work_dir_for(conf)
        self.url = url or connect_url(conf)
        self.tag = operation_tag(owner) if owner else None
        self._stack = ExitStack()
        self._spark: Any = None

    def __enter__(self) -> ConnectShipRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self._spark = None
        self._stack.close()

    def session(self) -> Any:
        """The client session, connected on first use (a run with nothing to ship never connects).

        With an ``owner``, the runner first interrupts the server's operations tagged with it (jobs a
        killed task of the same run left running: their results would never be committed), then tags
        its own jobs the same way.
        """
        if self._spark is None:
            spark = self._stack.enter_context(connect_session(self.url, self.conf, self.work_dir))
            if self.tag:
                interrupted = spark.interruptTag(self.tag)
                if interrupted:
                    LOG.warning(
                        "Interrupted %d job(s) a previous attempt of %s left running", len(interrupted), self.tag
                    )
                spark.addTag(self.tag)
            self._spark = spark
        return self._spark

    def ship(self, manifest: Manifest) -> ShipResult:
        """Ship every queue of ``manifest``; SparkConnectUnavailable when the job fails as a whole."""
        spark = self.session()
        try:
            return run_ship_frame_job(spark, manifest)
        except HbrepError:
            raise
        except Exception as exc:
            raise SparkConnectUnavailable(
                f"ship job of cycle {manifest.cycle_id} failed on Spark Connect server {self.url}: {_first_line(exc)}"
            ) from None

    def run_ship(self, manifest_path: str, result_path: str, conf: Config | None = None) -> ShipResult:
        """Ship the manifest at ``manifest_path``, write its result at ``result_path`` and return it
        (source/job_runner.ShipJobRunner; the session's configuration is the runner's own)."""
        result = self.ship(Manifest.from_json(read_text(manifest_path)))
        write_text(result_path, result.to_json())
        return result


def run_ship_on_connect(manifest: Manifest, conf: Config, *, work_dir: str | os.PathLike[str]) -> ShipResult:
    """Ship ``manifest`` on the Connect server of ``conf`` in a session of its own (see ConnectShipRunner).

    Queue-level failures are in the result as with every engine; a job that fails as a whole (server
    lost, worker killed) raises SparkConnectUnavailable, and no result file is written by the caller.
    """
    with ConnectShipRunner(conf, work_dir) as runner:
        return runner.ship(manifest)


def _first_line(exc: BaseException | None) -> str:
    text = str(exc or "unknown error").strip()
    return text.splitlines()[0] if text else type(exc).__name__
