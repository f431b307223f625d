"""``make demo-hbase SECURE=1`` (issue 42): Kerberized real HBase A -> hbrep (a shadow peer) -> Kerberized real
HBase B, through Airflow's real scheduler, a region server of A SIGKILLed mid-load.

The demo makes its own realm (an MIT KDC), ZooKeeper that demands SASL of every client, both clusters with
``hbase.security.authentication=kerberos``, and runs hbrep's DAGs as the ``hbrep`` principal. Its exit status
says HBase's VerifyReplication found every row written and no bad row, and that the row keys and cells of the
replicated family are the same sets on A and B. The test reads the kept state besides: B's region server
took hbrep's ReplicateWALEntry calls as ``hbrep/127.0.0.1@HBREP.TEST (auth:KERBEROS)``, ZooKeeper ran with
SASL required, and no ship task failed.

The realm's tickets live 120 s (``--ticket-lifetime``), and the demo outlives the first ones it issued: its last
ship task ends after they expired (the verify run and HBase's VerifyReplication come later still), so the
processes started first (ZooKeeper, HBase's JVMs) have had to get new tickets. (60 s is too short for HBase:
ZooKeeper's client in its JVMs re-logs in at most once a minute, and the master's peer procedure then stalls.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROWS = 300
TICKET_LIFETIME_S = 120


def test_make_demo_hbase_secure_replicates_every_cell_between_kerberized_clusters(tmp_path):
    state = tmp_path / "demo"
    started = time.time()  # before the realm issues its first ticket
    # what `make demo-hbase SECURE=1` runs once its .venv is installed (with short tickets)
    demo = subprocess.run(
        [sys.executable, "-m", "replication.devstack.demo_hbase", "--secure", "--ticket-lifetime",
         str(TICKET_LIFETIME_S), "--rows", str(ROWS), "--state", str(state)],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    out = demo.stdout
    assert demo.returncode == 0, (out + demo.stderr)[-4000:]
    assert re.search(rf"rows written to HBase A +{ROWS}\n", out), out[-3000:]
    assert re.search(r"region server killed +localhost,\d+,\d+\n", out), out[-3000:]
    assert "Kerberos (SASL) everywhere       yes" in out
    assert f"HBase's VerifyReplication        GOODROWS={ROWS} BADROWS=0" in out, out[-3000:]
    assert f"row keys / cells equal on A, B   True / True ({ROWS} cells on A, {ROWS} on B)" in out, out[-3000:]
    assert re.search(r"DAG runs +\['hbrep_failover: success', 'hbrep_ship: success', 'hbrep_ship: success', "
                     r"'hbrep_verify: success'\]", out), out[-3000:]  # fmt: skip

    # B's region server: hbrep came in with Kerberos, and its replication handler took the edits
    b_log = (state / "hbase-b" / "run" / "rs1.log").read_text()
    assert re.search(r"Auth successful for hbrep/127\.0\.0\.1@HBREP\.TEST \(auth:KERBEROS\)", b_log)
    assert re.search(r"ugi=hbrep/127\.0\.0\.1@HBREP\.TEST \(auth:KERBEROS\), service=AdminService", b_log)
    assert "auth:SIMPLE" not in b_log
    # ZooKeeper demanded SASL of every client session
    assert "sessionRequireClientSASLAuth=true" in (state / "zk" / "zoo.cfg").read_text()
    # no ship task failed (one that shipped from the real HBase source names it in its asset event)
    ship_logs = list(Path(state, "airflow", "logs", "dag_id=hbrep_ship").rglob("task_id=peer.ship/**/*.log"))
    assert ship_logs, "no ship task ran"
    failed = [str(log) for log in ship_logs if '"Task failed with exception"' in log.read_text()]
    assert not failed, failed
    # ... and the last of them ended after the realm's first tickets had expired
    ended = max(_last_timestamp(log) for log in ship_logs)
    assert ended > started + TICKET_LIFETIME_S, f"ship tasks ended {ended - started:.0f} s after the start"


def _last_timestamp(log: Path) -> float:
    """The POSIX time of the last line of an Airflow task log (JSON lines with an ISO ``timestamp``)."""
    last = json.loads(log.read_text().strip().splitlines()[-1])["timestamp"]
    return datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()
