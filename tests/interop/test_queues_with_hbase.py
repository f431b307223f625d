"""Queues: with a peer added to real HBase, `hbrep queues --json` shows the queue tree HBase wrote
(region servers, queue ids, WAL names, positions) exactly as HBase's own ReplicationQueueStorage
reads it (ZooKeeper queue storage: HBase 2.6 keeps queues in ZooKeeper; the hbase:replication table
came with 3.0, HBASE-27109), including the recovered queue HBase's master claims from a SIGKILLed
HRegionServer (ClaimReplicationQueuesProcedure, HBASE-26029)."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from interop.helpers import hbrep_json, restart_regionserver

from replication.zk.queue_info import ReplicationQueueInfo

pytestmark = pytest.mark.slow


def _settled(real_hbase, cluster: str) -> tuple[dict, dict]:
    """HBase's view and hbrep's, read until two reads of HBase's agree with hbrep's in between."""
    for _ in range(10):
        before = real_hbase.admin("queues")
        ours = hbrep_json("queues", cluster=cluster)
        if real_hbase.admin("queues") == before:
            return before, ours
        time.sleep(1)
    raise AssertionError("HBase's queues kept changing")


def test_hbrep_queues_shows_the_tree_hbase_wrote_and_a_recovered_queue(real_hbase):
    layout = real_hbase.layout()
    cluster = layout.cluster_key
    peer_id = f"q{uuid.uuid4().hex[:6]}"
    table = f"queue_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("add-peer", json.dumps({
        "id": peer_id, "cluster_key": f"127.0.0.1:{layout.zk_port}:/hbase-elsewhere", "enabled": False,
    }))  # fmt: skip
    try:
        real_hbase.admin("create-table", table, "1", "f:1")
        lines = [{"op": "put", "row": f"r{i}", "family": "f", "qualifier": "q", "value": str(i)} for i in range(20)]
        real_hbase.admin("mutate", table, stdin="\n".join(map(json.dumps, lines)))
        real_hbase.admin("roll")  # two WALs per queue

        hbase, ours = _settled(real_hbase, cluster)
        assert ours == hbase
        live = set(real_hbase.admin("servers"))
        assert live == set(hbase) and all(len(hbase[server][peer_id]) >= 2 for server in live)

        # SIGKILL region server 2: HBase's master claims its queues for a live server
        victim = real_hbase.server_name(2)
        victim_wals = set(hbase[victim][peer_id])
        real_hbase.regionserver(2).kill()
        recovered = f"{peer_id}-{victim}"
        deadline = time.monotonic() + 180
        while True:
            hbase = real_hbase.admin("queues")
            owners = [server for server, queues in hbase.items() if recovered in queues]
            if owners and victim not in hbase:
                break
            assert time.monotonic() < deadline, f"HBase did not claim {victim}'s queues: {hbase}"
            time.sleep(2)
        hbase, ours = _settled(real_hbase, cluster)
        assert ours == hbase
        info = ReplicationQueueInfo.parse(recovered)
        assert info.peer_id == peer_id and info.is_recovered and info.dead_region_servers == [victim]
        assert info.owner_of_wals == victim and set(hbase[owners[0]][recovered]) == victim_wals
    finally:
        real_hbase.admin("remove-peer", peer_id)
        restart_regionserver(real_hbase, 2)
