from __future__ import annotations

from replication.source.throttler import ReplicationThrottler


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_unthrottled_never_sleeps():
    throttler = ReplicationThrottler(0)
    assert throttler.next_sleep_ms(10**9) == 0


def test_sleeps_to_end_of_cycle_when_over_the_tenth():
    clock = Clock()
    throttler = ReplicationThrottler(10_000, clock=clock)  # 1000 bytes per 100 ms cycle
    assert throttler.next_sleep_ms(800) == 0
    throttler.add_push_size(800)
    clock.now += 0.030
    assert abs(throttler.next_sleep_ms(300) - 70.0) < 1e-6
    clock.now += 0.080
    assert throttler.next_sleep_ms(300) == 0  # a new cycle began


def test_throttle_bounds_rate():
    clock = Clock()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    throttler = ReplicationThrottler(10_000, clock=clock)
    for _ in range(20):
        throttler.throttle(1000, sleep)
    elapsed = clock.now - 100.0
    assert elapsed >= 1.8  # 20 kB at 10 kB/s needs about 2 s
