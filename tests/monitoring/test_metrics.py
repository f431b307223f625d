from __future__ import annotations

from replication.fs import LocalFileSystem
from replication.monitoring.metrics import MetricsStore, StoredMetrics
from replication.source.manifest import QueueResult


def result(peer: str, queue: str, shipped: int, write_time: int = 0) -> QueueResult:
    return QueueResult(
        "rs1,1,1",
        queue,
        peer,
        "ok",
        metrics={"shippedOps": shipped, "logEditsRead": shipped, "lastShippedWriteTime": write_time},
    )


def test_cycles_fold_once_per_cycle_and_peer_files_are_separate(tmp_path):
    store = MetricsStore(LocalFileSystem(), str(tmp_path))
    summary = {"peers": {"1": {"rows_shipped": 5}, "2": {"rows_shipped": 7}}, "spark_job": True}
    assert store.record_cycle("c1", [result("1", "1", 5, 1000), result("2", "2", 7)], summary)
    assert not store.record_cycle("c1", [result("1", "1", 5), result("2", "2", 7)], summary)  # a retried commit
    store.record_cycle("c2", [result("1", "1", 3, 2000)], {"peers": {"1": {}}})
    data = store.load()
    assert data.queues["rs1,1,1/1"]["shippedOps"] == 8
    assert data.queues["rs1,1,1/1"]["lastShippedWriteTime"] == 2000
    assert data.queues["rs1,1,1/2"]["shippedOps"] == 7
    assert [c["cycle_id"] for c in data.cycles if c["peer_id"] == "1"] == ["c1", "c2"]
    assert sorted(p.name for p in (tmp_path / ".hbrep" / "metrics").glob("peer-*.json")) == [
        "peer-1.json",
        "peer-2.json",
    ]


def test_failovers_and_checks(tmp_path):
    store = MetricsStore(LocalFileSystem(), str(tmp_path))
    assert store.load() == StoredMetrics(queues={}, cycles=[], failovers=[], checks={}, alerts=[], lag_history={})
    store.record_failover({"dead_server": "a,1,1", "claimer": "b,1,1", "moved": {"1": "1-a,1,1"}})
    store.record_check("verify", "1", "ns:t", {"counters": {"GOODROWS": 3, "BADROWS": 0}})
    store.record_check("verify", "1", "ns:t", {"counters": {"GOODROWS": 4, "BADROWS": 0}})
    data = store.load()
    assert [f["claimer"] for f in data.failovers] == ["b,1,1"]
    assert data.checks["verify/1/ns:t"]["counters"]["GOODROWS"] == 4


def test_alerts_are_kept_one_file_each_oldest_first(tmp_path):
    from replication.monitoring.alerts import lag_alert

    store = MetricsStore(LocalFileSystem(), str(tmp_path))
    assert store.load().alerts == []
    first = lag_alert("hbrep_ship", "scheduled__1", 40000)
    second = lag_alert("hbrep_ship", "manual__2", 40000)
    store.record_alert(first)
    store.record_alert(second)
    alerts = store.load().alerts
    assert [a["run_id"] for a in alerts] == ["scheduled__1", "manual__2"]
    assert alerts[0]["message"] == (
        "hbrep_ship run scheduled__1 missed its deadline: still running 40000 ms after it was queued "
        "(hbrep.lag.alert.ms)"
    )
    assert all(a["kind"] == "lag" and a["at_ms"] > 0 for a in alerts)
    assert len(list((tmp_path / ".hbrep" / "metrics" / "alerts").iterdir())) == 2


def test_lag_history_keeps_the_last_hours_per_peer(tmp_path):
    from replication.monitoring.metrics import KEEP_HISTORY_MS

    store = MetricsStore(LocalFileSystem(), str(tmp_path))
    now = 10 * KEEP_HISTORY_MS
    store.record_lag_sample("1", now - KEEP_HISTORY_MS - 1, now - KEEP_HISTORY_MS - 500, {"t": 1})  # too old
    store.record_lag_sample("1", now - 1000, now - 1500, {"t": now - 1500})
    store.record_lag_sample("1", now, now - 200, {"t": now - 200})
    store.record_lag_sample("2", now, now, {})
    history = store.load().lag_history
    assert [s["at_ms"] for s in history["1"]] == [now - 1000, now]
    assert history["1"][-1] == {"at_ms": now, "through_ms": now - 200, "tables": {"t": now - 200}}
    assert set(history) == {"1", "2"}


def test_age_of_last_shipped_op_is_kept_as_set_refreshed_on_failure_unchanged_when_idle(tmp_path):
    """HBase's MetricsSource: the age set at ship time is kept (not recomputed), a failed pass refreshes it
    from the last shipped write time (refreshAgeOfLastShippedOp), a pass that read nothing leaves it."""
    import time

    store = MetricsStore(LocalFileSystem(), str(tmp_path))
    metrics = {"shippedOps": 3, "lastShippedWriteTime": 5000, "ageOfLastShippedOp": 120}
    shipped = QueueResult("rs1,1,1", "1", "1", "ok", metrics=metrics)
    store.record_cycle("c1", [shipped], {"peers": {"1": {}}})
    entry = store.load().queues["rs1,1,1/1"]
    assert entry["ageOfLastShippedOp"] == 120 and entry["lastShippedWriteTime"] == 5000
    store.record_cycle("c2", [QueueResult("rs1,1,1", "1", "1", "ok", metrics={"shippedOps": 0})], {"peers": {"1": {}}})
    assert store.load().queues["rs1,1,1/1"]["ageOfLastShippedOp"] == 120  # idle: not grown
    caught_up = QueueResult("rs1,1,1", "1", "1", "ok", metrics={"ageOfLastShippedOp": 0})
    store.record_cycle("c3", [caught_up], {"peers": {"1": {}}})
    assert store.load().queues["rs1,1,1/1"]["ageOfLastShippedOp"] == 0
    before = int(time.time() * 1000)
    store.record_cycle("c4", [QueueResult("rs1,1,1", "1", "1", "failed", error="peer away")], {"peers": {"1": {}}})
    after = int(time.time() * 1000)
    assert before - 5000 <= store.load().queues["rs1,1,1/1"]["ageOfLastShippedOp"] <= after - 5000
    never = QueueResult("rs2,1,1", "1", "1", "failed", error="peer away")
    store.record_cycle("c5", [never], {"peers": {"1": {}}})
    assert "ageOfLastShippedOp" not in store.load().queues["rs2,1,1/1"]  # nothing ever shipped: no age
    # every age set is one value of the queue's histogram (HBase's setLastShippedAge -> MutableHistogram.add)
    entry = store.load().queues["rs1,1,1/1"]
    assert entry["ageOfLastShippedOpSamples"] == [120, 0, entry["ageOfLastShippedOp"]]
    assert entry["ageOfLastShippedOp_num_ops"] == 3
    assert "ageOfLastShippedOpSamples" not in store.load().queues["rs2,1,1/1"]


def test_the_age_histogram_keeps_the_last_values_and_counts_them_all():
    from replication.monitoring.age_histogram import KEEP_SAMPLES, histogram_attributes, record_age

    entry: dict = {}
    for age in range(KEEP_SAMPLES + 10):
        record_age(entry, age)
    assert entry["ageOfLastShippedOp_num_ops"] == KEEP_SAMPLES + 10
    assert entry["ageOfLastShippedOpSamples"] == list(range(10, KEEP_SAMPLES + 10))
    figures = histogram_attributes("source.7.", [5], 1)
    assert figures["Source.7.ageOfLastShippedOp_num_ops"] == 1
    assert {figures[f"Source.7.ageOfLastShippedOp_{s}"] for s in ("min", "max", "mean", "median")} == {5}
    assert histogram_attributes("source.", range(1, 1001), 1000)["Source.ageOfLastShippedOp_99.9th_percentile"] == 999


def test_one_failover_record_per_death_the_claimers_kept(tmp_path):
    """Two runs handling one death: the one that moved the queues has its record kept, whichever wrote first;
    a later death of another start code has its own."""
    store = MetricsStore(LocalFileSystem(), str(tmp_path))
    nothing = {"dead_server": "a,1,1", "died_ms": 5, "claimer": "c,1,1", "moved": {}}
    claimed = {"dead_server": "a,1,1", "died_ms": 5, "claimer": "b,1,1", "moved": {"1": "1-a,1,1"}}
    assert store.record_failover(nothing, replace=False)
    assert store.record_failover(claimed)
    assert not store.record_failover(nothing, replace=False)
    assert [f["claimer"] for f in store.load().failovers] == ["b,1,1"]
    store.record_failover({**claimed, "dead_server": "a,1,2", "died_ms": 9})
    assert [f["dead_server"] for f in store.load().failovers] == ["a,1,1", "a,1,2"]
