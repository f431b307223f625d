from __future__ import annotations

import pytest

from replication.config import Config
from replication.errors import ConfigError
from replication.source.throttler import ReplicationThrottler, source_bandwidth


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


def test_each_source_gets_the_peers_whole_bandwidth_unless_split_is_asked():
    # HBase: one throttler per ReplicationSource, each with the peer's bandwidth
    assert [source_bandwidth(1000, n, split=False) for n in (1, 3, 7)] == [1000, 1000, 1000]
    # hbrep.source.bandwidth.split: the peer's queues share it
    assert [source_bandwidth(1000, n, split=True) for n in (0, 1, 3, 7)] == [1000, 1000, 333, 142]
    assert source_bandwidth(2, 5, split=True) == 1  # never 0, which would mean unthrottled
    assert source_bandwidth(0, 5, split=True) == source_bandwidth(0, 5, split=False) == 0


def test_split_is_a_boolean_key_off_by_default():
    assert Config.load(env={}).get_bool("hbrep.source.bandwidth.split") is False
    assert Config.load(env={}, overrides={"hbrep.source.bandwidth.split": "true"}).get_bool(
        "hbrep.source.bandwidth.split"
    )
    with pytest.raises(ConfigError, match=r"bad value for hbrep.source.bandwidth.split \(from overrides\)"):
        Config.load(env={}, overrides={"hbrep.source.bandwidth.split": "half"})
