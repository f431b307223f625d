"""SerialReplicationChecker: may this WAL entry of a serial peer be pushed now, or must it wait?

HBase's checker (hbase-server ``SerialReplicationChecker``) finds the range of the entry's region
between two replication barriers and lets the entry go once the previous range is finished: the last
pushed sequence id of the region has reached the barrier. hbrep's barriers are per routing epoch and per
server (zk/serial_barriers.py), because its rows move between every server's regions together when the
live servers change. The rule, the same in those terms:

- the entry's epoch is the one of the writer's last barrier at or before the entry's WAL position; an
  entry before the writer's first barrier goes at once (HBase: "before the first barrier, pass");
- the entry goes once every *other* server has finished what it wrote before that epoch: its barrier for
  that epoch (or a later one) lies at or before where the peer's queues stand in its WALs. A server
  that is gone has finished once no queue of the peer holds any of its WALs. A live server that has not
  yet recorded the epoch has not finished.

"Where the queues stand" is the snapshot's: a range finished during this pass is seen by the next pass,
which is when a waiting queue goes on (HBase sleeps ``hbase.serial.replication.waiting.ms`` instead).
Departure: the finished test is by WAL position, not by last pushed sequence id, so that edits written
before the peer existed (never queued for it) do not hold it back; the last pushed sequence ids are still
recorded per region and peer in HBase's ``regions`` znodes (commit.py).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import asdict
from typing import Any

from replication.source.hbase_serial_checker import KIND as HBASE_KIND
from replication.source.hbase_serial_checker import HBaseSerialChecker
from replication.wal.names import server_of_wal, wal_start_timestamp
from replication.zk.serial_barriers import Barrier, describe_epoch


def wal_order(name: str, offset: int = 0) -> tuple[int, str, int]:
    """Sort key of a position in one server's WALs (they are named by creation time)."""
    return (wal_start_timestamp(name), name, offset)


class SerialReplicationChecker:
    """Decides, entry by entry, whether a serial peer may receive it in this pass (see module doc)."""

    def __init__(self, barriers: dict[str, list[Barrier]], live_servers: set[str], queued: dict[str, int]):
        self.barriers = {s: sorted(bs, key=lambda b: b.epoch) for s, bs in barriers.items()}
        # a server's barriers lie in WAL order as their epochs rise (each is taken under its append lock)
        self._positions = {s: [wal_order(b.wal, b.offset) for b in bs] for s, bs in self.barriers.items()}
        self.live_servers = set(live_servers)
        self.queued = dict(queued)  # WAL name -> position, over every queue of the peer
        self._queued_by_server: dict[str, list[str]] = {}
        for wal in self.queued:
            self._queued_by_server.setdefault(server_of_wal(wal), []).append(wal)
        self._epoch_ok: dict[int, bool] = {}
        self.reason = ""

    # -- the manifest form ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "barriers": {s: [asdict(b) for b in bs] for s, bs in self.barriers.items()},
            "live_servers": sorted(self.live_servers),
            "queued": self.queued,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SerialReplicationChecker:
        barriers = {s: [Barrier(**b) for b in bs] for s, bs in raw.get("barriers", {}).items()}
        return cls(barriers, set(raw.get("live_servers", [])), dict(raw.get("queued", {})))

    # -- the check --------------------------------------------------------------------------------
    def epoch_of(self, wal: str, offset: int) -> int | None:
        """The routing epoch of the entry at ``offset`` in ``wal`` (None: before the writer's first barrier)."""
        server = server_of_wal(wal)
        index = bisect_right(self._positions.get(server, []), wal_order(wal, offset))
        return self.barriers[server][index - 1].epoch if index else None

    def can_push(self, wal: str, offset: int, region: str = "", seq: int = -1) -> bool:
        """True when the entry at ``offset`` of ``wal`` may be pushed now; else ``reason`` says why not (its
        region and sequence id do not matter to hbrep's barriers, only to a real HBase's)."""
        epoch = self.epoch_of(wal, offset)
        if epoch is None:
            return True
        if epoch not in self._epoch_ok:
            self._epoch_ok[epoch] = self._others_finished_before(epoch, server_of_wal(wal))
        return self._epoch_ok[epoch]

    def _others_finished_before(self, epoch: int, writer: str) -> bool:
        for server, barriers in self.barriers.items():
            if server == writer:
                continue
            entered = next((b for b in barriers if b.epoch >= epoch), None)
            if entered is None:
                if server in self.live_servers:
                    self.reason = f"region server {server} has not entered routing epoch {describe_epoch(epoch)} yet"
                    return False
                pending = self._queued_by_server.get(server, [])
                if pending:
                    self.reason = f"WAL {pending[0]} of the gone region server {server} is not shipped yet"
                    return False
                continue
            limit = wal_order(entered.wal, entered.offset)
            for queued in self._queued_by_server.get(server, []):
                if wal_order(queued, self.queued[queued]) < limit:
                    self.reason = (
                        f"edits of region server {server} before routing epoch {describe_epoch(epoch)} "
                        f"({queued} from {self.queued[queued]}) are not shipped yet"
                    )
                    return False
        return True


SerialChecker = SerialReplicationChecker | HBaseSerialChecker


def serial_checker_from_dict(raw: dict[str, Any]) -> SerialChecker:
    """The checker a manifest's ``serial`` dict describes: a real HBase source's (``kind`` "hbase", HBase's
    barriers in hbase:meta) or hbrep's own (its routing-epoch barriers)."""
    if raw.get("kind") == HBASE_KIND:
        return HBaseSerialChecker.from_dict(raw)
    return SerialReplicationChecker.from_dict(raw)
