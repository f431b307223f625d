"""``make demo``: the embedded default, end to end, with a short report.

So far: start the embedded ZooKeeper, show that it serves, stop it. The full demo (two clusters,
a load, the DAGs, a failover, VerifyReplication and GX) grows here as those pieces land.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from replication.zk.server import ZooKeeperServer, free_port


def main() -> int:
    """Run the demo; returns the process exit code."""
    with tempfile.TemporaryDirectory(prefix="hbrep-demo-") as tmp:
        server = ZooKeeperServer(Path(tmp) / "zk", free_port())
        print(f"[demo] starting ZooKeeper on {server.hosts} ...")
        pid = server.start()
        try:
            state = server.status()
            print(f"[demo] ZooKeeper pid {pid}: {state.detail}, mode {state.mode}")
        finally:
            server.stop()
            print("[demo] ZooKeeper stopped; nothing left running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
