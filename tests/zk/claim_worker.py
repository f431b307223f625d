"""A claimer process for the crash test: claims slowly (tiny multis, a pause after each) and reports progress.

Usage: python claim_worker.py HOSTS PARENT DEAD CLAIMER MAX_MULTI_BYTES PAUSE_SECONDS
"""

from __future__ import annotations

import sys
import time

from kazoo.client import KazooClient

from replication.zk.claim import claim_queues
from replication.zk.layout import ZNodePaths


def main() -> None:
    hosts, parent, dead, claimer, max_bytes, pause = sys.argv[1:7]
    zk = KazooClient(hosts=hosts, timeout=4.0)  # the server's minimum session timeout (2 ticks)
    zk.start(timeout=15)

    def progress(queue_id: str, moved: int) -> None:
        print(f"moved {queue_id} {moved}", flush=True)
        time.sleep(float(pause))

    claimed = claim_queues(
        zk,
        ZNodePaths(parent=parent),
        dead,
        claimer,
        lambda _p: True,
        max_multi_bytes=int(max_bytes),
        after_chunk=progress,
    )
    print(f"done {len(claimed)}", flush=True)


if __name__ == "__main__":
    main()
