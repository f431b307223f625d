"""``hbase.master.cleaner.interval`` is a configuration key read as every other: the log cleaner DAG's
schedule is the value of the ``HBREP_CONF`` site file, an ``HBREP__`` environment override beating it
(``Config.load``'s layering), HMaster's 10 minutes when neither sets it. Each case parses the DAG file in a
fresh interpreter (the DAG processor's way: the value is read when the file is parsed)."""

from __future__ import annotations

import os
import subprocess
import sys

import airflow_env

from replication.config import write_site_xml

CODE = (
    "import sys, runpy\n"
    f"sys.path.insert(0, {str(airflow_env.PLUGINS)!r})\n"
    f"dag = runpy.run_path({str(airflow_env.DAGS / 'hbrep_log_cleaner.py')!r})['dag']\n"
    "print(int(dag.timetable.delta.total_seconds()))\n"
)


def _schedule_s(env: dict[str, str]) -> int:
    base = {k: v for k, v in os.environ.items() if k != "HBREP_CONF" and not k.startswith("HBREP__")}
    out = subprocess.run([sys.executable, "-c", CODE], env={**base, **env}, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.strip().splitlines()[-1])


def test_the_cleaner_runs_every_configured_interval(tmp_path):
    site = tmp_path / "hbase-site.xml"
    write_site_xml(site, {"hbase.master.cleaner.interval": 120000, "hbrep.lag.alert.ms": 1000})
    assert _schedule_s({}) == 600  # HMaster's LogCleaner chore: 10 minutes
    assert _schedule_s({"HBREP_CONF": str(site)}) == 120
    assert _schedule_s({"HBREP_CONF": str(site), "HBREP__hbase__master__cleaner__interval": "30000"}) == 30
