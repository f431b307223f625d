"""PreloadingLocalExecutor: the LocalExecutor's workers (real processes forked by a real executor) hold the
Spark Connect client before any task runs; a ship task's process forked from them starts with it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap

import pytest

from replication.jobs.connect import CLIENT_MODULES

_WORKERS = textwrap.dedent(
    """
    import json, os, sys
    from airflow.executors.local_executor import LocalExecutor
    from hbrep_airflow.executors.preloading import PreloadingLocalExecutor

    cls = PreloadingLocalExecutor if sys.argv[1] == "preloading" else LocalExecutor
    executor = cls(parallelism=1)
    executor.start()
    try:
        pids = list(executor.workers)
        maps = {pid: open(f"/proc/{pid}/maps").read() for pid in pids}
        with open(sys.argv[2], "w") as result:
            json.dump({"pids": pids, "grpc": [("cygrpc" in m) for m in maps.values()],
                       "here": [name in sys.modules for name in sys.argv[3:]]}, result)
    finally:
        executor.end()
    """
)


def _workers(kind: str, tmp_path) -> dict:
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    env = {k: v for k, v in env.items() if k != "AIRFLOW__CORE__EXECUTOR"}
    # the result goes to a file: the executor's forked workers share the script's stdout, and under make
    # test's load a worker's output once ran into the result line, which was then not found
    tmp_path.mkdir(parents=True, exist_ok=True)
    result = tmp_path / f"{kind}.json"
    out = subprocess.run([sys.executable, "-c", _WORKERS, kind, str(result), *CLIENT_MODULES], capture_output=True,
                         text=True, timeout=120, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert result.exists(), (out.stdout + out.stderr)[-3000:]
    return json.loads(result.read_text())


@pytest.mark.slow
def test_the_workers_of_the_preloading_executor_hold_the_connect_client_and_the_plain_ones_do_not(tmp_path):
    preloading = _workers("preloading", tmp_path / "a")
    assert preloading["pids"] and all(preloading["grpc"]) and all(preloading["here"])
    plain = _workers("plain", tmp_path / "b")
    assert plain["pids"] and not any(plain["grpc"]) and not any(plain["here"])


def test_a_module_that_cannot_be_imported_is_named_and_the_executor_starts_anyway():
    from hbrep_airflow.executors.preloading import LOG, preimport

    seen: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    LOG.addHandler(handler)
    try:
        assert preimport(("json", "hbrep_no_such_module")) == ["hbrep_no_such_module"]
    finally:
        LOG.removeHandler(handler)
    assert len(seen) == 1 and "could not pre-import hbrep_no_such_module" in seen[0], seen


def test_preload_client_says_whether_the_client_was_inherited():
    code = textwrap.dedent(
        """
        import sys
        from replication.jobs.connect import CLIENT_MODULES, preload_client
        first = preload_client()          # cold: a background import starts
        from replication.jobs import connect
        connect._preload.join(60)
        print(first, all(m in sys.modules for m in CLIENT_MODULES), preload_client())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["False", "True", "True"]
