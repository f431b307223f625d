"""A region-server process freezes its start-up objects and sets the configured gc thresholds."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import gc, json
from replication.config import Config
from replication.cluster.gc_tuning import tune_gc
before = gc.get_threshold()
conf = Config.load(env={}, overrides=OVERRIDES)
returned = tune_gc(conf)
after, frozen = gc.get_threshold(), gc.get_freeze_count()
print(json.dumps({"before": before, "returned": returned, "after": after, "frozen": frozen}))
"""


def _run(overrides: dict) -> dict:
    # a child process: the test process keeps its own collector settings
    code = SCRIPT.replace("OVERRIDES", repr(overrides))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_default_thresholds_and_start_up_objects_frozen():
    result = _run({})
    assert result["before"] == [700, 10, 10]
    assert result["returned"] == result["after"] == [20000, 20, 10]
    assert result["frozen"] > 1000  # the imports (grpc, protobuf, kazoo...) are out of every collection


def test_thresholds_come_from_the_configuration():
    assert _run({"hbrep.regionserver.gc.thresholds": "5000, 10, 5"})["after"] == [5000, 10, 5]
