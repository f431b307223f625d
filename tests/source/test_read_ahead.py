"""ReadAhead: HBase's reader → shipper batch queue (replication.source.nb.batches)."""

from __future__ import annotations

import threading
import time

import pytest

from replication.source.read_ahead import ReadAhead
from replication.source.wal_reader import WALMissing


def test_items_come_out_in_order_and_all():
    with ReadAhead(iter(range(1000)), 1) as items:
        assert list(items) == list(range(1000))


def test_reader_error_comes_after_the_items_read_before_it_with_its_own_type():
    def source():
        yield 1
        yield 2
        raise WALMissing("WAL w1 of queue q is in none of WALs/, oldWALs/")

    got = []
    with pytest.raises(WALMissing, match="WAL w1"), ReadAhead(source(), 1) as items:
        for item in items:
            got.append(item)
    assert got == [1, 2]


def test_next_item_is_read_while_the_consumer_works_on_this_one():
    second_read = threading.Event()

    def source():
        yield "first"
        second_read.set()
        yield "second"

    with ReadAhead(source(), 1) as items:
        assert next(items) == "first"
        # the consumer has not asked for the second item: only a reader thread can have read it
        assert second_read.wait(5.0)
        assert list(items) == ["second"]


def test_reader_stays_at_most_capacity_plus_one_ahead():
    produced = []

    def source():
        for i in range(100):
            produced.append(i)
            yield i

    with ReadAhead(source(), 2) as items:
        assert next(items) == 0
        time.sleep(0.3)
        # 2 in the queue and 1 waiting to be put
        assert len(produced) == 4
        assert list(items) == list(range(1, 100))


def test_leaving_early_stops_a_blocked_reader_and_closes_the_source():
    closed = threading.Event()
    reader_threads = []

    def source():
        try:
            reader_threads.append(threading.current_thread())
            yield from range(10**6)
        finally:
            closed.set()

    with pytest.raises(RuntimeError, match="ship failed"), ReadAhead(source(), 1) as items:
        for item in items:
            if item == 3:
                raise RuntimeError("ship failed")
    assert closed.is_set()
    assert reader_threads and not reader_threads[0].is_alive()
    assert reader_threads[0] is not threading.current_thread()


def test_capacity_zero_reads_in_the_caller():
    threads = []

    def source():
        threads.append(threading.current_thread())
        yield 1

    with ReadAhead(source(), 0) as items:
        assert list(items) == [1]
    assert threads == [threading.current_thread()]
