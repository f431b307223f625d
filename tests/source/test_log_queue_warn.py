"""``replication.source.log.queue.warn``: HBase's warning when a queue holds more WALs than the threshold."""

from __future__ import annotations

import logging

from replication.config import Config
from replication.source.manifest import QueueTask, WalTask
from replication.source.replication_source import warn_on_long_queue


def _queue(wals: int) -> QueueTask:
    names = [f"rs%2C1%2C1.{1000 + i}" for i in range(wals)]
    return QueueTask("rs,1,1", "2", "2", False, True, [], [WalTask(n, None, 0, 0) for n in names])


def test_a_queue_longer_than_the_threshold_is_warned_about(caplog):
    conf = Config.load(env={})  # the default threshold, 2
    with caplog.at_level(logging.WARNING, logger="replication.source.replication_source"):
        # HBase 2.x's ReplicationSourceLogQueue compares queue.size(), the WAL being read included
        warn_on_long_queue(_queue(2), conf)
        assert caplog.records == []
        warn_on_long_queue(_queue(3), conf)
    (record,) = caplog.records
    assert record.getMessage() == (
        "queue 2 of rs,1,1: queue size 3 exceeds value of replication.source.log.queue.warn: 2"
    )


def test_the_threshold_is_read_from_the_configuration(caplog):
    conf = Config.load(env={}, overrides={"replication.source.log.queue.warn": 10})
    with caplog.at_level(logging.WARNING, logger="replication.source.replication_source"):
        warn_on_long_queue(_queue(10), conf)
    assert caplog.records == []
