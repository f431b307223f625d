"""The reader → shipper hand-off of a ReplicationSource: HBase runs ``ReplicationSourceWALReader`` and
``ReplicationSourceShipper`` as two threads of a WAL group joined by a ``LinkedBlockingQueue`` of
batches with capacity ``replication.source.nb.batches`` (1) (spec §4.1). ``ReadAhead`` is that queue:
a thread runs the reader's batch iterator and the ship task takes the batches in order, so the next
batch is read and filtered while the peer applies the current one (the ship RPC waits on the peer's
WAL fsync and releases the GIL).

Nothing changes in what is shipped or in the positions: batches come out in the reader's order, a
reader error comes out after the batches read before it (with its own type, so a stuck WAL is still
reported as stuck), and a ship failure stops the reader thread and closes its WAL file.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

_DONE = object()
_POLL_S = 0.1  # how often a blocked reader checks whether the shipper stopped taking batches


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class ReadAhead(Generic[T]):
    """Iterate ``source`` in a thread, at most ``capacity`` items ahead of the consumer.

    Use as a context manager; iterating yields the items in order and re-raises the source's error in
    the consumer. Leaving the block early stops the thread and closes ``source`` (a generator's
    ``finally`` runs in the reader thread). ``capacity`` <= 0 iterates ``source`` in the caller, no thread.
    """

    def __init__(self, source: Iterable[T], capacity: int, name: str = "ReplicationSourceWALReader"):
        self._source = source
        self._capacity = capacity
        self._name = name
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max(1, capacity))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Iterator[T]:
        if self._capacity <= 0:
            return iter(self._source)
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        return self._take()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the reader thread (if any) and wait until it closed its source."""
        if self._thread is None:
            close = getattr(self._source, "close", None)
            if close is not None:
                close()
            return
        self._stop.set()
        while self._thread.is_alive():
            self._drain()  # unblock a reader waiting to put
            self._thread.join(_POLL_S)
        self._drain()

    def _drain(self) -> None:
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        iterator = iter(self._source)
        try:
            for item in iterator:
                if not self._put(item):
                    return
            self._put(_DONE)
        except BaseException as exc:  # handed to the consumer, which raises it
            self._put(_Failed(exc))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    def _take(self) -> Iterator[T]:
        while True:
            item = self._queue.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item  # type: ignore[misc]
