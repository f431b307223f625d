"""Compressed WALs both ways with a real HBase 2.6 started with ``hbase.regionserver.wal.enablecompression``
(tag compression on, HBase's default) and, per run of this module, value compression with one codec
(``hbase.regionserver.wal.value.enablecompression`` + ``hbase.regionserver.wal.value.compression.type``).

1. Every WAL that HBase wrote (a TTL put among the cells: a cell with a tag) reads in hbrep exactly as
   HBase's own WALStreamReader and WALPrettyPrinter read it.
2. A WAL hbrep's writer wrote with the same settings reads in HBase's WALStreamReader and WALPrettyPrinter
   as in hbrep; and one WALPlayer job replays a WAL hbrep wrote with each codec into real HBase tables
   holding the cells written.

One HBase for the module; per codec its region server is stopped and started again on a site file that
names the codec (the master, Thrift and ZooKeeper stay up), and test 1 reads the WALs of that server only.
Test 2 needs HBase's tools and a table, not a region server writing the codec.
"""

from __future__ import annotations

import os
import struct
import time
import uuid
from collections.abc import Iterator

import pytest
from interop.conftest import REAL_HBASE_KEY
from interop.helpers import (
    assert_same_as_hbase,
    assert_same_as_pretty_printer,
    copy_wals,
    hbase_read,
    hbrep_dump,
    mutate,
    pretty_print,
    restart_regionserver,
    wal_workload,
)

from replication.wal.model import Cell, CellType, Entry, WALKey
from replication.wal.reader import open_wal
from replication.wal.value_codecs import ALGORITHMS
from replication.wal.writer import ProtobufLogWriter, WALCompression

pytestmark = pytest.mark.slow

WAL_PLAYER = "org.apache.hadoop.hbase.mapreduce.WALPlayer"
# None: WAL compression with tag compression, values as they are (value compression off, 2.6's default).
# GZ is the default codec; SNAPPY is Hadoop's SnappyCodec (snappy-java), LZ4 Hadoop's Lz4Codec (lz4-java),
# ZSTD HBase's own ZstdCodec (hbase-compression-zstd, zstd-jni). Not here: BZIP2, since HBase 2.6.1 on
# Hadoop 3.3.5 without the native libhadoop cannot write it (BZip2DummyCompressor.finished throws
# UnsupportedOperationException in ValueCompressor.compress: the master's first WAL append fails), and
# LZO, LZMA, BROTLI, which hbrep does not read.
CODECS = [None, "GZ", "SNAPPY", "LZ4", "ZSTD"]
CODEC_CLASSES = {"ZSTD": {"hbase.io.compress.zstd.codec": "org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec"}}


def _codec_site(codec: str | None) -> dict[str, str]:
    """The WAL compression keys of ``codec`` (None: tag compression only, value compression off)."""
    site = {
        "hbase.regionserver.wal.enablecompression": "true",
        "hbase.regionserver.wal.value.enablecompression": "false",
    }
    if codec is not None:
        site |= {
            "hbase.regionserver.wal.value.enablecompression": "true",
            "hbase.regionserver.wal.value.compression.type": codec.lower(),
            **CODEC_CLASSES.get(codec, {}),
        }
    return site


@pytest.fixture(scope="module")
def walc_hbase(request, zk_server, tmp_path_factory) -> Iterator[object]:
    """The module's HBase (one region server), started with tag compression only."""
    from replication.devstack.hbase import RealHBase

    cluster = RealHBase(tmp_path_factory.mktemp("hbase-wal"))
    key = f"127.0.0.1:{zk_server.port}:/hbase-walc-{uuid.uuid4().hex[:8]}"
    cluster.start(key, regionservers=1, extra_site=_codec_site(None))
    request.config.stash[REAL_HBASE_KEY] = cluster  # its logs go into a failing test's report
    try:
        yield cluster
    finally:
        cluster.stop()
        request.config.stash[REAL_HBASE_KEY] = None


@pytest.fixture(scope="module", params=CODECS, ids=lambda c: c or "tags-only")
def compressed_hbase(request, walc_hbase) -> Iterator[tuple[str | None, object]]:
    """The module's HBase with its region server writing WALs with ``codec``: the site file rewritten with
    the codec's keys and the region server stopped and started again (a new server name, new WALs)."""
    from replication.config import write_site_xml
    from replication.devstack.hbase import site_values

    codec, cluster = request.param, walc_hbase
    if codec is not None:
        layout = cluster.layout()
        write_site_xml(cluster.site_file, {**site_values(cluster.root, layout), **_codec_site(codec)})
        cluster.regionserver(1).stop()
        restart_regionserver(cluster, 1)
    yield codec, cluster


def _own_wals(hbase, wals: list) -> list:
    """Those of ``wals`` that the region server now running wrote (its name, start code included)."""
    prefix = hbase.server_name(1).replace(",", "%2C")
    return [w for w in wals if w.name.startswith(prefix)]


def test_compressed_wals_hbase_wrote_read_the_same_in_hbrep(compressed_hbase, tmp_path):
    codec, hbase = compressed_hbase
    table = f"walc_{uuid.uuid4().hex[:8]}"
    hbase.admin("create-table", table, "3", "a:1", "b:0", "c:1")
    mutate(hbase, table, wal_workload("before"))
    assert len(hbase.admin("roll")) == 1
    mutate(hbase, table, wal_workload("after"))

    wals = _own_wals(hbase, copy_wals(hbase.rootdir, tmp_path))  # not the earlier codecs' servers' WALs
    hbase_reads = hbase_read(hbase, wals)
    tagged = cells = 0
    for wal in wals:
        reader = open_wal(str(wal))
        if reader.header is None:
            continue  # a WAL whose header was not written yet
        assert reader.header.has_compression and reader.header.has_tag_compression, wal
        assert reader.header.has_value_compression == (codec is not None), wal
        if codec is not None:
            assert ALGORITHMS[reader.header.value_compression_algorithm] == codec, wal
        entries, summary = hbrep_dump(wal)
        assert_same_as_hbase(entries, summary, hbase_reads[str(wal)], wal)
        printed, _complete = pretty_print(hbase, wal)
        assert_same_as_pretty_printer(entries, printed, wal)
        ours = [c for e in entries if e["table"] == table for c in e["cells"]]
        cells += len(ours)
        tagged += sum(1 for c in ours if c["tags"])
    print(f"{codec or 'tags only'}: {len(wals)} WALs, {cells} cells of the table, {tagged} with tags")
    assert cells >= 20 and tagged >= 2  # both workloads, each with its TTL put (a TTL tag)


def _ttl_tag(ms: int) -> bytes:
    """One TTL tag (type 8, TagType.TTL_TAG_TYPE) of a cell: int16 length, type, int64 milliseconds."""
    return struct.pack(">HBq", 9, 8, ms)


def _entries(rows: int, table: bytes = b"t") -> list[Entry]:
    """Entries of ``table`` in two regions: repeated rows, families and qualifiers (dictionary indexes), TTL
    tags (a day from now: the cells stay visible), empty, binary and large values (a 300 KB one: several
    codec chunks), deletes."""
    regions = [b"%032x" % n for n in (1, 2)]
    now = int(time.time() * 1000) - 60_000
    out = []
    for i in range(rows):
        key = WALKey(regions[i % 2], table, i + 1, 1_700_000_000_000 + i, {b"f": 1, b"g": 1})
        row = b"row%03d" % (i % 17)
        cells = [
            Cell(row, b"f", b"q%d" % (i % 5), now + i, CellType.PUT, b"v%d" % i * (i % 7), _ttl_tag(86_400_000)),
            Cell(row, b"g", b"", now + i, CellType.PUT, b"" if i % 3 else b"\x00\xff" * 40),
        ]
        if i % 10 == 9:
            cells.append(Cell(row, b"f", b"q1", now + i - 5, CellType.DELETE_COLUMN))
        if i == rows // 2:
            cells.append(Cell(b"big", b"f", b"q", 7, CellType.PUT, os.urandom(1000) * 300))
        out.append(Entry(key, cells))
    return out


def _write_wal(wal, entries: list[Entry], codec: str | None) -> None:
    wal.parent.mkdir(parents=True, exist_ok=True)
    with ProtobufLogWriter(str(wal), compression=WALCompression(tags=True, values=codec)) as writer:
        for entry in entries:
            writer.append(entry)
    assert [r.entry for r in open_wal(str(wal))] == entries


def test_compressed_wal_hbrep_wrote_reads_the_same_in_hbase(compressed_hbase, tmp_path):
    codec, hbase = compressed_hbase
    wal = tmp_path / "WALs" / "hbrep" / "hbrep%2C1%2C1.1700000000000"
    _write_wal(wal, _entries(60), codec)

    ours, summary = hbrep_dump(wal)
    assert_same_as_hbase(ours, summary, hbase_read(hbase, [wal])[str(wal)], wal)  # tags included
    printed, complete = pretty_print(hbase, wal)
    assert complete
    assert_same_as_pretty_printer(ours, printed, wal)


def _visible_puts(entries: list[Entry]) -> set[tuple]:
    """(row, family, qualifier, timestamp, value) of every put no delete of the entries covers."""
    cells = [c for e in entries for c in e.cells]
    deletes = [(c.row, c.family, c.qualifier, c.timestamp) for c in cells if c.type == CellType.DELETE_COLUMN]
    return {
        (c.row, c.family, c.qualifier, c.timestamp, c.value)
        for c in cells
        if c.type == CellType.PUT
        and not any(d[:3] == (c.row, c.family, c.qualifier) and d[3] >= c.timestamp for d in deletes)
    }


def test_walplayer_replays_the_wal_hbrep_wrote_with_each_codec(walc_hbase, tmp_path):
    """One WAL per codec (each of its own table), one WALPlayer job over their folder (its input format reads
    each WAL's codec from its header): every table it wrote holds the cells written (a TTL of a day keeps
    them visible). One job, not one per codec: a MapReduce job costs seconds of JVM each."""
    hbase, run = walc_hbase, uuid.uuid4().hex[:8]
    folder = tmp_path / "WALs" / "hbrep"
    written: dict[str, list[Entry]] = {}
    for n, codec in enumerate(CODECS):
        name = (codec or "none").lower()
        written[name] = _entries(60, f"w_{name}_{run}".encode())
        _write_wal(folder / f"hbrep%2C1%2C1.{1_700_000_000_000 + n}", written[name], codec)
    targets = {name: f"played_{name}_{run}" for name in written}
    for target in targets.values():
        hbase.admin("create-table", target, "100", "f:0:100", "g:0:100")
    hbase.run_tool(
        WAL_PLAYER,
        [
            "-Dmapreduce.framework.name=local", f"-Dhadoop.tmp.dir={tmp_path / 'mr'}",
            *(f"-D{key}={value}" for key, value in CODEC_CLASSES["ZSTD"].items()),
            str(folder), ",".join(f"w_{name}_{run}" for name in written), ",".join(targets.values()),
        ],
        heap_mb=512,
        timeout=600,
    )  # fmt: skip
    connection = hbase.happybase_connection()
    try:
        for name, target in targets.items():
            htable = connection.table(target)
            theirs = {
                (row, *column.split(b":", 1), ts, value)
                for row, columns in htable.scan()
                for column in columns
                for value, ts in htable.cells(row, column, versions=100, include_timestamp=True)
            }
            assert theirs == _visible_puts(written[name]), name
    finally:
        connection.close()
