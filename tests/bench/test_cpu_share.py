"""bench/cpu_share.py: CPU seconds per component, sampled from real processes."""

from __future__ import annotations

import subprocess
import sys
import time

from bench.cpu_share import CpuSampler


def test_a_busy_process_s_cpu_is_counted_for_its_component_and_an_idle_one_s_is_not():
    # a real process whose command line names the component (pyspark.daemon = Spark's Python workers)
    # the spinner uses 1 s of CPU however loaded the machine is; the sleeper next to it almost none
    spin = "import time\nwhile time.process_time() < 1.0: pass\n# pyspark.daemon"
    rest = "import time; time.sleep(0.5)  # airflow"
    with CpuSampler("127.0.0.1:1:/none", interval=0.1) as sampler:
        time.sleep(0.3)
        t0 = time.time()
        busy = subprocess.Popen([sys.executable, "-c", spin])
        idle = subprocess.Popen([sys.executable, "-c", rest])
        busy.wait(10)
        idle.wait(10)
        t1 = time.time()  # both ended inside the stretch: each counts until its last sample
        time.sleep(0.3)
    used = sampler.used(t0, t1)
    spark = used.get("Spark's Python workers", 0.0)
    airflow = used.get("Airflow (scheduler, API server, DAG processor, triggerer, tasks)", 0.0)
    # 1 s of CPU, less what it used after its last sample (one interval, longer on a loaded machine)
    assert 0.6 <= spark <= 1.2, used
    assert airflow < 0.3, used
    assert abs(sampler.span(t0, t1) - (t1 - t0)) <= 0.25  # the samples nearest the two instants


def test_a_stretch_without_two_samples_has_no_figures():
    sampler = CpuSampler("k", interval=0.1)
    assert sampler.used(0.0, 1.0) == {}
    assert sampler.span(0.0, 1.0) == 0.0
