"""DAG file parse cost: each of dags/hbrep_*.py loaded into a DagBag on its own, after the shared imports
(Airflow, the providers) are warm, so what is timed is the DAG file's own cost (the DAG processor pays it
on every parse). Moved here from tests/dags (speed is measured in bench/, never asserted in a test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

NAME = "dag_import"
TITLE = "DAG file parse time (DagBag per file, shared imports warm)"
REPO = Path(__file__).resolve().parent.parent

# Runs in a child with its own AIRFLOW_HOME (Airflow reads its configuration at import time).
_CHILD = """
import json, sys, time
from pathlib import Path
from airflow.dag_processing.dagbag import DagBag
dags = Path(sys.argv[1])
repeats = int(sys.argv[2])
DagBag(dag_folder=str(dags), safe_mode=False)  # warm: airflow, the providers, the plugins package
out = {}
for path in sorted(dags.glob("hbrep_*.py")):
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        bag = DagBag(dag_folder=str(path), safe_mode=False)
        times.append(time.perf_counter() - started)
        if bag.import_errors:
            raise SystemExit(f"{path.name}: {bag.import_errors}")
    out[path.stem] = sorted(times)[len(times) // 2]
print(json.dumps(out))
"""


def run(quick: bool) -> dict:
    """Median seconds to parse each DAG file into a DagBag (5 parses each; quick: 3)."""
    repeats = 3 if quick else 5
    with tempfile.TemporaryDirectory(prefix="hbrep-dagimport-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
        env.update(
            {
                "AIRFLOW_HOME": home,
                "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
                "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
                "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "plugins"), env.get("PYTHONPATH")) if p),
            }
        )
        done = subprocess.run([sys.executable, "-c", _CHILD, str(REPO / "dags"), str(repeats)], env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"dag_import: the child failed: {(done.stdout + done.stderr)[-1500:]}")
    medians: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    figures = {f"{name}: parse (s, median of {repeats})": value for name, value in medians.items()}
    return {
        "title": TITLE,
        "command": "make bench (bench/dag_import.py)" + (" QUICK=1" if quick else ""),
        "figures": figures,
        "ratios": {"slowest DAG file parse (s) (aim: well under 1 s)": max(medians.values())},
        "notes": [
            "Each DAG file parsed alone into a DagBag after one warm DagBag of the whole folder, so Airflow's and "
            "the providers' imports are cached and the figure is the file's own cost (no I/O, no library import "
            "at parse time: tests/dags/test_dag_import.py checks that the library is not imported). "
            f"1-minute load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores."
        ],
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
