"""The native_vs_hbrep bench's pieces that need no cluster: its sizes, its result and targets, the py-spy
summary (of a real py-spy recording of a real process) and the CPU sampler's process kinds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from bench import native_vs_hbrep as bench
from bench import registry
from bench.native_probe import KINDS, KindSampler, profile_start, profile_stop, profile_summary

BUSY = "import time\ndef spin_here():\n    t = time.time()\n    while time.time() - t < 30: pass\nspin_here()\n"


def test_sizes_are_the_issue_s_unless_quick_or_the_environment_says_otherwise():
    assert bench.sizes(False, {}) == bench.Sizes(1_000_000, 10, 10, 3)
    assert bench.sizes(True, {}) == bench.QUICK
    env = {"BENCH_NATIVE_ROWS": "100000", "BENCH_NATIVE_STEADY_MIN": "2", "BENCH_NATIVE_OUTAGE_MIN": "1.5"}
    assert bench.sizes(False, env) == bench.Sizes(100_000, 2, 1.5, 3)
    assert bench.sizes(False, env).label() == (
        "100,000 rows of 1 KB, 2-minute steady load, 1.5-minute peer outage, 3 rounds, 3-minute light load"
    )
    assert bench.sizes(False, {"BENCH_NATIVE_LIGHT_MIN": "5"}).light_min == 5


def _synthetic_result(
    sizes: bench.Sizes, failures: list[str] | None = None, catchup: dict[str, list[float]] | None = None
) -> dict:
    m = bench.Measured(
        drain={"native": [10_000.0, 12_000.0, 11_000.0], "hbrep": [4_000.0, 5_000.0, 6_000.0]},
        drain_alone={"native": [20_000.0, 22_000.0, 21_000.0], "hbrep": [7_000.0, 9_000.0, 8_000.0]},
        lag={"native": [(0.3, 0.9, 1.2)] * 3, "hbrep": [(2.0, 6.0, 9.0)] * 3},
        lag_edges={"native": [(0.5, 40.0)] * 3, "hbrep": [(1.0, 60.0)] * 3},
        lag_light={"native": [(0.3, 1.0, 1.2)] * 3, "hbrep": [(0.2, 0.5, 0.9)] * 3},
        catchup=catchup or {"native": [20.0, 30.0, 25.0], "hbrep": [10.0, 12.0, 11.0]},
        cpu={side: [{k: (i + 1) * 10.0 for i, k in enumerate(KINDS)}] * 3 for side in bench.SIDES},
        cpu_together=[{k: 5.0 for k in KINDS}] * 3,
        ingest=[9_000.0] * 3,
        asked=[2_000.0] * 3,
        achieved=[1_900.0] * 3,
        profile={
            "profile: samples": 100.0,
            "profile: self time: append (metrics.py)": 0.02,
            "profile: self time: decode (reader.py)": 0.4,
            "profile: module: replication/source/metrics.py": 0.02,
            "profile: module: replication/wal/reader.py": 0.5,
        },
        failures=failures or [],
    )
    return bench._result(sizes, m, "load")


def test_the_result_has_medians_spreads_ratios_and_says_when_it_is_not_the_full_size(monkeypatch):
    monkeypatch.delenv("BENCH_NATIVE_BUDGET_MIN", raising=False)
    result = _synthetic_result(bench.Sizes(20_000, 1, 1, 3))
    f, ratios = result["figures"], result["ratios"]
    assert f["native: backlog drain, both enabled together (rows/s, median)"] == 11_000.0
    assert f["hbrep: backlog drain, both enabled together (rows/s, per round)"] == "4,000 / 5,000 / 6,000"
    assert f["hbrep: backlog drain, alone (rows/s, median)"] == 8_000.0
    together = "hbrep / native: backlog drain rows/s, both enabled together (target >= 1.5)"
    assert ratios[together] == pytest.approx(5_000 / 11_000)
    assert ratios["hbrep / native: backlog drain rows/s, each alone (target >= 1.5)"] == pytest.approx(8 / 21)
    cores = os.cpu_count() or 1  # the peer region servers' CPU per million rows alone is KINDS[1]'s, 20 here
    assert f[f"hbrep: drain ceiling if the peer's region servers had all {cores} cores (rows/s)"] == cores * 1e6 / 20
    assert f[f"both together: CPU s per million rows drained (both tables): {KINDS[0]} (median)"] == 5.0
    assert ratios[f"hbrep / native: {bench.LAG_STEADY} (target <= 2)"] == pytest.approx(6.0 / 0.9)
    assert ratios[f"hbrep / native: {bench.LAG_LIGHT} (target <= 2)"] == pytest.approx(0.5)
    assert f["hbrep: lag p50 in the 50% load's first / last minute (s, per round)"] == ", ".join(["1.0 / 60.0"] * 3)
    assert ratios["hbrep / native: catch-up time after the outage (target <= 1)"] == pytest.approx(11 / 25)
    assert result["title"].endswith(
        "; NOT the issue's sizes: rows 20,000 (the issue's 1,000,000), steady-load minutes 1 (the issue's 10), "
        "outage minutes 1 (the issue's 10))"
    )
    assert "BENCH_NATIVE_ROWS=20000" in result["command"]
    two = _synthetic_result(bench.Sizes(1_000_000, 10, 10, 2))  # only the rounds differ: only they are named
    assert two["title"].endswith("; NOT the issue's sizes: rounds 2 (the issue's 3))"), two["title"]
    assert "BENCH_NATIVE_LIGHT_MIN=3" in result["command"]
    assert not any(note.startswith("Stopped early") for note in result["notes"])
    stopped = _synthetic_result(bench.FULL, ["round 3: TimeoutError: native: row not on B"])
    assert stopped["notes"][-1] == "Stopped early: round 3: TimeoutError: native: row not on B"
    full = _synthetic_result(bench.FULL)
    assert "NOT the issue's sizes" not in full["title"] and full["command"] == "make bench ONLY=native_vs_hbrep"
    monkeypatch.setenv("BENCH_NATIVE_BUDGET_MIN", "70")  # a run the budget may cut says so in its command
    assert _synthetic_result(bench.FULL)["command"] == "make bench ONLY=native_vs_hbrep BENCH_NATIVE_BUDGET_MIN=70"


def test_the_targets_table_says_which_goals_were_missed_by_how_much_quoting_cpu_and_profile(tmp_path):
    result = _synthetic_result(bench.Sizes(20_000, 1, 1, 3))
    (tmp_path / "native_vs_hbrep.json").write_text(json.dumps({"name": "native_vs_hbrep", **result}))
    rows = [line for line in registry._targets_table(tmp_path) if "real HBase -> real HBase" in line]
    drain, drain_alone, lag, lag_light, catchup = rows
    assert f"missed by {1.5 / (5_000 / 11_000):.1f}x" in drain
    assert f"missed by {1.5 / (8_000 / 21_000):.1f}x" in drain_alone
    # CPU per million rows by kind 10, 20, ... (KINDS' order): all kinds 280 per side, peer region servers 20;
    # together 5 per kind over both sides' drains of 5,000 + 11,000 rows/s
    busy = 5.0 * len(KINDS) * 16_000 / 1e6
    assert f"used {busy:.1f} of the machine's {os.cpu_count() or 1} cores" in drain
    assert "needs hbrep at 187 CPU s per million rows or less (native's 280 / 1.5)" in drain
    assert "the peer's region servers alone spend 20 on hbrep's rows" in drain
    assert "most samples in decode (reader.py) 40%, append (metrics.py) 2%" in drain  # largest share first
    assert "by hbrep module replication/wal/reader.py 50%, replication/source/metrics.py 2%" in drain
    assert "hbrep 280 CPU s per million rows drained alone" in drain
    assert f"missed by {(6.0 / 0.9) / 2:.1f}x" in lag
    assert lag_light.endswith("| met |") and catchup.endswith("| met |")


def test_a_catch_up_missed_by_little_says_the_percentage_and_quotes_each_round(tmp_path):
    catchup = {"native": [40.0, 30.0, 25.0], "hbrep": [26.0, 31.0, 38.0]}  # medians 31 and 30 s
    result = _synthetic_result(bench.Sizes(20_000, 1, 1, 3), catchup=catchup)
    (tmp_path / "native_vs_hbrep.json").write_text(json.dumps({"name": "native_vs_hbrep", **result}))
    catch_up = next(line for line in registry._targets_table(tmp_path) if "catch-up after a peer outage" in line)
    assert "**missed by 3%**: bounded by catch-up per round hbrep 26.0 / 31.0 / 38.0 s" in catch_up
    assert "native 40.0 / 30.0 / 25.0 s" in catch_up
    assert "the medians (31 / 30 s) are 1 s apart while one side's rounds spread over 15 s" in catch_up
    assert "hbrep caught up first in 1 of 3 rounds" in catch_up
    assert "hbrep 280 CPU s per million rows drained alone" in catch_up  # then what bounds a drain
    assert [registry._missed_by(x) for x in (1.004, 1.043, 1.4)] == ["0.4%", "4%", "1.4x"]


def test_py_spy_records_a_real_process_and_the_summary_names_its_function(tmp_path):
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.5)
        spies = profile_start([busy.pid], tmp_path / "profile", rate=100)
        time.sleep(3)
        profile_stop(spies)
    finally:
        busy.kill()
        busy.wait()
    summary = profile_summary(tmp_path / "profile")
    assert summary["profile: samples"] > 10
    top = max((k for k in summary if k.startswith("profile: self time: ")), key=summary.get)
    assert "spin_here" in top or "time" in top, summary
    assert sum(v for k, v in summary.items() if k.startswith("profile: self time: ")) <= 1.0


def test_the_sampler_names_a_root_s_python_child_spark_s_python_workers_and_leaves_other_processes_out():
    child = subprocess.Popen([sys.executable, "-c", BUSY.replace("30", "5")])
    try:
        sampler = KindSampler({os.getpid(): KINDS[3]}, airflow_sid=-1, interval=0.2)
        with sampler:
            time.sleep(2.5)
        used = sampler.used(sampler._times[0], sampler._times[-1])
    finally:
        child.kill()
        child.wait()
    assert used.get(KINDS[4], 0) > 0.05, used  # the busy child: a Python process under the Spark root
    assert KINDS[3] in used  # this process itself: the root's own kind
