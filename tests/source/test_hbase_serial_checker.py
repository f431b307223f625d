"""HBaseSerialChecker: HBase's SerialReplicationChecker rules over a snapshot of barriers and pushed ids."""

from __future__ import annotations

from replication.source.hbase_serial_checker import HBaseSerialChecker
from replication.source.serial_replication import SerialReplicationChecker, serial_checker_from_dict

WAL = "rs1%2C16020%2C1.1700000000000"


def checker(regions, pushed=None, limit=10_000) -> HBaseSerialChecker:
    return HBaseSerialChecker(regions, pushed or {}, {WAL: limit})


def test_a_region_without_barriers_and_entries_before_the_first_barrier_pass():
    check = checker({"r": {"barriers": [10, 20], "state": "OPEN", "parents": []}})
    assert check.can_push(WAL, 100, "other", 5)
    assert check.can_push(WAL, 100, "r", 9)  # before the first barrier


def test_a_later_range_waits_until_the_range_before_it_is_pushed_to_its_barrier_minus_one():
    regions = {"r": {"barriers": [10, 20, 30], "state": "OPEN", "parents": []}}
    assert checker(regions).can_push(WAL, 100, "r", 15)  # the first range, no parents
    waiting = checker(regions, {"r": 18})
    assert not waiting.can_push(WAL, 100, "r", 20)
    assert "range before barrier 20" in waiting.reason
    assert checker(regions, {"r": 19}).can_push(WAL, 100, "r", 20)
    assert not checker(regions, {"r": 19}).can_push(WAL, 100, "r", 31)  # the range [20, 30) is not finished
    assert checker(regions, {"r": 29}).can_push(WAL, 100, "r", 31)


def test_a_daughter_s_first_range_waits_for_every_parent():
    regions = {
        "d": {"barriers": [50], "state": "OPEN", "parents": ["p1", "p2"]},
        "p1": {"barriers": [10, 40], "state": "MERGED", "parents": []},
        "p2": {"barriers": [12, 45], "state": "MERGED", "parents": []},
    }
    check = checker(regions, {"p1": 39, "p2": 43})
    assert not check.can_push(WAL, 100, "d", 51)
    assert "parent p2" in check.reason
    assert checker(regions, {"p1": 39, "p2": 44}).can_push(WAL, 100, "d", 51)
    # a parent without barriers (gone from hbase:meta) has finished
    assert checker({"d": {"barriers": [50], "state": "OPEN", "parents": ["gone"]}}).can_push(WAL, 100, "d", 50)


def test_the_last_range_of_an_opening_region_waits():
    regions = {"r": {"barriers": [10, 20], "state": "OPENING", "parents": []}}
    check = checker(regions, {"r": 19})
    assert not check.can_push(WAL, 100, "r", 25)
    assert "OPENING" in check.reason
    assert checker(regions, {"r": 19}).can_push(WAL, 100, "r", 12)  # not the last range


def test_entries_written_after_the_snapshot_read_hbase_meta_wait():
    check = checker({}, limit=500)
    assert check.can_push(WAL, 499, "r", 1)
    assert not check.can_push(WAL, 500, "r", 1)
    assert "after this pass read hbase:meta" in check.reason
    assert not check.can_push("another%2C1%2C1.1", 0, "r", 1)  # a WAL the snapshot did not measure


def test_the_manifest_form_names_its_kind_and_round_trips():
    original = checker({"r": {"barriers": [10], "state": "OPEN", "parents": []}}, {"r": 9})
    again = serial_checker_from_dict(original.to_dict())
    assert isinstance(again, HBaseSerialChecker) and again.to_dict() == original.to_dict()
    hbrep_own = SerialReplicationChecker({}, set(), {}).to_dict()
    assert isinstance(serial_checker_from_dict(hbrep_own), SerialReplicationChecker)


def test_without_hbase_meta_every_entry_waits_saying_why():
    check = HBaseSerialChecker({}, {}, {WAL: 10_000}, unavailable="hbase:meta unreadable after 16 tries")
    assert not check.can_push(WAL, 100, "r", 1)
    assert "could not be read: hbase:meta unreadable" in check.reason
    assert serial_checker_from_dict(check.to_dict()).unavailable == check.unavailable
