"""ReplicationThrottler: a per-peer bandwidth limit, accounted in 100 ms cycles (spec §4.5)."""

from __future__ import annotations

import time
from collections.abc import Callable


def source_bandwidth(peer_bandwidth: int, queues_of_peer: int, split: bool) -> int:
    """Bytes/s one queue's source may ship to its peer (0 = unthrottled).

    HBase gives every ReplicationSource (every queue, recovered ones too) its own throttler with the
    peer's whole bandwidth, so that is the default. With ``split`` (``hbrep.source.bandwidth.split``)
    the peer's bandwidth is shared by the peer's ``queues_of_peer`` queues of the cycle instead, so the
    whole cluster stays under it (at least 1 byte/s each, never unthrottled by rounding).
    """
    if peer_bandwidth <= 0 or not split:
        return max(0, peer_bandwidth)
    return max(1, peer_bandwidth // max(1, queues_of_peer))


class ReplicationThrottler:
    """Allows ``bandwidth`` bytes/s (0 = unthrottled) by granting ``bandwidth / 10`` bytes per 100 ms."""

    CYCLE_MS = 100

    def __init__(self, bandwidth: int, clock: Callable[[], float] = time.monotonic):
        self.enabled = bandwidth > 0
        self.cycle_push_max = bandwidth / 10.0
        self.clock = clock
        self.cycle_start_ms = self._now_ms()
        self.cycle_push_size = 0

    def _now_ms(self) -> float:
        return self.clock() * 1000.0

    def next_sleep_ms(self, size: int) -> float:
        """How long to sleep before pushing ``size`` more bytes (0 when allowed now)."""
        if not self.enabled:
            return 0.0
        now = self._now_ms()
        if now >= self.cycle_start_ms + self.CYCLE_MS:
            self.cycle_start_ms, self.cycle_push_size = now, 0
            return 0.0
        if self.cycle_push_size > 0 and self.cycle_push_size + size > self.cycle_push_max:
            return self.cycle_start_ms + self.CYCLE_MS - now
        return 0.0

    def add_push_size(self, size: int) -> None:
        """Account ``size`` bytes pushed in the current cycle."""
        if self.enabled:
            self.cycle_push_size += size

    def reset_start_tick(self) -> None:
        """Start a new cycle now (after a sleep)."""
        self.cycle_start_ms, self.cycle_push_size = self._now_ms(), 0

    def throttle(self, size: int, sleep: Callable[[float], None] = time.sleep) -> None:
        """Sleep as needed, then account ``size`` bytes."""
        wait = self.next_sleep_ms(size)
        if wait > 0:
            sleep(wait / 1000.0)
            self.reset_start_tick()
        self.add_push_size(size)
