"""Delete semantics through the cluster: writes (some in memstore, some flushed) → flush → Spark scan.

Hand-worked expectations (HBase 2.x, KEEP_DELETED_CELLS=false, VERSIONS=3):
- r1: Puts f:a@10,@20,@30; Delete (one version) f:a@20          → versions 30, 10
- r2: Puts f:a@10,@20, f:b@15; DeleteColumn f:a@20              → only f:b@15
- r3: Puts f:a@10, f:b@20, g:c@5; DeleteFamily f@15             → f:b@20 and g:c@5
- r4: Puts f:a@10, f:b@10, f:c@11; DeleteFamilyVersion f@10     → only f:c@11
- r5: Put f:a@10, whole-row delete @50, then Put f:a@40         → nothing (the marker at 50 masks 40 too)
- r6: Put f:a@10 v1, then Put f:a@10 v2 (same timestamp)        → v2 (the later sequence wins)
"""

from __future__ import annotations

import pytest

from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.model import CellType

pytestmark = pytest.mark.slow

EXPECTED = [
    (b"r1", b"f", b"a", 30, b"r1-30"),
    (b"r1", b"f", b"a", 10, b"r1-10"),
    (b"r2", b"f", b"b", 15, b"r2-b"),
    (b"r3", b"f", b"b", 20, b"r3-b"),
    (b"r3", b"g", b"c", 5, b"r3-c"),
    (b"r4", b"f", b"c", 11, b"r4-c"),
    (b"r6", b"f", b"a", 10, b"v2"),
]


def _write(client) -> None:
    put = client.put
    for ts in (10, 20, 30):
        put("t", b"r1", b"f", b"a", b"r1-%d" % ts, ts=ts)
    put("t", b"r2", b"f", b"a", b"x", ts=10)
    put("t", b"r2", b"f", b"a", b"x", ts=20)
    put("t", b"r2", b"f", b"b", b"r2-b", ts=15)
    put("t", b"r3", b"f", b"a", b"x", ts=10)
    put("t", b"r3", b"f", b"b", b"r3-b", ts=20)
    put("t", b"r3", b"g", b"c", b"r3-c", ts=5)
    put("t", b"r4", b"f", b"a", b"x", ts=10)
    put("t", b"r4", b"f", b"b", b"x", ts=10)
    put("t", b"r4", b"f", b"c", b"r4-c", ts=11)
    put("t", b"r5", b"f", b"a", b"x", ts=10)
    put("t", b"r6", b"f", b"a", b"v1", ts=10)
    client.flush("t")  # half of the history in table files, the rest in memstores until the next flush
    client.delete("t", b"r1", b"f", b"a", ts=20, kind=CellType.DELETE)
    client.delete("t", b"r2", b"f", b"a", ts=20)
    client.delete("t", b"r3", b"f", ts=15)
    client.delete("t", b"r4", b"f", ts=10, kind=CellType.DELETE_FAMILY_VERSION)
    client.delete("t", b"r5", ts=50)
    put("t", b"r5", b"f", b"a", b"x", ts=40)
    put("t", b"r6", b"f", b"a", b"v2", ts=10)
    client.flush("t")


def test_all_four_delete_types_through_the_write_path(embedded, spark):
    from replication.tables.spark_views import scan

    TableRegistry(None, embedded.root).create(
        TableDescriptor.of("t", ColumnFamilyDescriptor("f", max_versions=3), ColumnFamilyDescriptor("g"))
    )
    with embedded.client() as client:
        _write(client)
    pure = scan_cells(read_cells(LocalFileSystem(), embedded.root, "t"), versions=3,
                      family_max_versions={b"f": 3, b"g": 1})  # fmt: skip
    assert [(c.row, c.family, c.qualifier, c.timestamp, c.value) for c in pure] == EXPECTED
    rows = scan(spark, embedded.root, "t", versions=3).orderBy("row", "family", "qualifier", "timestamp").collect()
    got = sorted((bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, bytes(r.value)) for r in rows)
    assert got == sorted(EXPECTED)
