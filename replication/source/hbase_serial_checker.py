"""SerialReplicationChecker for a real HBase source: HBase's own barriers and last pushed sequence ids.

HBase (hbase-server ``SerialReplicationChecker``) cuts each region's sequence ids into ranges at its
replication barriers (the open sequence numbers in hbase:meta's ``rep_barrier`` family, read by
hbase/replication_barriers.py) and lets an entry of region R with sequence id s go when:

- there is no barrier at or below s ("before the first barrier, pass": written before the table was
  replicated serially, no order can be kept);
- s is in R's first range: every parent (split or merge) has finished, i.e. its last pushed sequence id
  has reached its last barrier - 1 (a parent without barriers has finished);
- s is in a later range: the range before it has finished, ``pushed(R) >= barrier[i-1] - 1`` (the open
  sequence number is the previous opening's highest sequence id + 1);
- and in either case not when s is in the last range while R is ``OPENING`` (the open marker is written
  to the WAL before the open sequence number reaches hbase:meta).

The last pushed ids are HBase's ``<parent>/replication/regions/<aa>/<bb>/<rest>-<peerId>`` znodes; hbrep's
commit writes them as HBase's source does (zk/queue_storage.py). hbrep checks against a snapshot instead
of asking hbase:meta for every entry: the barriers, states and pushed ids are read by the snapshot step
(source/snapshot.py), after it measured the length of every queued WAL, and an entry that lies past that
length waits for a later pass (its region may have opened again after hbase:meta was read, under a barrier
this snapshot does not know). A range finished in this pass is seen by the next pass, when a waiting queue
goes on (HBase sleeps ``hbase.serial.replication.waiting.ms`` instead). When the snapshot cannot read
hbase:meta at all, every entry waits (``unavailable`` says why) rather than going out of order.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

OPENING = "OPENING"
KIND = "hbase"


class HBaseSerialChecker:
    """Decides, entry by entry, whether a serial peer of a real HBase source may receive it in this pass."""

    def __init__(self, regions: dict[str, dict[str, Any]], pushed: dict[str, int], read_limits: dict[str, int],
                 unavailable: str = ""):  # fmt: skip
        # encoded region name -> {"barriers": [sorted open seq nums], "state": str | None, "parents": [encoded]}
        self.regions = regions
        self.pushed = dict(pushed)  # encoded region name -> last pushed sequence id for this peer
        self.read_limits = dict(read_limits)  # WAL name -> its length when hbase:meta was read
        self.unavailable = unavailable  # why the snapshot could not read hbase:meta: every entry waits
        self.reason = ""

    # -- the manifest form ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "regions": self.regions, "pushed": self.pushed, "read_limits": self.read_limits,
                "unavailable": self.unavailable}  # fmt: skip

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> HBaseSerialChecker:
        return cls(dict(raw.get("regions", {})), dict(raw.get("pushed", {})), dict(raw.get("read_limits", {})),
                   str(raw.get("unavailable") or ""))  # fmt: skip

    # -- the check --------------------------------------------------------------------------------
    def _finished(self, region: str, end_barrier: int) -> bool:
        # isRangeFinished: the open sequence number is the previous opening's last sequence id + 1
        return self.pushed.get(region, -1) >= end_barrier - 1

    def _parent_finished(self, parent: str) -> bool:
        barriers = self.regions.get(parent, {}).get("barriers", [])
        return not barriers or self._finished(parent, barriers[-1])

    def can_push(self, wal: str, offset: int, region: str = "", seq: int = -1) -> bool:
        """True when the entry of ``region`` with sequence id ``seq`` at ``offset`` of ``wal`` may be pushed
        now; else ``reason`` says why not (the rules are in the module docstring)."""
        if self.unavailable:
            self.reason = f"hbase:meta's replication barriers could not be read: {self.unavailable}"
            return False
        limit = self.read_limits.get(wal)
        if limit is None or offset >= limit:
            self.reason = f"{wal} from {offset} was written after this pass read hbase:meta's barriers"
            return False
        found = self.regions.get(region)
        if not found or not found.get("barriers"):
            return True
        barriers: list[int] = found["barriers"]
        index = bisect_right(barriers, seq)  # ranges are [barrier[i-1], barrier[i]): index 0 = before the first
        if index == 0:
            return True
        if index == 1:
            for parent in found.get("parents", []):
                if not self._parent_finished(parent):
                    self.reason = (
                        f"region {region} (sequence id {seq}): its parent {parent} is not pushed up to "
                        f"{self.regions[parent]['barriers'][-1] - 1} yet"
                    )
                    return False
        elif not self._finished(region, barriers[index - 1]):
            self.reason = (
                f"region {region} (sequence id {seq}): its range before barrier {barriers[index - 1]} is not "
                f"pushed yet (last pushed {self.pushed.get(region, 'none')})"
            )
            return False
        if index == len(barriers) and found.get("state") == OPENING:
            self.reason = f"region {region} (sequence id {seq}) is in its last range and still OPENING"
            return False
        return True
