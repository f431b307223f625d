"""Incremental queue snapshots against a real ZooKeeper: same tree as a full read, fewer queues read."""

from __future__ import annotations

import pytest

from replication.fs import get_filesystem
from replication.zk import codec, journal
from replication.zk.claim import claim_queues
from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage
from replication.zk.queue_snapshot import SnapshotCache, incremental_snapshot
from replication.zk.queue_storage import ReplicationQueueStorage


def wal(server: str, n: int) -> str:
    return f"{server.split(',')[0]}%2C1%2C1.{1000 + n}"


@pytest.fixture
def cache(tmp_path):
    fs, root = get_filesystem(str(tmp_path))
    return SnapshotCache.for_root(fs, root)


def populate(queues: ReplicationQueueStorage, servers=5, peers=("1", "2"), wals=3) -> None:
    for s in range(servers):
        server = f"h{s},1,1"
        for peer in peers:
            for n in range(wals):
                queues.add_wal(server, peer, wal(server, n))
                queues.set_wal_position(server, peer, wal(server, n), 100 + n)


def check(queues, cache, mode, queues_read=None, **kwargs):
    result = incremental_snapshot(queues, cache, **kwargs)
    assert result.snapshot.as_dict() == queues.snapshot().as_dict()
    assert result.mode == mode, result.reason
    if queues_read is not None:
        assert result.queues_read == queues_read
    return result


def test_every_journaled_change_is_seen_by_reading_only_its_queues(zkc, paths, cache):
    queues = ReplicationQueueStorage(zkc, paths)
    peers = ReplicationPeerStorage(zkc, paths)
    for p in ("1", "2", "3"):
        peers.add_peer(p, ReplicationPeerConfig("peer:2181:/hbase"))
    populate(queues)
    first = check(queues, cache, "full")
    assert first.reason == "no cache" and first.queues_read == 10
    check(queues, cache, "incremental", queues_read=0)  # nothing changed: nothing read

    queues.set_wal_position("h1,1,1", "1", wal("h1,1,1", 0), 999)
    check(queues, cache, "incremental", queues_read=1)
    queues.add_wal("h2,1,1", "2", wal("h2,1,1", 7))
    queues.remove_wals_before("h3,1,1", "1", wal("h3,1,1", 1), inclusive=True)
    check(queues, cache, "incremental", queues_read=2)
    queues.add_wal("h9,1,1", "3", wal("h9,1,1", 0))  # a new replicator
    check(queues, cache, "incremental", queues_read=1)
    queues.remove_queue("h4,1,1", "2")
    check(queues, cache, "incremental", queues_read=1)

    # a claim: the dead server's queues move to the claimer; the dead replicator disappears
    claim_queues(zkc, paths, "h0,1,1", "h1,1,1", peers.peer_exists)
    result = check(queues, cache, "incremental")
    assert "h0,1,1" not in result.snapshot.replicators
    assert set(result.snapshot.replicators["h1,1,1"]) == {"1", "2", "1-h0,1,1", "2-h0,1,1"}

    peers.remove_peer("2")  # its queues on every replicator go, journaled
    result = check(queues, cache, "incremental")
    assert all(not q.startswith("2") for qs in result.snapshot.replicators.values() for q in qs)

    queues.remove_queue("h9,1,1", "3")
    assert queues.remove_replicator_if_queue_is_empty("h9,1,1")
    result = check(queues, cache, "incremental")
    assert "h9,1,1" not in result.snapshot.replicators


def test_source_commit_multi_is_journaled(zkc, paths, cache):
    from replication.source.commit import commit_queue
    from replication.source.manifest import QueueResult, WalProgress

    queues = ReplicationQueueStorage(zkc, paths)
    populate(queues, servers=2, peers=("1",))
    snap = check(queues, cache, "full").snapshot
    state = snap.replicators["h0,1,1"]["1"]
    names = list(state.wals)
    result = QueueResult(
        replicator="h0,1,1",
        queue_id="1",
        peer_id="1",
        status="ok",
        wals=[
            WalProgress(names[0], 100, 100, True, state.wals[names[0]].version),
            WalProgress(names[1], 101, 555, False, state.wals[names[1]].version),
        ],
    )
    assert commit_queue(zkc, paths, result).committed
    after = check(queues, cache, "incremental", queues_read=1).snapshot
    assert {w: s.position for w, s in after.replicators["h0,1,1"]["1"].wals.items()} == {
        names[1]: 555,
        names[2]: 102,
    }


def test_untrustworthy_caches_fall_back_to_a_full_read(zkc, paths, cache, tmp_path):
    queues = ReplicationQueueStorage(zkc, paths)
    populate(queues, servers=2)
    check(queues, cache, "full")

    cache.fs.write_atomic(cache.path, b"{not json")
    assert "corrupt cache" in check(queues, cache, "full").reason

    # a replicator node made by a writer that does not journal: the root's cversion does not add up
    zkc.create(paths.replicator("stranger,1,1"), b"")
    assert "without a journal entry" in check(queues, cache, "full").reason

    result = check(queues, cache, "full", now_ms=2**50)
    assert "full read over" in result.reason

    # the same file against a new tree (the parent deleted and built again)
    zkc.delete(paths.parent, recursive=True)
    populate(queues, servers=1)
    assert check(queues, cache, "full").reason == "cache is of another ZooKeeper tree"


def test_a_reader_behind_a_trim_detects_the_gap(zkc, paths, cache, tmp_path):
    fs, root = get_filesystem(str(tmp_path / "status"))
    lagging = SnapshotCache.for_root(fs, root)
    queues = ReplicationQueueStorage(zkc, paths)
    populate(queues, servers=2, peers=("1",), wals=1)
    check(queues, lagging, "full", trim=False)
    check(queues, cache, "full", journal_keep=2)
    for n in range(10):
        queues.set_wal_position("h0,1,1", "1", wal("h0,1,1", 0), 200 + n)
    trimmed = check(queues, cache, "incremental", journal_keep=2)
    assert trimmed.trimmed > 0
    names = zkc.get_children(journal.journal_root(paths))
    assert len(names) == 2
    mark = journal.trimmed_through(zkc.get(journal.journal_root(paths))[0])
    assert mark >= 0 and all(journal.entry_seq(n) > mark for n in names)
    result = check(queues, lagging, "full", trim=False)
    assert "journal trimmed past the cached sequence" in result.reason
    check(queues, lagging, "incremental", queues_read=0, trim=False)


def test_every_queue_change_writes_one_journal_entry_in_its_multi(zkc, paths):
    queues = ReplicationQueueStorage(zkc, paths)
    queues.add_wal("a,1,1", "1", "a%2C1%2C1.5")
    root = journal.journal_root(paths)
    first = sorted(zkc.get_children(root))
    assert [journal.decode(0, zkc.get(f"{root}/{n}")[0]).refs for n in first] == [("a,1,1/1", "a,1,1/")]
    assert journal.decode(0, zkc.get(f"{root}/{first[0]}")[0]).rs_delta == 1  # the replicator node was new
    queues.add_wal("a,1,1", "1", "a%2C1%2C1.5")  # already queued: no change, no entry
    with pytest.raises(Exception, match="no WAL znode"):
        queues.set_wal_position("a,1,1", "1", "missing", 10)  # a failed multi leaves no entry either
    assert sorted(zkc.get_children(root)) == first
    queues.set_wal_position("a,1,1", "1", "a%2C1%2C1.5", 10)
    names = sorted(zkc.get_children(root))
    assert len(names) == 2 and journal.entry_seq(names[1]) > journal.entry_seq(names[0])
    assert zkc.get(f"{root}/{names[1]}")[0] == b"a,1,1/1"
    assert zkc.get(paths.wal("a,1,1", "1", "a%2C1%2C1.5"))[0] == codec.position_to_bytes(10)
