"""Many async kazoo calls in flight at once, a bounded window of them (for bulk znode writes)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

PIPELINE_WINDOW = 2000  # requests in flight at once


def pipelined(calls: Iterable[Callable[[], Any]], window: int = PIPELINE_WINDOW) -> list[Any]:
    """Run async ZooKeeper calls with up to ``window`` in flight; results (or exceptions) in order."""
    results: list[Any] = []
    pending: deque[Any] = deque()

    def drain(keep: int) -> None:
        while len(pending) > keep:
            request = pending.popleft()
            try:
                results.append(request.get())
            except Exception as exc:
                results.append(exc)

    for call in calls:
        pending.append(call())
        if len(pending) >= window:
            drain(window // 2)
    drain(0)
    return results
