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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from replication.errors import HbrepError

STANDALONE_SCHEME = "spark://"
FILESYSTEMS_KEY = "spark.kerberos.access.hadoopFileSystems"
RENEWER_KEY = "yarn.resourcemanager.principal"  # Hadoop's Master.getMasterPrincipal: the renewer Spark names


class DelegationTokenError(HbrepError):
    """The driver got no Hadoop delegation token to give its executors (Spark's log says why)."""


class DelegationTokens:
    """Spark's token manager of one running application: its renewals go on until :meth:`stop`."""

    def __init__(self, manager: Any, tokens: bytes):
        self._manager = manager
        self.tokens = tokens  # the serialized Credentials handed to the executors (Hadoop's token storage format)

    def stop(self) -> None:
        """Stop the renewals (the tokens given stay valid until they expire)."""
        self._manager.stop()


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
    future, and keep them renewed until the handle's ``stop``. None, doing nothing, on any other master.

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
    if wanted:
        conf.set(FILESYSTEMS_KEY, ",".join(wanted))
    hadoop_conf = jvm.org.apache.hadoop.conf.Configuration(sc.hadoopConfiguration())
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
    return DelegationTokens(manager, bytes(tokens))


@contextmanager
def delegation_tokens(spark: Any, filesystems: Iterable[str] = ()) -> Iterator[DelegationTokens | None]:
    """:func:`start_delegation_tokens` for the ``with`` block; the renewals stop at its end."""
    handle = start_delegation_tokens(spark, filesystems)
    try:
        yield handle
    finally:
        if handle is not None:
            handle.stop()
