"""bench/dist_vs_one_host.py and the helpers it takes from bench/scheduler.py (no stack started)."""

from __future__ import annotations

from bench import dist_vs_one_host, scheduler


def test_modes_name_the_engine_and_the_stack():
    assert [(scheduler.engine(m), scheduler.is_dist(m)) for m in ("connect", "submit", "connect-dist")] == [
        ("connect", False), ("submit", False), ("connect", True)
    ]  # fmt: skip


def test_ship_task_logs_are_found_in_the_stacks_home_and_in_each_celery_workers_home(tmp_path):
    logs = []
    for home in ("airflow", "dist/celery/worker-1/airflow", "dist/celery/worker-2/airflow"):
        path = tmp_path / home / "logs" / "dag_id=hbrep_ship" / "run_id=r1" / "task_id=peer.ship" / "map_index=0"
        path.mkdir(parents=True)
        (path / "attempt=1.log").write_text("{}\n")
        logs.append(path / "attempt=1.log")
    other = tmp_path / "airflow" / "logs" / "dag_id=hbrep_ship" / "run_id=r1" / "task_id=peer.commit"
    other.mkdir(parents=True)
    (other / "attempt=1.log").write_text("{}\n")
    assert sorted(scheduler.ship_task_logs(tmp_path)) == sorted(logs)


def test_the_result_sets_the_distributed_figures_over_the_one_host_ones():
    figures = {}
    for mode, p99, rate in (("connect", 2.0, 1000.0), ("connect-dist", 3.0, 500.0)):
        figures[f"{mode}: lag p99 (s)"] = p99
        for size in ("100-byte", "1 KB"):
            figures[f"{mode}: {size} backlog: scheduler rows/s"] = rate
            figures[f"{mode}: {size} backlog: ingest rows/s (4 clients, DAG paused)"] = 4 * rate
    out = dist_vs_one_host.result(figures, ["start: load 1"], "abc1234", quick=True)
    assert out["ratios"]["distributed lag p99 / one-host lag p99"] == 1.5
    assert out["ratios"]["distributed / one-host: 1 KB backlog scheduler rows/s"] == 0.5
    assert out["ratios"]["connect-dist: 100-byte backlog: scheduler rows/s / ingest rows/s"] == 0.25
    assert out["command"].endswith("QUICK=1") and "abc1234" in out["notes"][0]
