"""multiRead through a kazoo session: per-op results, batching, chroot, NoAuth."""

from __future__ import annotations

import pytest
from kazoo.exceptions import NoAuthError, NoNodeError
from kazoo.security import make_digest_acl

from replication.devstack.zookeeper import four_letter_word
from replication.zk.multi_read import Read, _batches, multi_read


def test_results_in_order_with_missing_znodes_in_place(zk):
    zk.ensure_path("/q/a")
    zk.create("/q/a/w1", b"PBUF\x08\x05")
    zk.create("/q/a/w2", b"")
    ops = [Read("data", "/q/a/w1"), Read("children", "/q/a"), Read("data", "/nope"), Read("children", "/nope")]
    ops.append(Read("data", "/q/a/w2"))
    results = multi_read(zk, ops)  # `zk` is chrooted: the paths are relative to its chroot
    assert results[0][0] == b"PBUF\x08\x05" and results[0][1].dataLength == 6
    assert sorted(results[1]) == ["w1", "w2"]
    assert isinstance(results[2], NoNodeError) and isinstance(results[3], NoNodeError)
    assert results[4][0] == b"" and results[4][1].version == 0


def test_many_small_batches_keep_order_and_use_one_packet_each(zk, zk_server):
    zk.ensure_path("/many")
    for n in range(50):
        zk.create(f"/many/n{n:03d}", str(n).encode())
    ops = [Read("data", f"/many/n{n:03d}") for n in range(50)]

    def received() -> int:
        text = four_letter_word("127.0.0.1", zk_server.port, "mntr")
        return int(next(line.split()[1] for line in text.splitlines() if line.startswith("zk_packets_received")))

    before = received()
    results = multi_read(zk, ops, max_ops=7, window=2)
    # 8 batches of at most 7 ops; other tests may share the server, so allow a little noise
    assert received() - before >= 8
    assert [r[0] for r in results] == [str(n).encode() for n in range(50)]


def test_batches_respect_op_count_and_response_estimate():
    ops = [Read("data", f"/p{n}", 1000) for n in range(10)]
    assert [len(b) for b in _batches(ops, max_ops=4, max_bytes=10**9)] == [4, 4, 2]
    sizes = [len(b) for b in _batches(ops, max_ops=100, max_bytes=3 * 1100)]
    assert sum(sizes) == 10 and max(sizes) <= 3
    assert list(_batches([], 10, 10)) == []


def test_denied_read_raises_no_auth(zk):
    acl = [make_digest_acl("owner", "secret", all=True)]
    zk.create("/secret", b"x", acl=acl)
    with pytest.raises(NoAuthError):
        multi_read(zk, [Read("data", "/secret")])
    zk.add_auth("digest", "owner:secret")  # now it may be read
    assert multi_read(zk, [Read("data", "/secret")])[0][0] == b"x"
    zk.delete("/secret")  # the fixture's cleanup client has no credentials
