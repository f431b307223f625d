"""bench/cpu_share.py: CPU seconds per component, sampled from real processes."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from bench import cpu_share
from bench.cpu_share import COMPONENTS, CpuSampler

# Markers no other process of the machine has: the sampler reads every process, and under make test's
# two workers the other one may run Airflow or Spark meanwhile (it once added 1.1 CPU-s to "Airflow").
BUSY, IDLE = "hbrep-cpu-share-test-busy", "hbrep-cpu-share-test-idle"


def test_a_busy_process_s_cpu_is_counted_for_its_component_and_an_idle_one_s_is_not(monkeypatch):
    # real processes whose command lines name their components, matched before hbrep's own components
    monkeypatch.setattr(cpu_share, "COMPONENTS", ((BUSY, "busy"), (IDLE, "idle"), *COMPONENTS))
    # the spinner uses 1 s of CPU however loaded the machine is; the sleeper next to it almost none
    spin = f"import time\nwhile time.process_time() < 1.0: pass\n# {BUSY}"
    rest = f"import time; time.sleep(0.5)  # {IDLE}"
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
    # 1 s of CPU, less what it used after its last sample (one interval, longer on a loaded machine)
    assert 0.6 <= used.get("busy", 0.0) <= 1.2, used
    assert used.get("idle", 0.0) < 0.3, used
    assert abs(sampler.span(t0, t1) - (t1 - t0)) <= 0.25  # the samples nearest the two instants


def test_a_stretch_without_two_samples_has_no_figures():
    sampler = CpuSampler("k", interval=0.1)
    assert sampler.used(0.0, 1.0) == {}
    assert sampler.span(0.0, 1.0) == 0.0


def test_a_process_is_named_by_its_command_line():
    sampler = CpuSampler("127.0.0.1:1:/a")
    for marker, component in (
        ("pyspark.daemon", "Spark's Python workers"),
        ("replication.cluster.regionserver --cluster 127.0.0.1:1:/a", "source region servers"),
        ("replication.cluster.regionserver --cluster 127.0.0.1:1:/b", "peer region servers"),
    ):
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)", marker])
        try:
            time.sleep(0.2)  # exec'd: the command line is the child's own
            assert sampler._component(psutil.Process(proc.pid)) == component
        finally:
            proc.kill()
            proc.wait()
