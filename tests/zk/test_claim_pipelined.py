"""Pipelined claim multis: a chunk that fails because the queue changed loses and duplicates nothing."""

from __future__ import annotations

import logging

from replication.zk import codec
from replication.zk.claim import claim_queues
from replication.zk.queue_storage import ReplicationQueueStorage


def test_a_queue_changing_mid_claim_is_re_read_and_finished(zkc, paths, caplog):
    queues = ReplicationQueueStorage(zkc, paths)
    dead = "d,1,1"
    names = [f"d%2C1%2C1.{1000 + n}" for n in range(200)]
    zkc.ensure_path(paths.queue(dead, "2"))
    for request in [
        zkc.create_async(paths.wal(dead, "2", name), codec.position_to_bytes(n + 1)) for n, name in enumerate(names)
    ]:
        request.get()
    gone = names[-1]  # in the last chunk, which is already in flight when the first one settles
    progress = []

    def after_chunk(queue_id: str, moved: int) -> None:
        if not progress:
            zkc.delete(paths.wal(dead, "2", gone))  # a concurrent change of the dead server's queue
        progress.append(moved)

    caplog.set_level(logging.INFO, logger="replication.zk.claim")
    claimed = claim_queues(zkc, paths, dead, "me,1,1", lambda _p: True, max_multi_bytes=4000, after_chunk=after_chunk)
    expected = {name: n + 1 for n, name in enumerate(names) if name != gone}
    assert len(progress) > 4  # several chunks
    assert "changed while moving it" in caplog.text  # the failed chunk made the claimer re-read the queue
    assert claimed[0].wals == expected
    assert queues.snapshot().as_dict() == {"me,1,1": {"2-d,1,1": expected}}
    assert not zkc.exists(paths.replicator(dead))
