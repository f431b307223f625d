"""Building SparkSessions the same way everywhere (driver bound to loopback, no UI in tests)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def spark_session(app_name: str, master: str | None = None, conf: Mapping[str, str] | None = None):
    """Get or create a SparkSession for ``master`` (default ``hbrep.spark.master`` = local[2]).

    The driver binds to 127.0.0.1 and Python workers use this interpreter, started by hbrep's daemon
    (replication.spark_daemon: no re-reading of pyspark's zips at the start of every task).

    On a standalone master with ``spark.kerberos.principal``/``.keytab`` (``replication.kerberos.spark_login_conf``)
    the session's executors get Hadoop delegation tokens from its driver before it is returned
    (``replication.spark_tokens.application_tokens``: for ``fs.defaultFS`` and the file systems ``conf`` names in
    ``spark.kerberos.access.hadoopFileSystems``; once per application, also when the session was running
    already); DelegationTokenError when those file systems give none.
    """
    from pyspark.sql import SparkSession  # pyspark loads only where a session is built

    from replication.spark_daemon import DAEMON_CONF
    from replication.spark_tokens import FILESYSTEMS_KEY, application_tokens

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master or "local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.python.worker.reuse", "true")
        .config("spark.ui.showConsoleProgress", "false")
    )
    for key, value in {**DAEMON_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    # from the conf given, not the running context's: getOrCreate keeps a running context's settings as they were
    filesystems = (conf or {}).get(FILESYSTEMS_KEY, "")
    application_tokens(session, [fs.strip() for fs in filesystems.split(",") if fs.strip()])
    return session
