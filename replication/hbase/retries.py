"""How long HBase's client waits between tries: ``hbase.client.pause`` × ``HConstants.RETRY_BACKOFF[try]``,
for at most ``hbase.client.retries.number`` tries (``ConnectionUtils.getPauseTime``, without its jitter)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from replication.config import Config

RETRY_BACKOFF = (1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200)  # HConstants.RETRY_BACKOFF
PAUSE_KEY = "hbase.client.pause"
RETRIES_KEY = "hbase.client.retries.number"


@dataclass(frozen=True)
class RetryPolicy:
    """``tries`` attempts in all, the n-th retry after ``pause_ms × RETRY_BACKOFF[n]`` ms."""

    pause_ms: int = 100
    tries: int = 16

    @classmethod
    def from_conf(cls, conf: Config | None) -> RetryPolicy:
        """HBase's settings: ``hbase.client.pause`` (100 ms) and ``hbase.client.retries.number`` (15 retries)."""
        if conf is None:
            return cls()
        return cls(conf.get_int(PAUSE_KEY, 100), max(1, conf.get_int(RETRIES_KEY, 15) + 1))

    def pause_s(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        return self.pause_ms * RETRY_BACKOFF[min(retry, len(RETRY_BACKOFF) - 1)] / 1000

    def attempts(self) -> Iterator[int]:
        """0, 1, ... tries-1, sleeping the backoff pause before each one after the first."""
        for attempt in range(self.tries):
            if attempt:
                time.sleep(self.pause_s(attempt - 1))
            yield attempt
