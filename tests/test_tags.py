"""Issue 23: cell tags are kept through a flush and scans, shipped only with KeyValueCodecWithTags (the
default of hbase.replication.rpc.codec; KeyValueCodec strips them, as HBase does), and verify compares
them when asked (--compare-tags). Real region servers, real ship cycles, real Spark."""

from __future__ import annotations

import uuid

import pytest
from support import add_peer, create_table

from replication.checks.verify import VerifyOptions, verify_tables
from replication.fs import get_filesystem
from replication.jobs.launch import runner_for
from replication.source.cycle import run_cycle
from replication.tables.table_files import read_cells
from replication.wal.model import Cell, CellType
from replication.zk.client import connected

pytestmark = pytest.mark.slow

# one tag: int16 length | byte type | value (HBase's Tag layout inside a cell's tags block)
TAGS = b"\x00\x05\x08abcd"
KEY_VALUE_CODEC = "org.apache.hadoop.hbase.codec.KeyValueCodec"


def _tags_of(cluster, table: str) -> dict[bytes, bytes]:
    with cluster.client() as client:
        client.flush(table)
    fs, root = get_filesystem(cluster.root)
    return {cell.row: cell.tags for cell, _ in read_cells(fs, root, table)}


def _ship(pair, spark, **overrides) -> None:
    conf = pair.conf.with_overrides(overrides) if overrides else pair.conf
    with connected(pair.source_key) as zk:
        report = run_cycle(zk, pair.source_key, conf, runner=runner_for(conf, spark))
    assert all(q.status == "ok" for q in report.queues), report.queues


def test_tags_survive_flush_ship_with_tags_and_are_stripped_by_key_value_codec(pair, spark):
    kept, stripped = f"k_{uuid.uuid4().hex[:6]}", f"s_{uuid.uuid4().hex[:6]}"
    for cluster in (pair.source, pair.peer):
        for table in (kept, stripped):
            create_table(cluster, table, ("f", 1))
    add_peer(pair, "3")
    cells = [Cell(b"r%02d" % i, b"f", b"q", 1000 + i, int(CellType.PUT), b"v", TAGS) for i in range(10)]
    with pair.source.client() as client:
        client.batch(kept, cells)
    _ship(pair, spark)  # the default codec: KeyValueCodecWithTags
    with pair.source.client() as client:
        client.batch(stripped, cells)
    _ship(pair, spark, **{"hbase.replication.rpc.codec": KEY_VALUE_CODEC})

    assert set(_tags_of(pair.source, kept).values()) == {TAGS}  # kept through the source's flush
    assert set(_tags_of(pair.source, stripped).values()) == {TAGS}
    assert set(_tags_of(pair.peer, kept).values()) == {TAGS}  # shipped and kept through the peer's flush
    assert set(_tags_of(pair.peer, stripped).values()) == {b""}  # KeyValueCodec shipped none
    assert len(_tags_of(pair.peer, stripped)) == 10

    for table, expected_bad in ((kept, 0), (stripped, 10)):
        plain = verify_tables(spark, pair.source.root, pair.peer.root, table)
        with_tags = verify_tables(spark, pair.source.root, pair.peer.root, table, VerifyOptions(compare_tags=True))
        assert plain.counters["GOODROWS"] == 10 and plain.counters["BADROWS"] == 0
        assert with_tags.counters["BADROWS"] == expected_bad
        assert with_tags.counters["GOODROWS"] == 10 - expected_bad
