"""The log cleaner (``hbrep clean --once``): delete old WALs nobody needs any more (spec §6).

A file in ``oldWALs/`` (and ``oldWALs/<server>/``) is deleted only when every plugin agrees, as in
HBase's chained ``CleanerChore``:

- TimeToLiveLogCleaner: ``now − mtime > hbase.master.logcleaner.ttl``; a future mtime (clock skew) is
  never deletable;
- ReplicationLogCleaner: the name is in no queue of any replicator (one ``get_all_wals()`` snapshot per
  run, with the cversion retry) and its mtime is before the snapshot was taken. If ZooKeeper cannot be
  read, nothing is deletable.

Files whose names are not WAL names are left alone. (Departure: HBase deletes such files without asking
the plugins; we keep them and say so, because a foreign file in oldWALs is more likely an operator's
than garbage, and a cleaner that deletes what it does not understand is hard to trust.)
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from kazoo.client import KazooClient

from replication.cluster.source_cluster import open_source
from replication.config import Config
from replication.fs import FileStatus
from replication.zk.cluster_key import ClusterKey
from replication.zk.queue_storage import ReplicationQueueStorage
from replication.zk.serial_barriers import forget_gone_servers

LOG = logging.getLogger(__name__)
WAL_NAME = re.compile(r".*\.\d*(\.meta)*")  # AbstractFSWALProvider.validateWALFilename


@dataclass
class CleanReport:
    """Files deleted and kept (with why) by one run."""

    deleted: list[str] = field(default_factory=list)
    bytes_freed: int = 0
    kept: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    barriers_dropped: list[str] = field(default_factory=list)  # servers whose serial barriers went
    left_to: str | None = None  # "hbase": a real HBase source's own LogCleaner owns its oldWALs

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _queue_holders(zk: KazooClient, storage: ReplicationQueueStorage) -> dict[str, str]:
    snapshot = storage.snapshot()
    holders: dict[str, str] = {}
    for queue in snapshot.queues():
        for wal in queue.wals:
            holders.setdefault(wal, f"{queue.server}/{queue.queue_id}")
    return holders


def old_wal_files(fs, root: str) -> list[FileStatus]:
    """Every file under ``oldWALs/`` and its per-server subdirectories."""
    files = []
    for status in fs.list(fs.join(root, "oldWALs")):
        if status.is_dir:
            files.extend(s for s in fs.list(status.path) if not s.is_dir)
        else:
            files.append(status)
    return files


def clean_once(
    zk: KazooClient, key: ClusterKey, conf: Config, *, now_ms: int | None = None, explain: bool = False
) -> CleanReport:
    """Delete every deletable old WAL (see module doc); ``explain`` fills ``kept`` with reasons."""
    source = open_source(zk, key, conf)
    ttl = conf.get_int("hbase.master.logcleaner.ttl")
    report = CleanReport()
    if source.is_real_hbase:
        # HBase's master runs its own LogCleaner with ReplicationLogCleaner, which keeps every WAL a queue
        # holds; hbrep drops finished WALs from the queues and so frees them, but never deletes HBase's files
        report.left_to = "hbase"
        return report
    storage = ReplicationQueueStorage(zk, source.paths)
    read_zk_ts = int(time.time() * 1000) if now_ms is None else now_ms
    try:
        in_queues = storage.get_all_wals()
        holders = _queue_holders(zk, storage) if explain else {}
    except Exception as exc:
        report.error = f"cannot read the replication queues ({exc}); nothing deleted"
        LOG.error("Log cleaner: %s", report.error)
        return report
    now = read_zk_ts
    for status in old_wal_files(source.fs, source.root):
        name = status.name
        why = None
        if not WAL_NAME.fullmatch(name):
            why = "not a WAL file name"
        elif status.mtime_ms > now:
            why = "modification time is in the future"
        elif now - status.mtime_ms <= ttl:
            why = f"too young ({(now - status.mtime_ms) / 1000:.0f}s old, ttl {ttl / 1000:.0f}s)"
        elif name in in_queues:
            why = f"held by queue {holders.get(name, '(a replication queue)')}"
        elif status.mtime_ms >= read_zk_ts:
            why = "modified after the queue snapshot"
        if why is not None:
            if explain:
                report.kept[status.path] = why
            continue
        if source.fs.delete(status.path):
            report.deleted.append(status.path)
            report.bytes_freed += status.length
    try:  # serial replication's barriers of servers that are gone and fully shipped (zk/serial_barriers.py)
        report.barriers_dropped = forget_gone_servers(zk, source.paths, set(in_queues))
    except Exception as exc:
        LOG.warning("Log cleaner: serial barriers not cleaned: %s", exc)
    return report
