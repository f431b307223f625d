"""``make demo-hbase SECURE=1`` (issue 42): Kerberized real HBase A -> hbrep (a shadow peer) -> Kerberized real
HBase B, through Airflow's real scheduler, a region server of A SIGKILLed mid-load; and the same runs shipping
into hbrep's own Kerberized cluster C (peer 2, through its HBase RPC listeners), one of C's servers SIGKILLed.

The demo makes its own realm (an MIT KDC), ZooKeeper that demands SASL of every client, both clusters with
``hbase.security.authentication=kerberos``, and runs hbrep's DAGs as the ``hbrep`` principal. Its exit status
says HBase's VerifyReplication found every row written and no bad row, and that the row keys and cells of the
replicated family are the same sets on A and B. The test reads the kept state besides: B's region server
took hbrep's ReplicateWALEntry calls as ``hbrep/127.0.0.1@HBREP.TEST (auth:KERBEROS)``, ZooKeeper ran with
SASL required, and no ship task failed. The table B never had is seeded under the scheduler by HBase's snapshot
tools run as hbrep's principal, and HBase's VerifyReplication finds every one of its rows.

The realm's tickets live 120 s (``--ticket-lifetime``), and the demo runs through three of their lifetimes
(``--soak-lifetimes 3``): after the story, a probe row goes into A every 10 s, shipped by the scheduler's runs and
timed until B has it, until 360 s have passed since the realm issued its first tickets. Every probe must arrive,
none later than one lifetime, and ship tasks must have ended in the second and third lifetimes, none failed: every
process (ZooKeeper, HBase's JVMs, Airflow's, the Spark Connect server's workers) got new tickets while shipping
went on. (60 s is too short for HBase: ZooKeeper's client in its JVMs re-logs in at most once a minute, and the
master's peer procedure then stalls.)
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
LIFETIMES = 3


def test_make_demo_hbase_secure_replicates_every_cell_between_kerberized_clusters(tmp_path):
    state = tmp_path / "demo"
    started = time.time()  # before the realm issues its first ticket
    # what `make demo-hbase SECURE=1` runs once its .venv is installed (with short tickets)
    demo = subprocess.run(
        [sys.executable, "-m", "replication.devstack.demo_hbase", "--secure", "--ticket-lifetime",
         str(TICKET_LIFETIME_S), "--soak-lifetimes", str(LIFETIMES), "--rows", str(ROWS), "--state", str(state)],
        capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    out = demo.stdout
    assert demo.returncode == 0, (out + demo.stderr)[-4000:]
    soak = re.search(r"soak probes written / arrived +(\d+) / (\d+) over ([\d.]+) ticket lifetimes; "
                     r"lag p50 ([\d.]+) s, max ([\d.]+) s", out)  # fmt: skip
    assert soak, out[-3000:]
    probes, arrived, lifetimes, _p50, lag_max = (float(g) for g in soak.groups())
    assert probes >= 10 and arrived == probes, soak.group(0)  # every probe reached B
    assert lifetimes >= LIFETIMES and lag_max < TICKET_LIFETIME_S, soak.group(0)
    assert re.search(rf"rows written to HBase A +{ROWS}\n", out), out[-3000:]
    assert re.search(r"region server killed +localhost,\d+,\d+\n", out), out[-3000:]
    assert "Kerberos (SASL) everywhere       yes" in out
    total = ROWS + int(probes)
    assert f"HBase's VerifyReplication        GOODROWS={total} BADROWS=0" in out, out[-3000:]
    assert f"row keys / cells equal on A, B   True / True ({total} cells on A, {total} on B)" in out, out[-3000:]
    # the same rows in hbrep's own Kerberized cluster C, shipped by the same runs, one of its servers SIGKILLed
    assert re.search(r"region server killed in C +127\.0\.0\.1,\d+,\d+\n", out), out[-3000:]
    assert f"row keys / cells equal on A, C   True / True ({total} cells on A, {total} on hbrep's C)" in out
    c_logs = "".join(p.read_text(errors="replace") for p in (state / "c").rglob("regionserver-*.log"))
    assert "authenticated as hbrep/127.0.0.1@HBREP.TEST (auth-conf)" in c_logs  # hbrep's ship, at privacy
    assert re.search(r"DAG runs +\['hbrep_failover: success', 'hbrep_ship: success', 'hbrep_ship: success', "
                     r"'hbrep_seed_peer: success', 'hbrep_verify: success'\]", out), out[-3000:]  # fmt: skip
    # the table B never had, seeded by HBase's snapshot tools run as hbrep's principal (kinit from its keytab)
    assert "seeded table history, HBase's VerifyReplication  GOODROWS=500 BADROWS=0" in out, out[-3000:]

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
    failed = [log for log in ship_logs if '"Task failed with exception"' in log.read_text()]
    assert not failed, "\n".join(f"{log}:\n{_errors_of(log)}" for log in failed)
    # ... and ship tasks ended in the second and third lifetimes of the realm's tickets, after the first ones
    # expired (the first lifetime is the clusters' start and the load; the realm starts after `started`, so a task
    # counted in lifetime n ended no earlier than in the realm's own lifetime n)
    ended = sorted(_last_timestamp(log) - started for log in ship_logs)
    for n in range(1, LIFETIMES):
        window = (n * TICKET_LIFETIME_S, (n + 1) * TICKET_LIFETIME_S)
        assert any(window[0] <= t < window[1] for t in ended), f"no ship task ended in {window} s: {ended}"


def _last_timestamp(log: Path) -> float:
    """The POSIX time of the last line of an Airflow task log (JSON lines with an ISO ``timestamp``)."""
    last = json.loads(log.read_text().strip().splitlines()[-1])["timestamp"]
    return datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()


def _errors_of(task_log: Path) -> str:
    """The error and warning events of an Airflow task log (JSON lines), with their exceptions, for a message."""
    lines = []
    for line in task_log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("level") in ("warning", "error", "critical") and "GitWildMatch" not in str(event.get("event")):
            raised = event.get("exception") or event.get("error_detail") or []  # structlog's, as Airflow names it
            details = [f"{d.get('exc_type')}: {d.get('exc_value')}" if isinstance(d, dict) else str(d) for d in raised]
            lines.append(f"  {event.get('timestamp')} {event.get('level')} {event.get('event')} {details or ''}")
    return "\n".join(lines)[-6000:]
