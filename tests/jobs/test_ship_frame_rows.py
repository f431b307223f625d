"""The ship job's result rows: every field of a QueueResult survives the worker → driver trip."""

import subprocess
import sys

from replication.jobs.ship_frame import RESULT_DDL, queue_result, result_batch
from replication.source.manifest import QueueResult, WalProgress


def _result(i: int) -> QueueResult:
    return QueueResult(
        replicator=f"rs{i},16020,1",
        queue_id="2",
        peer_id="2",
        status="waiting" if i else "ok",
        wals=[WalProgress(f"rs{i}%2C16020%2C1.100", 0, 4096 + i, bool(i), 3)],
        error="serial peer 2: region r waits" if i else None,
        drained=not i,
        metrics={"shippedOps": 10 * i, "shippedBytes": 999},
        last_seq_ids={"0123abcd": 77 + i},  # serial peers' last pushed sequence ids
    )


def test_every_field_comes_back_in_order():
    results = [(i, _result(i)) for i in range(3)]
    batch = result_batch(results)
    assert [f.name for f in batch.schema] == [c.split()[0] for c in RESULT_DDL.split(", ")]
    rows = batch.to_pylist()
    assert [row["queue_index"] for row in rows] == [0, 1, 2]
    assert [queue_result(row) for row in rows] == [r for _, r in results]


def test_the_worker_side_imports_no_pandas():
    probe = (
        "import sys\n"
        "from replication.jobs.ship_frame import result_batch\n"
        "from replication.source.manifest import QueueResult\n"
        "result_batch([(0, QueueResult('rs,1,1', '2', '2', 'ok'))])\n"
        "print('pandas' in sys.modules)\n"
    )
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "False\n"
