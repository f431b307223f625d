"""A slow claimer process for the claimer-killed scenario: one WAL per multi, a pause after each.

Usage: python -m tests.reliability.claim_worker CLUSTER_KEY DEAD_SERVER CLAIMER PAUSE_SECONDS
Prints ``moved <queueId> <n>`` after each committed chunk and ``done <queues>`` at the end.
"""

from __future__ import annotations

import sys
import time

from kazoo.client import KazooClient

from replication.zk.claim import claim_queues
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths


def main() -> None:
    key, dead, claimer, pause = ClusterKey.parse(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    zk = KazooClient(hosts=key.hosts, timeout=4.0)  # a short session: its ephemeral lock dies soon after a kill
    zk.start(timeout=15)

    def progress(queue_id: str, moved: int) -> None:
        print(f"moved {queue_id} {moved}", flush=True)
        time.sleep(pause)

    claimed = claim_queues(
        zk, ZNodePaths(parent=key.znode_parent), dead, claimer, lambda _p: True, max_multi_bytes=1, after_chunk=progress
    )
    print(f"done {len(claimed)}", flush=True)


if __name__ == "__main__":
    main()
