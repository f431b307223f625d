"""Hadoop delegation tokens for a Spark application on a standalone master, from Spark's own token manager.

On YARN and Kubernetes Spark logs in from ``spark.kerberos.principal``/``spark.kerberos.keytab`` and hands its
executors Hadoop delegation tokens. On a standalone master (``spark://``) it does neither: its scheduler backend
has no token manager (``StandaloneSchedulerBackend`` keeps ``CoarseGrainedSchedulerBackend.createTokenManager``,
which returns None), so an executor's Hadoop client has no credentials for a Kerberized HDFS. The driver of an
hbrep job starts that manager itself (:func:`start_delegation_tokens`), through py4j:

- ``HadoopDelegationTokenManager(conf, hadoopConf, driverEndpoint).start()`` logs in from the keytab, gets a
  delegation token from every file system of ``fs.defaultFS`` and ``spark.kerberos.access.hadoopFileSystems``
  (here: the job's roots added), schedules their renewal (each renewal is sent to the driver endpoint, which
  sends the new tokens to the executors) and returns the serialized tokens;
- ``CoarseGrainedSchedulerBackend.updateDelegationTokens(tokens)`` sends them to the registered executors and
  keeps them for the ones that register later; an executor adds them to its Hadoop user
  (``SparkHadoopUtil.addDelegationTokens``), whose reads then authenticate with the token (``auth:TOKEN``).

The token's renewer is the job's own principal (``yarn.resourcemanager.principal`` in the manager's copy of the
Hadoop configuration, when unset: there is no YARN to renew them), so the manager can renew what it got.

:func:`application_tokens` keeps one manager per application for sessions that outlive a ``with`` block
(``replication.spark.spark_session``'s): started once, stopped at process exit.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from replication.errors import HbrepError

STANDALONE_SCHEME = "spark://"
FILESYSTEMS_KEY = "spark.kerberos.access.hadoopFileSystems"
RENEWER_KEY = "yarn.resourcemanager.principal"  # Hadoop's Master.getMasterPrincipal: the renewer Spark names
LATE_EXECUTOR_WINDOW_S = 120.0  # how long the tokens are sent again to executors that register late


class DelegationTokenError(HbrepError):
    """The driver got no Hadoop delegation token to give its executors (Spark's log says why)."""


class DelegationTokens:
    """Spark's token manager of one running application: its renewals go on until :meth:`stop`."""

    def __init__(self, manager: Any, tokens: bytes, filesystems: tuple[str, ...] = ()):
        self._manager = manager
        self.tokens = tokens  # the serialized Credentials handed to the executors (Hadoop's token storage format)
        self.filesystems = filesystems  # the file systems asked for besides fs.defaultFS
        self._stopped = threading.Event()

    def stop(self) -> None:
        """Stop the renewals (the tokens given stay valid until they expire)."""
        self._stopped.set()
        self._manager.stop()

    def resend_to_late_executors(self, context: Any, backend: Any, window_s: float = LATE_EXECUTOR_WINDOW_S) -> None:
        """For ``window_s`` (or until :meth:`stop`), send the tokens again whenever an executor has registered since
        the last look (every half second), in a daemon thread.

        An executor takes the tokens the driver holds when it fetches the application's settings and gets later
        ones only once it has registered; one launched with the application fetches them before the driver has
        any and may register after they were sent (the backend does not send them on registration). The window
        covers the executors launched with the application, long before the first renewal (at 75% of a token's
        renewal interval, hours), whose newer tokens these would replace."""

        def watch() -> None:
            seen = ""
            deadline = time.monotonic() + window_s
            while not self._stopped.wait(0.5) and time.monotonic() < deadline:
                try:
                    executors = context.getExecutorIds().mkString(",")
                    if executors != seen:
                        backend.updateDelegationTokens(self.tokens)
                        seen = executors
                except Exception:  # the application (or its JVM) has stopped
                    return

        threading.Thread(target=watch, name="hbrep-delegation-tokens", daemon=True).start()


def needs_delegation_tokens(spark: Any) -> bool:
    """True for an application on a standalone master whose Spark settings name a principal and its keytab."""
    conf = spark.sparkContext.getConf()
    return (
        (conf.get("spark.master") or "").startswith(STANDALONE_SCHEME)
        and bool(conf.get("spark.kerberos.principal"))
        and bool(conf.get("spark.kerberos.keytab"))
    )


def start_delegation_tokens(spark: Any, filesystems: Iterable[str] = ()) -> DelegationTokens | None:
    """On a standalone master with a principal and keytab (:func:`needs_delegation_tokens`): log in from the
    keytab, get delegation tokens for ``fs.defaultFS``, ``spark.kerberos.access.hadoopFileSystems`` and
    ``filesystems`` (Hadoop URIs such as ``webhdfs://nn:9870``), give them to the executors, present and
    future, and keep them renewed until the handle's ``stop``. None, doing nothing, on any other master, and
    when there is no Hadoop file system to ask (none named, ``fs.defaultFS`` local); DelegationTokenError when
    the file systems named give no token.

    Call it right after the session starts, before the first job: an executor that fetched the application's
    settings before the tokens were set and registers after they were sent misses them until the first renewal.
    """
    if not needs_delegation_tokens(spark):
        return None
    sc = spark.sparkContext._jsc.sc()
    jvm = spark.sparkContext._jvm
    conf = sc.conf().clone()
    wanted = [fs for fs in (conf.get(FILESYSTEMS_KEY, "") or "").split(",") if fs.strip()]
    wanted += [fs for fs in filesystems if fs not in wanted]
    hadoop_conf = jvm.org.apache.hadoop.conf.Configuration(sc.hadoopConfiguration())
    if not wanted and (hadoop_conf.get("fs.defaultFS") or "file:").startswith("file:"):
        return None  # the application reads no Hadoop file system but local files: no token to get
    if wanted:
        conf.set(FILESYSTEMS_KEY, ",".join(wanted))
    if not hadoop_conf.get(RENEWER_KEY):
        hadoop_conf.set(RENEWER_KEY, conf.get("spark.kerberos.principal"))
    # Hadoop's security switch from Spark's settings (spark.hadoop.hadoop.security.authentication), as an
    # executor sets it when it receives tokens: the manager asks for HDFS tokens only when it is on
    jvm.org.apache.hadoop.security.UserGroupInformation.setConfiguration(hadoop_conf)
    backend = sc.schedulerBackend()
    manager = jvm.org.apache.spark.deploy.security.HadoopDelegationTokenManager(
        conf, hadoop_conf, backend.driverEndpoint()
    )
    tokens = manager.start()  # also sent to the driver endpoint; given here at once, before any job runs
    hadoop_util = jvm.org.apache.spark.deploy.SparkHadoopUtil.get()
    if tokens is None or hadoop_util.deserialize(tokens).numberOfTokens() == 0:
        manager.stop()
        principal = conf.get("spark.kerberos.principal")
        raise DelegationTokenError(
            f"no Hadoop delegation token for {', '.join(wanted) or 'fs.defaultFS'} as {principal} "
            "(the Spark driver's log has HadoopDelegationTokenManager's reason)"
        )
    backend.updateDelegationTokens(tokens)
    handle = DelegationTokens(manager, bytes(tokens), tuple(wanted))
    handle.resend_to_late_executors(sc, backend)
    return handle


@contextmanager
def delegation_tokens(spark: Any, filesystems: Iterable[str] = ()) -> Iterator[DelegationTokens | None]:
    """:func:`start_delegation_tokens` for the ``with`` block; the renewals stop at its end."""
    handle = start_delegation_tokens(spark, filesystems)
    try:
        yield handle
    finally:
        if handle is not None:
            handle.stop()


_lock = threading.Lock()
_applications: dict[str, tuple[Any, DelegationTokens]] = {}  # application id -> (its SparkContext, its tokens)
# [True] once _stop_all is registered: after PySpark's exit hook that ends the JVM, so it runs before that one
_stop_at_exit: list[bool] = []


def application_tokens(spark: Any, filesystems: Iterable[str] = ()) -> DelegationTokens | None:
    """The delegation tokens of ``spark``'s application (:func:`start_delegation_tokens`, with its None and its
    error), one manager per application: the first call starts it; a later one returns the same handle, or, when
    it names a file system that handle lacks, replaces it by one for both (the new manager started, then the old
    one stopped). The renewals stop at process exit, or, for an application whose context has stopped, at the
    next call of this function."""
    wanted = [fs for fs in filesystems if fs.strip()]
    with _lock:
        _forget_stopped()
        app = spark.sparkContext.applicationId
        running = _applications.get(app)
        if running is not None and set(wanted) <= set(running[1].filesystems):
            return running[1]
        known = list(running[1].filesystems) if running is not None else []
        handle = start_delegation_tokens(spark, known + [fs for fs in wanted if fs not in known])
        if running is not None:
            running[1].stop()
            del _applications[app]
        if handle is not None:
            if not _stop_at_exit:
                atexit.register(_stop_all)
                _stop_at_exit.append(True)
            _applications[app] = (spark.sparkContext, handle)
        return handle


def _forget_stopped() -> None:
    """Stop the managers of the applications whose SparkContext has stopped (caller holds the lock)."""
    for app, (context, handle) in list(_applications.items()):
        try:
            stopped = context._jsc is None or context._jsc.sc().isStopped()
        except Exception:  # the JVM is gone: nothing is running there
            stopped = True
        if stopped:
            del _applications[app]
            with suppress(Exception):  # its JVM is gone, with its renewals
                handle.stop()


def _stop_all() -> None:
    with _lock:
        running = list(_applications.values())
        _applications.clear()
    for _, handle in running:
        with suppress(Exception):  # at exit, the JVM may be gone already
            handle.stop()
