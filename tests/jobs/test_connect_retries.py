"""``hbrep.spark.connect.retries``: how many times the Spark Connect client retries a call the server did not
answer before the job fails (issue 44). Against a loopback port nobody listens on, pyspark's own retry policy
logs each retry it decides ("Will retry after N ms"); its log is off unless enabled, so the test enables it."""

from __future__ import annotations

import logging
import warnings

import pytest

from replication.config import Config
from replication.jobs.connect import SparkConnectUnavailable, connect_session
from replication.net import free_port


class _Retries(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.waits: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.msg if isinstance(record.msg, str) else str(record.msg)
        if "Will retry after" in message:
            self.waits.append(message.rsplit("Will retry after", 1)[1].strip())


def _retries_logged(retries: int, work_dir) -> list[str]:
    pyspark_log = logging.getLogger("pyspark.sql.connect.logging")
    handler = _Retries()
    saved = (pyspark_log.handlers, pyspark_log.disabled, pyspark_log.level, pyspark_log.propagate)
    # only this handler (pyspark's own formats some of its records with arguments it cannot format)
    pyspark_log.handlers, pyspark_log.disabled, pyspark_log.propagate = [handler], False, False
    pyspark_log.setLevel(logging.DEBUG)
    conf = Config.load(
        env={}, overrides={"hbrep.spark.connect.retries": retries, "hbrep.spark.connect.ship.package": "false"}
    )
    url = f"sc://127.0.0.1:{free_port()}"  # nobody listens: every call is refused (UNAVAILABLE, retryable)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pyspark's "[RETRIES_EXCEEDED]" warning
            refused = pytest.raises(SparkConnectUnavailable, match=f"Spark Connect server {url} unavailable")
            with refused, connect_session(url, conf, work_dir):
                pass
    finally:
        pyspark_log.handlers, pyspark_log.disabled, level, pyspark_log.propagate = saved
        pyspark_log.setLevel(level)
    return handler.waits


def test_the_client_retries_as_many_times_as_configured(tmp_path):
    assert _retries_logged(0, tmp_path) == []  # no retry: the first refusal fails the session
    waits = _retries_logged(3, tmp_path)
    assert len(waits) == 3, waits  # three retries (the default 4 would be four), backing off
    assert [w.split(" ms")[0] for w in waits] == ["50", "200", "800"]
